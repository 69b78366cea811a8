package gate

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

func TestParseLimits(t *testing.T) {
	ls, err := ParseLimits("tps:-5%, p95:+10%,qps:3%,p99:2.5%")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		pct  float64
	}{{"tps", -5}, {"latency p95 ms", 10}, {"qps", -3}, {"latency p99 ms", 2.5}}
	for i, w := range want {
		if ls[i].Figure.Name != w.name || ls[i].Percent != w.pct {
			t.Errorf("limit %d = %s %g, want %s %g", i, ls[i].Figure.Name, ls[i].Percent, w.name, w.pct)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty item"}, {"tps", "NAME:PERCENT%"}, {"tpz:-5%", "unknown figure"},
		{"tps:-5", "percentage"}, {"tps:x%", "not a number"}, {"tps:0%", "not be 0%"},
		{"tps:-100%", "cannot drop"}, {"tps:-5%,", "empty item"}, {"tps:NaN%", "not a number"},
	} {
		_, err := ParseLimits(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseLimits(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func runs(tps ...float64) []*summary.Run {
	var out []*summary.Run
	for _, v := range tps {
		out = append(out, &summary.Run{Throughput: summary.Throughput{TPS: v}, LatencyMS: summary.Latency{P95: 1000 / v}})
	}
	return out
}

func TestJudge(t *testing.T) {
	ls, _ := ParseLimits("tps:-10%,p95:+10%")
	tps, p95 := ls[0], ls[1]
	base := runs(1000, 1010, 990)
	for _, c := range []struct {
		name    string
		l       Limit
		a, b    []*summary.Run
		verdict string
	}{
		{"30% slower, tight", tps, base, runs(700, 705, 695), Fail},
		{"30% slower, p95", p95, base, runs(700, 705, 695), Fail},
		{"equal", tps, base, runs(1005, 995, 1000), Pass},
		{"5% slower: below the limit", tps, base, runs(950, 955, 945), Pass},
		// A 30% mean drop with an interval reaching past -10%: not proven.
		{"30% slower, noisy", tps, base, runs(300, 1100, 700), Pass},
		{"faster", tps, base, runs(2000, 2010, 1990), Pass},
		{"single runs", tps, runs(1000), runs(500), CannotJudge},
		{"single B", tps, base, runs(500), CannotJudge},
	} {
		j := Judge(c.l, c.a, c.b)
		if j.Verdict != c.verdict {
			t.Errorf("%s: %s, want %s", c.name, j.Line(), c.verdict)
		}
	}
	j := Judge(tps, runs(1000), runs(500))
	if !strings.Contains(j.Line(), "CANNOT JUDGE tps:-10%: tps -50.0%") || !strings.Contains(j.Line(), "single runs") {
		t.Errorf("line %q", j.Line())
	}
}
