package plan

import (
	"maps"
	"slices"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// CellStats summarises one cell across its rounds.
type CellStats struct {
	Cell   string            `json:"cell"`
	Coords map[string]string `json:"coords"`
	// Runs counts complete rounds; Failed the failed or interrupted ones.
	Runs   int `json:"runs"`
	Failed int `json:"failed"`
	// TPS, P95 and P99 (ms) are over the complete rounds.
	TPS stats.Summary `json:"tps"`
	P95 stats.Summary `json:"p95_ms"`
	P99 stats.Summary `json:"p99_ms"`
	// WarmupS is the mean warm-up actually used, in seconds.
	WarmupS float64 `json:"warmup_s"`
	// Noisy is set when the throughput's CV exceeds the plan's threshold.
	Noisy bool `json:"noisy"`
	// Baseline is the cell this one is compared with; "" for a baseline
	// cell or when the baseline has no complete run.
	Baseline string `json:"baseline,omitempty"`
	// Relative is the throughput relative to Baseline.
	Relative *stats.Ratio `json:"relative,omitempty"`
	// Error is the last failed round's error.
	Error string `json:"error,omitempty"`
}

// IsBaseline reports whether the cell's coordinates match every baseline
// coordinate.
func IsBaseline(coords map[string]string, baseline []Param) bool {
	if len(baseline) == 0 {
		return false
	}
	for _, b := range baseline {
		if coords[b.Key] != b.Value {
			return false
		}
	}
	return true
}

// Summarise groups a plan's runs by cell (first-seen order) and describes
// each cell across rounds (stats.DescribeCell). A cell's baseline is the
// cell with the same coordinates except those named in baseline
// (BaselinePairs); its relative throughput is
// significant when the ratio's 95% interval excludes 1.0. A cell whose
// throughput CV exceeds noisyCV is flagged noisy.
func Summarise(runs []*summary.Run, baseline []Param, noisyCV float64) []CellStats {
	type acc struct {
		st   *CellStats
		runs []*summary.Run // complete rounds
		warm float64
	}
	byCell := map[string]*acc{}
	var order []string
	for _, r := range runs {
		if r.Plan == nil {
			continue
		}
		a := byCell[r.Plan.Cell]
		if a == nil {
			a = &acc{st: &CellStats{Cell: r.Plan.Cell, Coords: r.Plan.Coords}}
			byCell[r.Plan.Cell] = a
			order = append(order, r.Plan.Cell)
		}
		if r.Status != summary.StatusComplete {
			a.st.Failed++
			if r.Error != "" {
				a.st.Error = r.Error
			}
			continue
		}
		a.st.Runs++
		a.runs = append(a.runs, r)
		a.warm += r.WarmupS
	}
	rel := map[string]BaselinePair{}
	for _, p := range BaselinePairs(runs, baseline) {
		rel[p.Cell] = p
	}
	out := make([]CellStats, 0, len(order))
	for _, id := range order {
		a := byCell[id]
		st := a.st
		c := stats.DescribeCell(a.runs)
		st.TPS, st.P95, st.P99 = c.TPS, c.P95MS, c.P99MS
		if st.Runs > 0 {
			st.WarmupS = a.warm / float64(st.Runs)
		}
		st.Noisy = st.TPS.Noisy(noisyCV)
		if p, ok := rel[id]; ok {
			r := stats.TPS.Relative(p.Runs, p.Base)
			st.Baseline, st.Relative = p.Baseline, &r
		}
		out = append(out, *st)
	}
	return out
}

// orderedKeys returns the map's keys sorted, for a stable key.
func orderedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// BaselinePair is a cell's complete rounds beside those of its baseline
// cell (as Summarise pairs them).
type BaselinePair struct {
	Cell, Baseline string
	Runs, Base     []*summary.Run
}

// BaselinePairs pairs each cell that is not a baseline cell with its
// baseline cell, in first-seen order, each with its complete rounds; a
// cell whose baseline has no complete round (or that has none) is left out.
func BaselinePairs(runs []*summary.Run, baseline []Param) []BaselinePair {
	var order []string
	coords := map[string]map[string]string{}
	complete := map[string][]*summary.Run{}
	for _, r := range runs {
		if r.Plan == nil {
			continue
		}
		if _, seen := coords[r.Plan.Cell]; !seen {
			coords[r.Plan.Cell] = r.Plan.Coords
			order = append(order, r.Plan.Cell)
		}
		if r.Status == summary.StatusComplete {
			complete[r.Plan.Cell] = append(complete[r.Plan.Cell], r)
		}
	}
	// A cell is compared with the baseline cell whose coordinates are the
	// same but for the baseline's keys.
	key := func(c map[string]string) string {
		s := ""
		for _, k := range orderedKeys(c) {
			v := c[k]
			for _, b := range baseline {
				if b.Key == k {
					v = "*"
				}
			}
			s += k + "=" + v + ","
		}
		return s
	}
	baseOf := map[string]string{}
	for _, id := range order {
		if IsBaseline(coords[id], baseline) {
			baseOf[key(coords[id])] = id
		}
	}
	var out []BaselinePair
	for _, id := range order {
		b, ok := baseOf[key(coords[id])]
		if !ok || b == id || len(complete[id]) == 0 || len(complete[b]) == 0 {
			continue
		}
		out = append(out, BaselinePair{Cell: id, Baseline: b, Runs: complete[id], Base: complete[b]})
	}
	return out
}
