package stats

import (
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

func TestDescribeCell(t *testing.T) {
	var runs, base []*summary.Run
	for i, tps := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		r := &summary.Run{Throughput: summary.Throughput{TPS: tps, QPS: 20 * tps}, DurationS: 10}
		r.LatencyMS.P95, r.Totals.Errors = 100/tps, int64(i)
		runs = append(runs, r)
		base = append(base, &summary.Run{Throughput: summary.Throughput{TPS: tps / 2}})
	}
	c := DescribeCell(runs)
	if c.TPS.N != 8 || !near(c.TPS.Mean, 5, 1e-12) || !near(c.TPS.CILow, 5-1.78776, 1e-4) || !near(c.QPS.Mean, 100, 1e-9) {
		t.Fatalf("cell %+v", c)
	}
	if want := Describe([]float64{50, 25, 25, 25, 20, 20, 100.0 / 7, 100.0 / 9}); c.P95MS != want {
		t.Errorf("p95 %+v, want %+v", c.P95MS, want)
	}
	if r := TPS.Relative(runs, base); !near(r.Value, 2, 1e-12) || !r.Significant {
		t.Errorf("relative %+v, want 2x and significant", r)
	}
	if e := ErrorsPerS.Describe(runs); !near(e.Mean, 0.35, 1e-12) {
		t.Errorf("errors/s %+v, want mean 0.35", e)
	}
	if !LatencyP95.LowerIsBetter || TPS.LowerIsBetter || TpmC.Of(runs[0]) != 0 {
		t.Error("figure metadata")
	}
}
