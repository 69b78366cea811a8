package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// TagPlanScale is the tag of a plan run's --scale ("1" at full size,
// "0.25"), lab.TagScale: `plan run --scale` shrinks durations and data
// sizes, so runs of one plan cell at two scales did unlike work.
const TagPlanScale = "plan.scale"

// sameScale reports whether a and b, runs of one plan cell, ran at the
// same scale: by their TagPlanScale; a run without it (stored before
// dbarena recorded the scale) by its work: the same workload parameters
// (a scaled plan shrinks the data sizes) and measured durations within
// 25% of each other (it shrinks the durations too).
func sameScale(a, b *summary.Run) bool {
	sa, sb := a.Tags[TagPlanScale], b.Tags[TagPlanScale]
	if sa != "" && sb != "" {
		return sa == sb
	}
	pa, _ := json.Marshal(a.Params) // maps marshal with sorted keys
	pb, _ := json.Marshal(b.Params)
	if string(pa) != string(pb) {
		return false
	}
	da, db := a.DurationS, b.DurationS
	if da <= 0 || db <= 0 {
		return da == db
	}
	return math.Max(da, db) <= 1.25*math.Min(da, db)
}

// otherScales returns the plan runs of rep.Runs (oldest first) that ran at
// another scale than the newest session of their plan: comparing them
// would set a quarter-size run's seconds or tps beside full-size ones.
// They stay listed but are left out of cells, statistics, comparisons and
// charts, with a note per plan saying which and how to report them.
// A run is judged against the newest session's complete runs of its own
// cell (by TagPlanScale, or by its work when either lacks it); one whose
// cell the newest session did not complete is judged by TagPlanScale
// alone, and kept when it has none.
func (rep *Report) otherScales() map[*summary.Run]bool {
	newest := map[string]*summary.Run{}
	for _, r := range rep.Runs {
		if r.Plan != nil && r.Plan.Name != "" {
			newest[r.Plan.Name] = r
		}
	}
	type planCell struct{ plan, cell string }
	ref := map[planCell][]*summary.Run{}
	for _, r := range rep.Runs {
		if r.Plan == nil || r.Plan.Name == "" {
			continue
		}
		if r.Status == summary.StatusComplete && r.Tags[tagPlanSession] == newest[r.Plan.Name].Tags[tagPlanSession] {
			k := planCell{r.Plan.Name, r.Plan.Cell}
			ref[k] = append(ref[k], r)
		}
	}
	out := map[*summary.Run]bool{}
	left := map[string][]*summary.Run{}
	for _, r := range rep.Runs {
		if r.Plan == nil || r.Plan.Name == "" {
			continue
		}
		n := newest[r.Plan.Name]
		like := true
		if refs := ref[planCell{r.Plan.Name, r.Plan.Cell}]; len(refs) > 0 {
			like = slices.ContainsFunc(refs, func(x *summary.Run) bool { return sameScale(r, x) })
		} else if s, ns := r.Tags[TagPlanScale], n.Tags[TagPlanScale]; s != "" && ns != "" {
			like = s == ns
		}
		if !like {
			out[r] = true
			left[r.Plan.Name] = append(left[r.Plan.Name], r)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(left)) {
		rs := left[name]
		at := "the newest session's"
		if s := newest[name].Tags[TagPlanScale]; s != "" {
			at += " (scale " + s + ")"
		}
		var scales []string
		tagged := true
		for _, r := range rs {
			s := r.Tags[TagPlanScale]
			tagged = tagged && s != ""
			if s != "" && !slices.Contains(scales, s) {
				scales = append(scales, s)
			}
		}
		if tagged {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%d run(s) of plan %s at scale %s are left out of cells, statistics, comparisons and charts (listed only): "+
				"a report compares the runs of one --scale, %s; report the others with --plan %s --tag %s=%s.",
				len(rs), name, strings.Join(scales, ", "), at, name, TagPlanScale, scales[0]))
			continue
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d run(s) of plan %s of other data sizes or durations than %s (another --scale, stored before dbarena recorded it) "+
			"are left out of cells, statistics, comparisons and charts (listed only): a report compares the runs of one scale; report the others by their IDs.",
			len(rs), name, at))
	}
	return out
}

// tagPlanSession is lab.TagSession.
const tagPlanSession = "plan.session"
