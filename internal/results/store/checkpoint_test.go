package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// sameRun fails the test when got and want differ once both are in their
// JSON form.
func sameRun(t *testing.T, what string, got, want *summary.Run) {
	t.Helper()
	gb, _ := json.MarshalIndent(got, "", " ")
	wb, _ := json.MarshalIndent(jsonRoundTrip(t, want), "", " ")
	if string(gb) != string(wb) {
		t.Errorf("%s differs\ngot:  %s\nwant: %s", what, gb, wb)
	}
}

// checkpointIntervals returns n intervals starting at TS first+1, with
// per-type figures, and as many monitor samples.
func checkpointIntervals(first, n int) ([]summary.Interval, []summary.Sample) {
	var (
		ivs     []summary.Interval
		samples []summary.Sample
	)
	for k := first; k < first+n; k++ {
		ts := float64(k + 1)
		ivs = append(ivs, summary.Interval{TS: ts, Threads: 4, TPS: 100 + ts, QPS: 1000, P95MS: 3.5, Late: 1,
			PerType: map[string]summary.IntervalType{"payment": {Count: 10, Late: 1, P90MS: 2.5, MaxMS: 7}}})
		samples = append(samples, summary.Sample{TS: ts, Values: map[string]float64{"host.cpu.user": 50 + ts}})
	}
	return ivs, samples
}

func mustRun(t *testing.T, s *Store, id int64) *summary.Run {
	t.Helper()
	r, err := s.Run(context.Background(), id)
	if err != nil {
		t.Fatalf("Run(%d): %v", id, err)
	}
	return r
}

func listStatus(t *testing.T, s *Store, id int64) string {
	t.Helper()
	rows, err := s.List(context.Background(), Filter{IDs: []int64{id}})
	if err != nil || len(rows) != 1 {
		t.Fatalf("List(%d) = %v, %v", id, rows, err)
	}
	return rows[0].Status
}

