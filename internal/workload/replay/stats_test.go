package replay

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// TestManyFingerprints: 5000 fingerprints on 8 slots keep small figures
// (the per-fingerprint histograms are compact), and every one reaches
// per_type with its text and examples.
func TestManyFingerprints(t *testing.T) {
	const nfp, slots = 5000, 8
	b := &builder{flavor: "mysql"}
	for i := range nfp {
		b.add("s", int64(i), capture.KindQuery, fmt.Sprintf("SELECT c%d FROM t WHERE id = %d", i, i))
	}
	c, err := Load(b.file(t))
	if err != nil {
		t.Fatal(err)
	}
	wl := New().(*Workload)
	wl.SetCapture(c)
	wl.SetThreads(slots)
	wl.BeginMeasure()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for s := range slots {
		st := wl.stats[s]
		for i := range c.Sessions[0].events {
			e := &c.Sessions[0].events[i]
			for k := range 10 {
				st.record(e, time.Duration(100+k*37*(s+1))*time.Microsecond, "", 1)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / nfp / slots
	t.Logf("%.0f bytes per fingerprint per slot", per)
	if per > 2048 {
		t.Errorf("%.0f bytes per fingerprint per slot", per)
	}
	run := &summary.Run{}
	wl.Summarize(run)
	if want := []string{summary.SectionSiege, summary.SectionFingerprints}; fmt.Sprint(run.Sections) != fmt.Sprint(want) {
		t.Errorf("sections %q, want %q", run.Sections, want)
	}
	if len(run.PerType) != nfp {
		t.Fatalf("%d fingerprints in per_type", len(run.PerType))
	}
	for _, ty := range run.PerType {
		if ty.Count != 10*slots || !strings.HasPrefix(ty.Text, "select c") || len(ty.Examples) != 1 || ty.Histogram == "" {
			t.Fatalf("%+v", ty)
		}
	}
}

// TestIntervalLag: the interval line shows the lag of the statements that
// started in it.
func TestIntervalLag(t *testing.T) {
	wl := &Workload{speed: 1}
	origin := time.Now()
	wl.lag.origin = origin
	for i := range 100 {
		wl.lag.record(time.Duration(i)*100*time.Microsecond, origin.Add(1500*time.Millisecond)) // second 1: up to 9.9 ms
	}
	wl.lag.record(50*time.Millisecond, origin.Add(2500*time.Millisecond)) // second 2
	line := wl.FormatInterval(workload.IntervalReport{Start: time.Second, End: 2 * time.Second, Threads: 3,
		Queries: workload.Queries{Read: 100}, Late: 90})
	if !strings.Contains(line, "stmts/s: 100.00") || !strings.Contains(line, "late: 90 lag (ms,p99|max): 9.9|9.9") {
		t.Errorf("interval line %q", line)
	}
	line = wl.FormatInterval(workload.IntervalReport{Start: 2 * time.Second, End: 3 * time.Second})
	if !strings.Contains(line, "lag (ms,p99|max): 50.0|50.0") {
		t.Errorf("interval line %q", line)
	}
}
