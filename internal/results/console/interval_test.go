package console

import (
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestFormatInterval(t *testing.T) {
	iv := runner.Interval{Start: 0, End: 2 * time.Second, Threads: 4, Events: 200,
		Queries: workload.Queries{Read: 2800, Write: 800, Other: 400}, P95: 12500 * time.Microsecond, Errors: 2}
	got := Interval(iv, 0)
	want := "[ 2s ] thds: 4 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 12.50 err/s: 1.00 reconn/s: 0.00"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	warm := runner.Interval{Start: -5 * time.Second, End: -4 * time.Second, Warmup: true, Threads: 1}
	if got := Interval(warm, 5*time.Second); !strings.HasPrefix(got, "[ 1s warmup ]") {
		t.Fatalf("warm-up line: %q", got)
	}
	rate := runner.Interval{Start: 0, End: time.Second, Late: 3, Dropped: 1}
	if got := Interval(rate, 0); !strings.HasSuffix(got, "late: 3 dropped: 1") {
		t.Fatalf("rate line: %q", got)
	}
}