func TestCheckpointedRun(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		earlier := save(t, s, testRun(9, 3))

		// BeginRun: parameters only, status running whatever run says.
		begin := testRun(0, 0)
		begin.Totals, begin.Throughput, begin.LatencyMS, begin.PerType, begin.Histogram = summary.Totals{}, summary.Throughput{}, summary.Latency{}, nil, ""
		begin.Monitor = &summary.Monitor{Note: "server counters only"}
		begin.Plan = &summary.PlanRef{Name: "sweep", Cell: "c1", Round: 1}
		id, err := s.BeginRun(ctx, begin)
		if err != nil {
			t.Fatal(err)
		}
		if begin.ID != id || begin.Status != summary.StatusComplete {
			t.Errorf("BeginRun set ID %d (want %d), status %q (want unchanged)", begin.ID, id, begin.Status)
		}
		want := *begin
		want.Status = summary.StatusRunning
		sameRun(t, "run after BeginRun", mustRun(t, s, id), &want)
		if st := listStatus(t, s, id); st != summary.StatusRunning {
			t.Errorf("List status = %q, want running", st)
		}

		// Two appends, then a checkpoint with the figures so far.
		ivs1, sm1 := checkpointIntervals(0, 2)
		ivs2, sm2 := checkpointIntervals(2, 1)
		if err := s.AppendIntervals(ctx, id, ivs1, sm1); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendIntervals(ctx, id, ivs2, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendIntervals(ctx, id, nil, sm2); err != nil {
			t.Fatal(err)
		}
		so := testRun(0, 0)
		so.Monitor = &summary.Monitor{Note: "server counters only", Avg: map[string]float64{"host.cpu.user": 52}}
		so.Plan = begin.Plan
		so.Intervals = []summary.Interval{{TS: 99}} // ignored: appended ones are kept
		if err := s.Checkpoint(ctx, id, so); err != nil {
			t.Fatal(err)
		}
		want = *so
		want.ID, want.Status = id, summary.StatusRunning
		want.Intervals = append(append([]summary.Interval(nil), ivs1...), ivs2...)
		want.Monitor = &summary.Monitor{Note: so.Monitor.Note, Avg: so.Monitor.Avg, Samples: append(append([]summary.Sample(nil), sm1...), sm2...)}
		sameRun(t, "run after checkpoint", mustRun(t, s, id), &want)
		if rows, err := s.List(ctx, Filter{Plan: "sweep"}); err != nil || len(rows) != 1 || rows[0].ID != id || rows[0].TPS != so.Throughput.TPS {
			t.Errorf("List(plan) = %+v, %v; want the checkpointed run", rows, err)
		}

		// FinishRun without intervals keeps the appended ones.
		final := testRun(0, 0)
		final.Intervals = nil
		final.Status = summary.StatusDegraded
		final.Outages = []summary.Outage{{StartS: 1, EndS: 2, Recovered: true}}
		if err := s.FinishRun(ctx, id, final); err != nil {
			t.Fatal(err)
		}
		want = *final
		want.ID = id
		want.Intervals = append(append([]summary.Interval(nil), ivs1...), ivs2...)
		want.Monitor = &summary.Monitor{Samples: append(append([]summary.Sample(nil), sm1...), sm2...)}
		sameRun(t, "finished run", mustRun(t, s, id), &want)
		if st := listStatus(t, s, id); st != summary.StatusDegraded {
			t.Errorf("List status = %q, want degraded", st)
		}

		// A finished run takes no more writes.
		for name, err := range map[string]error{
			"append":     s.AppendIntervals(ctx, id, ivs1, nil),
			"checkpoint": s.Checkpoint(ctx, id, so),
			"finish":     s.FinishRun(ctx, id, final),
		} {
			if err == nil || !strings.Contains(err.Error(), "no longer running") {
				t.Errorf("%s after FinishRun = %v, want 'no longer running'", name, err)
			}
		}
		if err := s.AppendIntervals(ctx, 1<<40, ivs1, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("append to a missing run = %v, want ErrNotFound", err)
		}

		// FinishRun with intervals replaces the appended ones.
		id2, err := s.BeginRun(ctx, testRun(1, 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendIntervals(ctx, id2, ivs1, sm1); err != nil {
			t.Fatal(err)
		}
		final2 := testRun(1, 5)
		if err := s.FinishRun(ctx, id2, final2); err != nil {
			t.Fatal(err)
		}
		want = *final2
		want.ID = id2
		want.Monitor = &summary.Monitor{Samples: sm1}
		sameRun(t, "run finished with its own intervals", mustRun(t, s, id2), &want)

		sameRun(t, "earlier run", mustRun(t, s, earlier), func() *summary.Run { r := testRun(9, 3); r.ID = earlier; return r }())
	})
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return int64(cmd.Process.Pid)
}

func TestAbortedRun(t *testing.T) {
	if _, err := processStart(int64(os.Getpid())); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	old := formatTime(time.Now().Add(-staleAfter - time.Minute))
	recent := formatTime(time.Now().Add(-time.Minute))
	self := currentOwner()
	tests := []struct {
		name    string
		set     string
		args    []any
		aborted bool
	}{
		{"this process", "", nil, false},
		{"pid gone", "owner_pid = ?", []any{deadPID(t)}, true},
		{"pid reused", "owner_start = ?", []any{self.start + 1}, true},
		{"rebooted since", "owner_boot = ?", []any{"another-boot"}, true},
		{"other host, recent heartbeat", "owner_host = ?, heartbeat_at = ?", []any{"elsewhere", recent}, false},
		{"other host, stale heartbeat", "owner_host = ?, heartbeat_at = ?", []any{"elsewhere", old}, true},
	}
	forEachBackend(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := testRun(0, 0)
				r.EndedAt = time.Time{}
				id, err := s.BeginRun(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				ivs, _ := checkpointIntervals(0, 4)
				if err := s.AppendIntervals(ctx, id, ivs, nil); err != nil {
					t.Fatal(err)
				}
				if tt.set != "" {
					if _, err := s.db.ExecContext(ctx, s.be.rebind("UPDATE runs SET "+tt.set+" WHERE id = ?"), append(tt.args, id)...); err != nil {
						t.Fatal(err)
					}
				}
				want := summary.StatusRunning
				if tt.aborted {
					want = summary.StatusAborted
				}
				got := mustRun(t, s, id)
				if got.Status != want || len(got.Intervals) != len(ivs) {
					t.Errorf("Run: status %q with %d intervals, want %q with %d", got.Status, len(got.Intervals), want, len(ivs))
				}
				if tt.aborted && got.EndedAt.IsZero() {
					t.Error("aborted run has no EndedAt")
				}
				if st := listStatus(t, s, id); st != want {
					t.Errorf("List status %q, want %q", st, want)
				}
				// An aborted run can still be finished by whoever owns it.
				if err := s.FinishRun(ctx, id, testRun(0, 0)); err != nil {
					t.Fatalf("FinishRun: %v", err)
				}
				if st := listStatus(t, s, id); st != summary.StatusComplete {
					t.Errorf("after FinishRun, status %q", st)
				}
			})
		}
	})
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1234 (dbarena) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 8 0 987654 1000 10 18446744073709551615", 987654, true},
		{"1234 (a b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 8 0 42 1000", 42, true},
		{"1234 (x) S 1 2", 0, false},
		{"garbage", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseStat(%q) = %d, %v; want %d (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestWriteFailure fills the SQLite file (max_page_count, which SQLite
// reports exactly as a full disk) in the middle of a run: the failed
// writes say what failed and where, change nothing, and the run can still
// be finished once there is room.
func TestWriteFailure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	s := openTest(t, path)
	earlier := save(t, s, testRun(5, 3))
	id, err := s.BeginRun(ctx, testRun(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ivs, sm := checkpointIntervals(0, 2)
	if err := s.AppendIntervals(ctx, id, ivs, sm); err != nil {
		t.Fatal(err)
	}
	s.db.SetMaxOpenConns(1) // the page limit is per connection
	var pages int
	if err := s.db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	big, bigSamples := checkpointIntervals(2, 2000)
	err = s.AppendIntervals(ctx, id, big, bigSamples)
	if err == nil {
		t.Fatal("AppendIntervals into a full store succeeded")
	}
	for _, part := range []string{"append 2000 intervals to run", path, "full"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	huge := testRun(0, 0)
	huge.Settings = map[string]string{"x": strings.Repeat("y", 1<<20)}
	if err := s.Checkpoint(ctx, id, huge); err == nil || !strings.Contains(err.Error(), "checkpoint run") || !strings.Contains(err.Error(), "full") {
		t.Errorf("Checkpoint into a full store = %v, want a 'checkpoint run ... full' error", err)
	}
	if got := mustRun(t, s, id); len(got.Intervals) != 2 || got.Status != summary.StatusRunning || got.Settings["x"] != "" {
		t.Errorf("after failed writes: %d intervals, status %q; want the 2 appended, running, unchanged", len(got.Intervals), got.Status)
	}

	if _, err := s.db.Exec("PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendIntervals(ctx, id, big, bigSamples); err != nil {
		t.Fatalf("AppendIntervals once there is room: %v", err)
	}
	final := testRun(0, 0)
	final.Intervals = nil
	if err := s.FinishRun(ctx, id, final); err != nil {
		t.Fatalf("FinishRun: %v", err)
	}
	got := mustRun(t, s, id)
	if len(got.Intervals) != 2002 || got.Intervals[1].TS != 2 || got.Intervals[2].TS != 3 || len(got.Monitor.Samples) != 2002 {
		t.Errorf("finished run has %d intervals, %v samples; want 2002 in order", len(got.Intervals), got.Monitor)
	}
	s.db.SetMaxOpenConns(0)
	checkStore(t, path, 2)
	_ = mustRun(t, s, earlier)
}

// TestConcurrentWriters: on every backend, goroutines appending to one run
// and saving others at once lose nothing and number intervals without gaps.
func TestConcurrentWriters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store, loc string) {
		ctx := context.Background()
		id, err := s.BeginRun(ctx, testRun(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		other, err := Open(ctx, loc) // a second client of the same store
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		const perWriter = 10
		errs := make(chan error, 4*perWriter)
		done := make(chan struct{})
		for w, st := range []*Store{s, other, s, other} {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := range perWriter {
					var err error
					if w < 2 {
						ivs, sm := checkpointIntervals(0, 2)
						err = st.AppendIntervals(ctx, id, ivs, sm)
					} else {
						_, err = st.SaveRun(ctx, testRun(w*perWriter+i, 3))
					}
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		for range 4 {
			<-done
		}
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		r := mustRun(t, s, id)
		if len(r.Intervals) != 2*2*perWriter || r.Monitor == nil || len(r.Monitor.Samples) != 2*2*perWriter {
			t.Errorf("run has %d intervals, want %d", len(r.Intervals), 4*perWriter)
		}
		rows, err := s.List(ctx, Filter{})
		if err != nil || len(rows) != 1+2*perWriter {
			t.Errorf("List: %d runs (%v), want %d", len(rows), err, 1+2*perWriter)
		}
	})
}

// BenchmarkAppendIntervals is the cost of storing one report interval (and
// its monitor sample) as it ends, one transaction each, on SQLite.
func BenchmarkAppendIntervals(b *testing.B) {
	s := openTest(b, filepath.Join(b.TempDir(), "results.db"))
	ctx := context.Background()
	id, err := s.BeginRun(ctx, testRun(0, 0))
	if err != nil {
		b.Fatal(err)
	}
	ivs, sm := checkpointIntervals(0, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AppendIntervals(ctx, id, ivs, sm); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpoint is the cost of one checkpoint of a TPC-C-like run.
func BenchmarkCheckpoint(b *testing.B) {
	s := openTest(b, filepath.Join(b.TempDir(), "results.db"))
	ctx := context.Background()
	r := testRun(0, 0)
	id, err := s.BeginRun(ctx, r)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Checkpoint(ctx, id, r); err != nil {
			b.Fatal(err)
		}
	}
}
