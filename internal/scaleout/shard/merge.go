package shard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Tags a shard's own run carries, so that its sharded run finds it.
const (
	TagRun   = "shard_of"
	TagIndex = "shard"
)

// Reader is the part of the results store Load reads.
type Reader interface {
	ShardRun(ctx context.Context, key string) (*store.ShardRun, error)
	List(ctx context.Context, f store.Filter) ([]store.RunRow, error)
	Run(ctx context.Context, id int64) (*summary.Run, error)
}

// Load reads sharded run key from the store and merges its shards. A
// shard's newest stored run counts (a restarted pod's). The error wraps
// store.ErrNotFound when there is no such sharded run.
func Load(ctx context.Context, st Reader, key string) (*summary.Run, error) {
	br, err := st.ShardRun(ctx, key)
	if err != nil {
		return nil, err
	}
	rows, err := st.List(ctx, store.Filter{Tags: map[string]string{TagRun: key}})
	if err != nil {
		return nil, err
	}
	runs := map[int]*summary.Run{}
	for _, r := range rows { // newest first
		i, err := strconv.Atoi(r.Tags[TagIndex])
		if err != nil || runs[i] != nil || i < 0 || i >= br.Count {
			continue
		}
		run, err := st.Run(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		runs[i] = run
	}
	return Merge(br, runs)
}

// MergeRuns returns runs with the shards' own runs among them (tagged
// TagRun, such as a plan's sharded steps) replaced by their sharded runs,
// merged (Load), each where its first shard was.
func MergeRuns(ctx context.Context, st Reader, runs []*summary.Run) ([]*summary.Run, error) {
	var out []*summary.Run
	seen := map[string]bool{}
	for _, r := range runs {
		key := r.Tags[TagRun]
		switch {
		case key == "":
			out = append(out, r)
		case !seen[key]:
			seen[key] = true
			m, err := Load(ctx, st, key)
			if err != nil {
				return nil, fmt.Errorf("sharded run %s: %w", key, err)
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// merged reports whether a shard's run counts in the merged figures: it
// ran to its end (complete, or degraded by outages of the target).
func merged(status string) bool {
	return status == summary.StatusComplete || status == summary.StatusDegraded
}

// Merge merges the stored runs of a sharded run's shards (by index) into
// one run, as if one machine had done the work: totals summed, latency
// histograms added bucket by bucket (so percentiles are those of every
// event, never averaged), intervals aligned by the common start, and each
// shard's own figures in Shards. Only shards that ran to their end are
// merged; a shard that failed, was interrupted, died (aborted) or never
// stored a run is listed with its status and makes the run degraded
// (failed when none ran to its end; running while one still runs). A
// run whose coordinator stored an error (br.Error) is failed with it.
func Merge(br *store.ShardRun, runs map[int]*summary.Run) (*summary.Run, error) {
	if br == nil || br.Count < 1 {
		return nil, errors.New("merge shards: no sharded run")
	}
	skew := map[int]float64{}
	host := map[int]string{}
	for _, m := range br.Members {
		skew[m.Index], host[m.Index] = m.SkewMS, m.Host
	}
	m := &merger{out: mergedHeader(br, runs), total: hist.New(), types: map[string]*hist.Histogram{},
		typesExact: true, minSkew: math.Inf(1)}
	for i := range br.Count {
		sh := summary.Shard{Index: i, Count: br.Count, Host: host[i], StartSkewMS: skew[i], Status: "missing"}
		if err := m.add(i, runs[i], sh); err != nil {
			return nil, err
		}
	}
	out := m.out
	if len(m.included) > 0 {
		m.totals()
		m.monitor(runs)
	}
	m.setStatus(br, runs)
	note := fmt.Sprintf("merged from %d shards; start skew up to %.1f ms", br.Count, maxSkew(out.Shards))
	exactP95, exactTypes := m.ivs.apply(out.Intervals)
	if !exactP95 {
		note += "; interval p95 is the largest of the shards' (an upper bound: a shard stored no interval histograms)"
	}
	if !exactTypes {
		note += "; interval per-type p90 and max are the largest of the shards' (upper bounds: a shard stored no per-type interval histograms)"
	}
	out.Notes = append(out.Notes, note)
	return out, nil
}

// mergedHeader is the sharded run's identity, taken from a shard that ran
// to its end if any (the same for every shard: workload, target, settings).
func mergedHeader(br *store.ShardRun, runs map[int]*summary.Run) *summary.Run {
	var base *summary.Run
	for i := range br.Count {
		if r := runs[i]; r != nil && (base == nil || merged(r.Status) && !merged(base.Status)) {
			base = r
		}
	}
	out := &summary.Run{Schema: summary.Schema, RunKey: br.Key, Params: map[string]any{}, Tags: map[string]string{}}
	if base != nil {
		out.Workload, out.Target, out.Params = base.Workload, base.Target, base.Params
		out.Sections = base.Sections
		out.Dbarena, out.Plan, out.WarmupS = base.Dbarena, base.Plan, base.WarmupS
		out.Settings = base.Settings // one server: the same for every shard
		out.Host = base.Host
		out.Host.Storage = nil
		for k, v := range base.Tags {
			if k != TagIndex {
				out.Tags[k] = v
			}
		}
	}
	out.Tags[TagRun] = br.Key
	return out
}

// merger adds the shards' runs up into out.
type merger struct {
	out        *summary.Run
	total      *hist.Histogram
	types      map[string]*hist.Histogram
	typesExact bool // every shard with per-type figures stored their histograms
	ivs        intervalHists
	// included ran to their end and are merged; running still run; bad
	// failed, were interrupted, died or never stored a run.
	included, running, bad []int
	minSkew                float64 // the earliest start among included, ms
	end                    float64 // the latest end among included, s from the reference start
}

// add lists shard i, with its run r (nil when it stored none), and merges
// r when it ran to its end.
func (m *merger) add(i int, r *summary.Run, sh summary.Shard) error {
	out := m.out
	if r == nil {
		m.bad = append(m.bad, i)
		out.Shards = append(out.Shards, sh)
		return nil
	}
	totals, lat := r.Totals, r.LatencyMS
	sh.Run, sh.Status, sh.Error, sh.Threads = r.ID, r.Status, r.Error, r.Threads
	sh.DurationS, sh.Totals, sh.TPS, sh.LatencyMS = r.DurationS, &totals, r.Throughput.TPS, &lat
	if sh.Host == "" {
		sh.Host = r.Host.Hostname
	}
	out.Shards = append(out.Shards, sh)
	if out.StartedAt.IsZero() || r.StartedAt.Before(out.StartedAt) {
		out.StartedAt = r.StartedAt
	}
	if r.EndedAt.After(out.EndedAt) {
		out.EndedAt = r.EndedAt
	}
	switch {
	case r.Status == summary.StatusRunning:
		m.running = append(m.running, i)
		return nil
	case !merged(r.Status):
		m.bad = append(m.bad, i)
		return nil
	}
	m.included = append(m.included, i)
	if r.Histogram != "" {
		h, err := hist.Decode(r.Histogram)
		if err != nil {
			return fmt.Errorf("merge shard %d (run %d): %w", i, r.ID, err)
		}
		m.total.Merge(h)
	}
	for name, enc := range r.TypeHistograms {
		h, err := hist.Decode(enc)
		if err != nil {
			return fmt.Errorf("merge shard %d (run %d) %s: %w", i, r.ID, name, err)
		}
		if m.types[name] == nil {
			m.types[name] = hist.New()
		}
		m.types[name].Merge(h)
	}
	if len(r.PerType) > 0 && len(r.TypeHistograms) == 0 {
		m.typesExact = false
	}
	addRun(out, r)
	if err := m.ivs.add(r); err != nil {
		return fmt.Errorf("merge shard %d (run %d): %w", i, r.ID, err)
	}
	m.minSkew = min(m.minSkew, sh.StartSkewMS)
	m.end = max(m.end, sh.StartSkewMS/1000+r.DurationS)
	return nil
}

// totals sets the merged run's duration, rates and latencies.
func (m *merger) totals() {
	out := m.out
	out.DurationS = m.end - m.minSkew/1000
	out.UptimeS = out.DurationS
	if out.DurationS > 0 {
		out.Throughput.TPS = float64(out.Totals.Events) / out.DurationS
		out.Throughput.QPS = float64(out.Totals.Queries.Total) / out.DurationS
	}
	out.LatencyMS = m.total.Latency()
	if s, err := m.total.Encode(); err == nil {
		out.Histogram = s
	}
	for name, t := range out.PerType {
		if h := m.types[name]; h != nil && m.typesExact {
			t.LatencyMS = h.Latency()
		} else {
			t.LatencyMS = summary.Latency{}
		}
		out.PerType[name] = t
	}
	if !m.typesExact {
		out.Notes = append(out.Notes, "per-type latencies are not merged: a shard stored no per-type histograms")
	}
	if out.TpmC != nil && out.DurationS > 0 {
		// tpmC counts New-Orders a minute: the shards' New-Orders
		// (tpmC times minutes) over the merged minutes.
		tpmc := *out.TpmC / out.DurationS
		out.TpmC = &tpmc
	}
}

// setStatus says how the sharded run ended, from its shards' and its
// coordinator's verdicts.
func (m *merger) setStatus(br *store.ShardRun, runs map[int]*summary.Run) {
	out := m.out
	switch {
	case br.Error != "":
		// The coordinator's verdict (a shard stopped answering): the run
		// was stopped, whatever its shards stored.
		out.Status = summary.StatusFailed
		out.Error = br.Error
		if len(m.included) > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("the figures are those of shards %s only", formatInts(m.included)))
		}
	case len(m.running) > 0 && len(m.bad) == 0:
		out.Status = summary.StatusRunning
	case len(m.included) == 0:
		out.Status = summary.StatusFailed
		out.Error = fmt.Sprintf("no shard of %d ran to its end", br.Count)
	case len(m.bad) > 0 || len(m.running) > 0:
		out.Status = summary.StatusDegraded
		var parts []string
		for _, i := range append(slices.Clone(m.bad), m.running...) {
			parts = append(parts, fmt.Sprintf("shard %d %s", i, out.Shards[i].Status))
		}
		out.Notes = append(out.Notes, fmt.Sprintf("%s: the figures are those of shards %s only",
			strings.Join(parts, ", "), formatInts(m.included)))
	default:
		out.Status = summary.StatusComplete
		for _, i := range m.included {
			if runs[i].Status == summary.StatusDegraded {
				out.Status = summary.StatusDegraded
			}
		}
	}
}

// intervalHists merges the shards' interval histograms bucket by bucket,
// by interval, and by interval and transaction type.
type intervalHists struct {
	h     []*hist.Histogram
	types []map[string]*hist.Histogram
	// missing: a shard's interval had events but no histogram;
	// typesMissing: likewise for a type of an interval.
	missing, typesMissing bool
}

func (m *intervalHists) add(r *summary.Run) error {
	for k, iv := range r.Intervals {
		for len(m.h) <= k {
			m.h = append(m.h, hist.New())
			m.types = append(m.types, map[string]*hist.Histogram{})
		}
		for _, name := range slices.Sorted(maps.Keys(iv.PerType)) {
			t := iv.PerType[name]
			if t.Histogram == "" {
				m.typesMissing = m.typesMissing || t.Count > 0
				continue
			}
			h, err := hist.Decode(t.Histogram)
			if err != nil {
				return fmt.Errorf("interval %d %s: %w", k, name, err)
			}
			if m.types[k][name] == nil {
				m.types[k][name] = hist.New()
			}
			m.types[k][name].Merge(h)
		}
		if iv.Histogram == "" {
			m.missing = m.missing || iv.Events > 0
			continue
		}
		h, err := hist.Decode(iv.Histogram)
		if err != nil {
			return fmt.Errorf("interval %d: %w", k, err)
		}
		m.h[k].Merge(h)
	}
	return nil
}

// apply sets the merged intervals' p95, and each type's p90 and max, from
// the merged histograms where every shard stored them; the histograms are
// dropped. It reports whether the p95s and the per-type figures are exact.
func (m *intervalHists) apply(ivs []summary.Interval) (p95, types bool) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for k := range ivs {
		if !m.missing && k < len(m.h) {
			ivs[k].P95MS = ms(m.h[k].Quantile(95))
		}
		ivs[k].Histogram = ""
		for name, t := range ivs[k].PerType {
			if h := m.typeHist(k, name); h != nil && !m.typesMissing {
				t.P90MS, t.MaxMS = ms(h.Quantile(90)), ms(h.Max())
			}
			t.Histogram = ""
			ivs[k].PerType[name] = t
		}
	}
	return !m.missing, !m.typesMissing
}

func (m *intervalHists) typeHist(k int, name string) *hist.Histogram {
	if k >= len(m.types) {
		return nil
	}
	return m.types[k][name]
}

func maxSkew(shards []summary.Shard) float64 {
	m := 0.0
	for _, s := range shards {
		m = max(m, s.StartSkewMS)
	}
	return m
}

// addRun adds r's counts, intervals, per-type counts and notes to out.
func addRun(out *summary.Run, r *summary.Run) {
	out.Threads += r.Threads
	out.Rate += r.Rate
	t, o := &out.Totals, r.Totals
	t.Events += o.Events
	t.Queries.Read += o.Queries.Read
	t.Queries.Write += o.Queries.Write
	t.Queries.Other += o.Queries.Other
	t.Queries.Total += o.Queries.Total
	t.Errors += o.Errors
	t.Retries += o.Retries
	t.Reconnects += o.Reconnects
	t.Late += o.Late
	t.Dropped += o.Dropped
	t.Unfinished += o.Unfinished
	t.Connects += o.Connects
	t.ConnectErrors += o.ConnectErrors
	for code, n := range o.ErrorsByCode {
		if t.ErrorsByCode == nil {
			t.ErrorsByCode = map[string]int64{}
		}
		t.ErrorsByCode[code] += n
	}
	for name, pt := range r.PerType {
		if out.PerType == nil {
			out.PerType = map[string]summary.Type{}
		}
		m := out.PerType[name]
		m.Count += pt.Count
		m.Errors += pt.Errors
		m.Retries += pt.Retries
		m.Late += pt.Late
		out.PerType[name] = m
	}
	if r.TpmC != nil { // summed as tpmC x seconds until Merge divides
		v := *r.TpmC * r.DurationS
		if out.TpmC != nil {
			v += *out.TpmC
		}
		out.TpmC = &v
	}
	for name, v := range r.Figures {
		if strings.HasPrefix(name, "runner.") {
			continue
		}
		if out.Figures == nil {
			out.Figures = map[string]float64{}
		}
		out.Figures[name] += v
	}
	for _, n := range r.Notes {
		if r.Shard != nil {
			n = fmt.Sprintf("shard %d: %s", r.Shard.Index, n)
		}
		if !slices.Contains(out.Notes, n) {
			out.Notes = append(out.Notes, n)
		}
	}
	for k, iv := range r.Intervals {
		if k >= len(out.Intervals) {
			out.Intervals = append(out.Intervals, summary.Interval{})
		}
		addInterval(&out.Intervals[k], iv)
	}
}

// addInterval adds shard interval o to the merged interval m: both end at
// the same offset from the common start, up to the shards' skew.
func addInterval(m *summary.Interval, o summary.Interval) {
	m.TS = max(m.TS, o.TS)
	m.Threads += o.Threads
	m.Events += o.Events
	m.TPS += o.TPS
	m.QPS += o.QPS
	m.ReadQPS += o.ReadQPS
	m.WriteQPS += o.WriteQPS
	m.OtherQPS += o.OtherQPS
	m.P95MS = max(m.P95MS, o.P95MS)
	m.Errors += o.Errors
	m.Reconnects += o.Reconnects
	m.Connects += o.Connects
	m.ConnectErrors += o.ConnectErrors
	m.Late += o.Late
	for _, name := range slices.Sorted(maps.Keys(o.PerType)) {
		if m.PerType == nil {
			m.PerType = map[string]summary.IntervalType{}
		}
		a, b := m.PerType[name], o.PerType[name]
		a.Count += b.Count
		a.Late += b.Late
		a.Errors += b.Errors
		a.Retries += b.Retries
		a.P90MS = max(a.P90MS, b.P90MS)
		a.MaxMS = max(a.MaxMS, b.MaxMS)
		m.PerType[name] = a
	}
}

// monitor gives the merged run the shards' monitor section and its
// bottleneck verdict (monitor.MergeShards), or, when the shards were
// monitored, a note saying why not.
func (m *merger) monitor(runs map[int]*summary.Run) {
	inc := make([]*summary.Run, 0, len(m.included))
	for _, i := range m.included {
		inc = append(inc, runs[i])
	}
	var why string
	m.out.Monitor, m.out.Bottleneck, why = monitor.MergeShards(inc, m.out)
	monitored := slices.ContainsFunc(inc, func(r *summary.Run) bool { return r.Monitor != nil })
	if m.out.Monitor == nil && monitored && why != "" { // not with --monitor none
		m.out.Notes = append(m.out.Notes, "no bottleneck verdict: "+why)
	}
}
