package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
)

// twoServers is 2 servers x 2 threads x rounds, with between-round actions.
func twoServers(t testing.TB, rounds int, extra string) *plan.Plan {
	t.Helper()
	return mustParse(t, fmt.Sprintf(`name: two
servers:
  - {name: a, flavor: mariadb}
  - {name: b, flavor: postgres}
workloads: [oltp_point_select]
axes:
  threads: [1, 2]
rounds: %d
warmup: 0
duration: 1s
%s`, rounds, extra))
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestRunOrder(t *testing.T) {
	w := newWorld()
	p := twoServers(t, 2, "between_rounds: [restart, drop-caches]\n")
	res, err := w.lab().Run(context.Background(), p, Options{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "log", w.log, []string{
		"start lab-a", "prepare a threads=1 r1", "run a threads=1 r1", "run a threads=2 r1",
		"start lab-b", "prepare b threads=1 r1", "run b threads=1 r1", "run b threads=2 r1",
		"restart lab-a", "drop-caches", "run a threads=1 r2", "run a threads=2 r2",
		"restart lab-b", "drop-caches", "run b threads=1 r2", "run b threads=2 r2",
		"stop lab-a", "stop lab-b",
	})
	if want := (Result{Session: "s1", Ran: 8}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	equal(t, "began", w.began, []string{"s1 0"})
	if len(w.lines) != 8 || w.lines[0] != "1/8 a r1 complete" || w.lines[7] != "8/8 b r2 complete" {
		t.Errorf("progress %q", w.lines)
	}
	if len(w.notes) != 0 {
		t.Errorf("notes %q", w.notes)
	}
	for _, r := range w.runs {
		if r.Tags[TagPlan] != "two" || r.Tags[TagSession] != "s1" || r.Tags[TagCell] != r.Plan.Cell ||
			r.Tags[TagRound] != fmt.Sprint(r.Plan.Round) || r.Tags["round"] != r.Tags[TagRound] {
			t.Errorf("run %d: tags %v plan %+v", r.ID, r.Tags, r.Plan)
		}
	}
}

func TestRunNamesSessionAfterStartTime(t *testing.T) {
	w := newWorld()
	res, err := w.lab().Run(context.Background(), twoServers(t, 1, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Session) != len("20060102T150405Z") || !strings.HasSuffix(res.Session, "Z") {
		t.Errorf("session %q", res.Session)
	}
}

func TestRunKeepServers(t *testing.T) {
	w := newWorld()
	if _, err := w.lab().Run(context.Background(), twoServers(t, 1, ""), Options{Keep: true}); err != nil {
		t.Fatal(err)
	}
	if stops := w.logged("stop"); len(stops) != 0 {
		t.Errorf("stopped %q with Keep", stops)
	}
}

// store saves a run of plan p's step (cell index i of the schedule) in session.
func (w *world) store(p *plan.Plan, session string, i int, status string) {
	step := p.Schedule()[i]
	j := Job{Plan: p, Step: step, Session: session}
	run := &summary.Run{Status: status, Plan: j.Ref(), Tags: map[string]string{}}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	_, _ = (*fakeStore)(w).SaveRun(context.Background(), run)
}

func TestRunResume(t *testing.T) {
	p := twoServers(t, 2, "between_rounds: [restart, drop-caches]\n")
	t.Run("skips the complete rounds of the latest session", func(t *testing.T) {
		w := newWorld()
		w.store(p, "older", 2, summary.StatusComplete)
		w.store(p, "old", 0, summary.StatusComplete)
		w.store(p, "old", 1, summary.StatusComplete)
		w.store(p, "old", 2, summary.StatusFailed) // run again
		other := mustParse(t, "name: other\nservers: [{name: a, flavor: mariadb}]\nworkloads: [x]\n")
		w.store(other, "newest", 0, summary.StatusComplete) // another plan
		before := len(w.runs)
		res, err := w.lab().Run(context.Background(), p, Options{Resume: true, Session: "ignored"})
		if err != nil {
			t.Fatal(err)
		}
		if want := (Result{Session: "old", Ran: 6, Skipped: 2}); res != want {
			t.Errorf("result %+v, want %+v", res, want)
		}
		equal(t, "began", w.began, []string{"old 2"})
		// Round 2 of a comes first after a block of b: its actions run, but
		// a's sandbox was never started in this process, so no restart.
		equal(t, "log", w.log, []string{
			"start lab-b", "prepare b threads=1 r1", "run b threads=1 r1", "run b threads=2 r1",
			"drop-caches", "start lab-a", "prepare a threads=1 r2", "run a threads=1 r2", "run a threads=2 r2",
			"restart lab-b", "drop-caches", "run b threads=1 r2", "run b threads=2 r2",
			"stop lab-a", "stop lab-b",
		})
		for _, r := range w.runs[before:] {
			if r.Tags[TagSession] != "old" {
				t.Errorf("run %d stored in session %q", r.ID, r.Tags[TagSession])
			}
		}
	})
	t.Run("a plan without a session starts one", func(t *testing.T) {
		w := newWorld()
		res, err := w.lab().Run(context.Background(), p, Options{Resume: true, Session: "fresh"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Session != "fresh" || res.Ran != 8 || res.Skipped != 0 {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("a complete session runs nothing", func(t *testing.T) {
		w := newWorld()
		for i := range p.Schedule() {
			w.store(p, "done", i, summary.StatusComplete)
		}
		res, err := w.lab().Run(context.Background(), p, Options{Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := (Result{Session: "done", Skipped: 8}); res != want || len(w.log) != 0 {
			t.Errorf("result %+v, log %q", res, w.log)
		}
	})
}

func TestRunFailedCells(t *testing.T) {
	t.Run("a server that does not start", func(t *testing.T) {
		w := newWorld()
		w.startErr["lab-b"] = fmt.Errorf("no postgres\nsecond line")
		l := w.lab()
		l.Stamp = func(run *summary.Run, _ target.Target) { run.Host.Hostname = "stamped" }
		res, err := l.Run(context.Background(), twoServers(t, 2, ""), Options{Session: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Ran != 8 || res.Failed != 4 || res.Interrupted {
			t.Errorf("result %+v", res)
		}
		// Each of b's steps tries again: a start may fail on one cell's settings.
		if n := len(w.logged("start lab-b")); n != 4 {
			t.Errorf("%d starts of lab-b, want 4: %q", n, w.log)
		}
		if got := w.statuses(); got[summary.StatusComplete] != 4 || got[summary.StatusFailed] != 4 {
			t.Errorf("statuses %v", got)
		}
		for _, r := range w.runs {
			if r.Status != summary.StatusFailed {
				continue
			}
			if r.Error != "server b: no postgres second line" || r.Host.Hostname != "stamped" ||
				r.Tags[TagCell] == "" || r.Plan == nil || r.Threads < 1 || r.Workload != "oltp_point_select" {
				t.Errorf("failed run %+v", r)
			}
		}
		if w.lines[2] != "3/8 b r1 failed" {
			t.Errorf("progress %q", w.lines)
		}
		// A server whose start failed is stopped too: it may be half up.
		equal(t, "stops", w.logged("stop"), []string{"stop lab-a", "stop lab-b"})
	})
	t.Run("a failed prepare is tried again on the next step", func(t *testing.T) {
		w := newWorld()
		w.prepareErr = func(j Job) error {
			if j.Step.Threads == 1 && j.Step.CoordMap()["server"] == "a" {
				return errBoom
			}
			return nil
		}
		res, err := w.lab().Run(context.Background(), twoServers(t, 1, ""), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 1 || w.runs[0].Error != "prepare: boom" {
			t.Errorf("result %+v, first run %+v", res, w.runs[0])
		}
		equal(t, "a's steps", w.logged("prepare a", "run a"), []string{"prepare a threads=1 r1", "prepare a threads=2 r1", "run a threads=2 r1"})
	})
	t.Run("a run error is stored on one line without the password", func(t *testing.T) {
		w := newWorld()
		w.runErr = func(j Job) error {
			return fmt.Errorf("cannot reach %s:\n refused", j.Step.CoordMap()["server"]+" u:sekret")
		}
		p := mustParse(t, `name: dsn
servers:
  - {name: d, dsn: "mysql://u:sekret@127.0.0.1:1/db"}
workloads: [oltp_point_select]
rounds: 1
`)
		res, err := w.lab().Run(context.Background(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 1 || len(w.runs) != 1 {
			t.Fatalf("result %+v, runs %d", res, len(w.runs))
		}
		r := w.runs[0]
		if r.Error != "cannot reach d u:***: refused" || strings.Contains(r.Target.DSN, "sekret") || r.Target.DSN == "" {
			t.Errorf("stored error %q, DSN %q", r.Error, r.Target.DSN)
		}
		if len(w.logged("start", "stop")) != 0 {
			t.Errorf("a DSN server was started or stopped: %q", w.log)
		}
	})
}

func TestRunBetweenRounds(t *testing.T) {
	t.Run("a DSN is not restarted; drop-caches not permitted: each noted once", func(t *testing.T) {
		w := newWorld()
		w.dropErr = errBoom
		p := mustParse(t, `name: dsn
servers:
  - {name: d, dsn: "mysql://u:p@127.0.0.1:1/db"}
workloads: [oltp_point_select]
rounds: 3
between_rounds: [restart, drop-caches]
`)
		if _, err := w.lab().Run(context.Background(), p, Options{}); err != nil {
			t.Fatal(err)
		}
		equal(t, "notes", w.notes, []string{
			"server d is a DSN: not restarted between rounds",
			"drop-caches not permitted here (boom): page cache kept between rounds",
		})
		equal(t, "log", w.log, []string{"prepare d r1", "run d r1", "drop-caches", "run d r2", "drop-caches", "run d r3"})
	})
	t.Run("data: reload prepares every round", func(t *testing.T) {
		w := newWorld()
		if _, err := w.lab().Run(context.Background(), twoServers(t, 2, "data: reload\n"), Options{}); err != nil {
			t.Fatal(err)
		}
		equal(t, "prepares", w.logged("prepare"), []string{
			"prepare a threads=1 r1", "prepare b threads=1 r1", "prepare a threads=1 r2", "prepare b threads=1 r2"})
	})
	t.Run("a failed restart starts the server again", func(t *testing.T) {
		w := newWorld()
		w.restartErr = errBoom
		res, err := w.lab().Run(context.Background(), twoServers(t, 2, "between_rounds: [restart]\n"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 0 {
			t.Errorf("result %+v", res)
		}
		equal(t, "a's server", w.logged("start lab-a", "restart lab-a"), []string{"start lab-a", "restart lab-a", "start lab-a"})
	})
	t.Run("settings: one start per change, data kept", func(t *testing.T) {
		w := newWorld()
		p := mustParse(t, `name: set
servers:
  - name: a
    flavor: mariadb
    settings: {base: "1"}
workloads: [oltp_point_select]
axes:
  server.x: [1, 2]
rounds: 2
`)
		if _, err := w.lab().Run(context.Background(), p, Options{}); err != nil {
			t.Fatal(err)
		}
		equal(t, "log", w.log, []string{
			"start lab-a base=1,x=1", "prepare a server.x=1 r1", "run a server.x=1 r1", "run a server.x=1 r2",
			"start lab-a base=1,x=2", "run a server.x=2 r1", "run a server.x=2 r2", "stop lab-a"})
	})
}

func TestRunInterrupt(t *testing.T) {
	t.Run("during a run", func(t *testing.T) {
		w := newWorld()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		w.onRun = func(Job) {
			if n++; n == 3 {
				cancel()
			}
		}
		res, err := w.lab().Run(ctx, twoServers(t, 2, ""), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Interrupted || res.Ran != 3 || res.Failed != 1 {
			t.Errorf("result %+v", res)
		}
		// The sandboxes are stopped although the context is cancelled.
		equal(t, "log", w.log, []string{"start lab-a", "prepare a threads=1 r1", "run a threads=1 r1", "run a threads=2 r1",
			"start lab-b", "prepare b threads=1 r1", "run b threads=1 r1", "stop lab-a", "stop lab-b"})
		if got := w.statuses(); got[summary.StatusInterrupted] != 1 || got[summary.StatusComplete] != 2 {
			t.Errorf("statuses %v", got)
		}
	})
	t.Run("during a prepare: stored as interrupted", func(t *testing.T) {
		w := newWorld()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w.prepareErr = func(Job) error { cancel(); return context.Canceled }
		res, err := w.lab().Run(ctx, twoServers(t, 2, ""), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Interrupted || res.Ran != 1 || len(w.runs) != 1 || w.runs[0].Status != summary.StatusInterrupted {
			t.Errorf("result %+v, runs %+v", res, w.runs)
		}
	})
	t.Run("before the first step", func(t *testing.T) {
		w := newWorld()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := w.lab().Run(ctx, twoServers(t, 2, ""), Options{Session: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if want := (Result{Session: "s", Interrupted: true}); res != want || len(w.log) != 0 {
			t.Errorf("result %+v, log %q", res, w.log)
		}
		equal(t, "began", w.began, []string{"s 0"})
	})
}

func TestSandboxName(t *testing.T) {
	tests := []struct {
		v    plan.Variant
		want string
	}{
		{plan.Variant{Server: plan.Server{Name: "mariadb-10.11"}}, "lab-mariadb-10_11"},
		{plan.Variant{Server: plan.Server{Name: "m"}, Engine: "InnoDB"}, "lab-m-innodb"},
		{plan.Variant{Server: plan.Server{Name: strings.Repeat("x", 40)}}, "lab-" + strings.Repeat("x", 28)},
	}
	for _, tt := range tests {
		if got := SandboxName(tt.v); got != tt.want {
			t.Errorf("SandboxName(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
