package stats

import "github.com/dbarena/dbarena/internal/results/summary"

// Figure is one measurement of a run that cells, plans and comparisons
// summarise across a configuration's rounds.
type Figure struct {
	// Name labels the figure in a comparison ("tps", "latency p95 ms").
	Name string
	// LowerIsBetter is set for latencies, error rates and reconnects.
	LowerIsBetter bool
	// Of reads the figure from a run.
	Of func(*summary.Run) float64
}

// The figures of a run that cells and comparisons summarise.
var (
	TPS         = Figure{Name: "tps", Of: func(r *summary.Run) float64 { return r.Throughput.TPS }}
	QPS         = Figure{Name: "qps", Of: func(r *summary.Run) float64 { return r.Throughput.QPS }}
	LatencyAvg  = Figure{Name: "latency avg ms", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return r.LatencyMS.Avg }}
	LatencyP50  = Figure{Name: "latency p50 ms", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return r.LatencyMS.P50 }}
	LatencyP95  = Figure{Name: "latency p95 ms", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return r.LatencyMS.P95 }}
	LatencyP99  = Figure{Name: "latency p99 ms", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return r.LatencyMS.P99 }}
	LatencyMax  = Figure{Name: "latency max ms", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return r.LatencyMS.Max }}
	ErrorsPerS  = Figure{Name: "errors/s", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return perSecond(r.Totals.Errors, r.DurationS) }}
	RetriesPerS = Figure{Name: "retries/s", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return perSecond(r.Totals.Retries, r.DurationS) }}
	Reconnects  = Figure{Name: "reconnects", LowerIsBetter: true, Of: func(r *summary.Run) float64 { return float64(r.Totals.Reconnects) }}
	// TpmC is 0 for a run without one (Run.TpmC nil).
	TpmC = Figure{Name: "tpmC", Of: func(r *summary.Run) float64 {
		if r.TpmC == nil {
			return 0
		}
		return *r.TpmC
	}}
)

// CompareFigures are the figures `dbarena compare` sets side by side, in
// order (TpmC is added when both sides have one).
var CompareFigures = []Figure{TPS, QPS, LatencyAvg, LatencyP50, LatencyP95, LatencyP99, LatencyMax, ErrorsPerS, RetriesPerS, Reconnects}

func perSecond(n int64, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}

// Values returns the figure of each run, in order.
func (f Figure) Values(runs []*summary.Run) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f.Of(r)
	}
	return out
}

// Describe summarises the figure over runs (the rounds of one cell).
func (f Figure) Describe(runs []*summary.Run) Summary { return Describe(f.Values(runs)) }

// Relative compares the figure over runs with the figure over the
// baseline's rounds base.
func (f Figure) Relative(runs, base []*summary.Run) Ratio {
	return Relative(f.Values(runs), f.Values(base))
}

// Cell is the statistics of one cell (the rounds of one configuration)
// that plans and reports show: means with 95% confidence intervals.
type Cell struct {
	TPS, QPS, AvgMS, P95MS, P99MS Summary
}

// DescribeCell summarises a cell's rounds. It is the one place plans
// (`dbarena plan`'s table) and reports compute cell statistics.
func DescribeCell(runs []*summary.Run) Cell {
	return Cell{TPS: TPS.Describe(runs), QPS: QPS.Describe(runs), AvgMS: LatencyAvg.Describe(runs),
		P95MS: LatencyP95.Describe(runs), P99MS: LatencyP99.Describe(runs)}
}
