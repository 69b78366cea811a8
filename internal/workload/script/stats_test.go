package script

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// Per-statement figures: latency percentiles, errors by code, and the
// warm-up left out.
func TestStatementFigures(t *testing.T) {
	wl := setup(t, "--builtin", "select-only")
	a, b := wl.stats.newWorker(nil), wl.stats.newWorker(nil)
	a.record(1, time.Hour, "") // warm-up
	wl.BeginMeasure()
	for i := 1; i <= 100; i++ {
		w := a
		if i%2 == 0 {
			w = b
		}
		w.record(1, time.Duration(i)*time.Millisecond, "")
	}
	b.record(1, 0, "40001")
	run := &summary.Run{}
	wl.Summarize(run)
	k := "stmt.select-only:2."
	near := func(name string, want float64) {
		t.Helper()
		if got := run.Figures[k+name]; math.Abs(got-want) > want*0.01 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("count", 100)
	near("p95_ms", 95)
	near("p99_ms", 99)
	near("p50_ms", 50)
	near("max_ms", 100)
	near("mean_ms", 50.5)
	near("errors", 1)
	near("errors.40001", 1)
	if out := wl.FormatSummary(run); !strings.Contains(out, "40001=1") {
		t.Errorf("summary lacks the error code:\n%s", out)
	}
	// Beyond a worker's buffer: flushed into the shared histograms as it
	// fills, the rest at the end; nothing of the last run is left.
	for i := 0; i < 3*flushAt+1; i++ {
		a.record(1, 7*time.Millisecond, "")
	}
	run = &summary.Run{}
	wl.Summarize(run)
	if got := run.Figures[k+"count"]; got != 3*flushAt+1 {
		t.Errorf("count = %v, want %d", got, 3*flushAt+1)
	}
	near("max_ms", 7)
	near("p50_ms", 7)
	near("errors", 0)
}

// The workers of one poller group share their figures; any other worker
// has its own; every one counts.
func TestStatsPerGroup(t *testing.T) {
	wl := setup(t, "--builtin", "select-only")
	g1, err := poller.New()
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	g2, err := poller.New()
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	a, b, c := wl.stats.newWorker(g1), wl.stats.newWorker(g1), wl.stats.newWorker(g2)
	d, e := wl.stats.newWorker(nil), wl.stats.newWorker(nil)
	if a != b || a == c || d == e || d == a {
		t.Fatalf("shared: a==b %v, a==c %v, d==e %v, d==a %v; want true, false, false, false", a == b, a == c, d == e, d == a)
	}
	for _, w := range []*workerStats{a, b, c, d, e} {
		w.record(1, time.Millisecond, "")
	}
	run := &summary.Run{}
	wl.Summarize(run)
	if got := run.Figures["stmt.select-only:2.count"]; got != 5 {
		t.Errorf("count = %v, want 5", got)
	}
}
