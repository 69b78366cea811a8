package tpcc

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

func parsed(t *testing.T, args ...string) *Workload {
	t.Helper()
	wl := New()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	return wl
}

// TestLimits: tpcc-mysql's shape counts late in its milliseconds, the
// batched one in the specification's seconds; -0..-4 set milliseconds.
func TestLimits(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		args []string
		want [5]time.Duration
	}{
		{nil, [5]time.Duration{5 * ms, 5 * ms, 5 * ms, 80 * ms, 20 * ms}},
		{[]string{"--shape", "batched"}, specLimits},
		{[]string{"-0", "100", "--rt-limit4", "7"}, [5]time.Duration{100 * ms, 5 * ms, 5 * ms, 80 * ms, 7 * ms}},
		{[]string{"--shape", "batched", "-3", "2000"}, [5]time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, 2 * time.Second, 20 * time.Second}},
	} {
		wl := parsed(t, tc.args...)
		lim := wl.ResponseLimits()
		for i, typ := range txTypes {
			if lim[typ] != tc.want[i] {
				t.Errorf("%q: %s limit %v, want %v", tc.args, typ, lim[typ], tc.want[i])
			}
		}
	}
}

// TestTpccMySQLOutput: the interval lines and the final report are
// tpcc_start's, with MEASURING START once per round, after the warm-up.
func TestTpccMySQLOutput(t *testing.T) {
	wl := parsed(t)
	ms := time.Millisecond
	iv := func(end time.Duration, warm bool) workload.IntervalReport {
		return workload.IntervalReport{End: end, Warmup: warm, PerType: map[string]workload.TypeInterval{
			NewOrder:    {Count: 80, P95: 10100 * time.Microsecond, P99: 15300 * time.Microsecond, Max: 20 * ms},
			Payment:     {Count: 81, Max: 12 * ms},
			OrderStatus: {Count: 8, Max: 3 * ms},
			Delivery:    {Count: 8, Max: 40 * ms},
			StockLevel:  {Count: 7, Max: 30 * ms},
		}}
	}
	if got := wl.IntervalHeader(); strings.Contains(got, "MEASURING") {
		t.Errorf("header %q", got)
	}
	if got := wl.FormatInterval(iv(0, true)); strings.Contains(got, "MEASURING") || !strings.HasPrefix(got, "RAMP-UP") {
		t.Errorf("warm-up line %q", got)
	}
	want := "  10, trx: 80, 95%: 10.100, 99%: 15.300, max_rt: 20.000, 81|12.000, 8|3.000, 8|40.000, 7|30.000"
	if got := wl.FormatInterval(iv(10*time.Second, false)); got != "\nMEASURING START.\n\n"+want {
		t.Errorf("first measured line:\n%q\nwant\n%q", got, "\nMEASURING START.\n\n"+want)
	}
	if got := wl.FormatInterval(iv(10*time.Second, false)); got != want {
		t.Errorf("second measured line %q", got)
	}
	if got := wl.EndIntervals(); got != "\nSTOPPING THREADS\n" {
		t.Errorf("end %q", got)
	}

	tpmc := 4800.0
	run := &summary.Run{DurationS: 60, TpmC: &tpmc, PerType: map[string]summary.Type{}}
	for _, typ := range txTypes {
		run.PerType[typ] = summary.Type{Count: 100, Late: 10, Retries: 2, Errors: 1, LatencyMS: summary.Latency{Avg: 4.25}}
	}
	wl.Summarize(run)
	if !strings.HasPrefix(wl.FormatInterval(iv(10*time.Second, false)), "\nMEASURING START.") {
		t.Error("the next round has no MEASURING START")
	}
	rep := wl.FormatSummary(run)
	for _, want := range []string{
		"<Raw Results>\n  [0] sc:90 lt:10  rt:2  fl:1 avg_rt: 4.2 (5)\n",
		"  [3] sc:90 lt:10  rt:2  fl:1 avg_rt: 4.2 (80)\n",
		" in 60 sec.\n",
		"<Raw Results2(sum ver.)>\n  [0] sc:90  lt:10  rt:2  fl:1 \n",
		"<Constraint Check> (all must be [OK])\n [transaction percentage]\n        Payment: 20.00% (>=43.0%) [NG] *\n",
		"   Order-Status: 20.00% (>= 4.0%) [OK]\n",
		" [response time (at least 90% passed)]\n      New-Order: 90.00%  [OK]\n",
		"<TpmC>\n                 100.000 TpmC\n", // 100 New-Orders in 60 s
		"statement shape: tpcc-mysql",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}
