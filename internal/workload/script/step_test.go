package script

import (
	"context"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/rawsock"
	"github.com/dbarena/dbarena/internal/workload"
)

// soleWaiter waits for one socket at a time, as a poller group's member
// does before its group runs.
type soleWaiter struct{}

func (soleWaiter) Attach(int) error { return nil }
func (soleWaiter) Wait(fd int)      { rawsock.AwaitReadable(fd) }

// stepEvent runs one event through Start and Resume, waiting for the
// socket between steps as a poller group would.
func stepEvent(w *worker, ev *workload.Event) error {
	pending, err := w.Start(ev)
	for pending {
		rawsock.AwaitReadable(w.pw.Fd())
		pending, err = w.Resume(ev)
	}
	return err
}

// TestSteps: a script of \set, \if and statements runs in steps as Event
// runs it (the same statements counted, per line; \gset and \aset set
// their variables), under every protocol; a failing statement names its
// file and line; scripts that sleep or pipeline, and workers without a
// Waiter, do not step.
func TestSteps(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	// Lines 7 and 8 store variables that line 10 checks (line 11 fails if
	// they are wrong).
	file := writeFile(t, "s.sql", "\\set a random(1, 3)\n\\if :a = 1\nSELECT :a;\n\\else\nSELECT :a + 1;\n\\endif\n"+
		"SELECT :a * 10 AS b \\gset\nSELECT :b + 1 AS c \\aset\n\\set d :c - :a * 10\n\\if :d <> 1\nSELECT 1/0;\n\\endif\nSELECT 1;\n")
	waiting := rawsock.WithWaiter(context.Background(), soleWaiter{})
	for _, proto := range []string{Simple, Extended, Prepared} {
		t.Run(proto, func(t *testing.T) {
			wl := setup(t, "--file", file, "--protocol", proto)
			w0, err := wl.DialWorker(waiting, env, 0, 7)
			if err != nil {
				t.Fatal(err)
			}
			w := w0.(*worker)
			defer w.Close()
			if !w.CanStep() {
				t.Fatal("CanStep: false")
			}
			const events = 60
			for range events {
				var ev workload.Event
				if err := stepEvent(w, &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Type != file || ev.Queries.Read != 4 {
					t.Fatalf("event %+v", ev)
				}
			}
			run := &summary.Run{}
			wl.Summarize(run)
			one, other := run.Figures["stmt."+file+":3.count"], run.Figures["stmt."+file+":5.count"]
			if one+other != events || one == 0 || other == 0 || run.Figures["stmt."+file+":13.count"] != events {
				t.Errorf("statement counts %v + %v (each branch taken), line 13 %v; want %d each", one, other, run.Figures["stmt."+file+":13.count"], events)
			}
		})
	}

	errFile := writeFile(t, "err.sql", "SELECT 1;\nSELECT * FROM no_such_table;\n")
	wl := setup(t, "--file", errFile)
	w0, err := wl.DialWorker(waiting, env, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := w0.(*worker)
	defer w.Close()
	var ev workload.Event
	err = stepEvent(w, &ev)
	if err == nil || !strings.Contains(err.Error(), "err.sql:2:") || env.Dialect.Classify(err).Code != "42P01" {
		t.Fatalf("error %v (class %v), want err.sql:2 and 42P01", err, env.Dialect.Classify(err))
	}
	run := &summary.Run{}
	wl.Summarize(run)
	if run.Figures["stmt."+errFile+":2.errors.42P01"] != 1 || run.Figures["stmt."+errFile+":1.count"] != 1 {
		t.Errorf("figures %v", run.Figures)
	}
	if err := stepEvent(w, &ev); err == nil { // the connection is still in step
		t.Fatal("second event: no error")
	}

	// \gset without its row names its line.
	wl = setup(t, "--file", writeFile(t, "gset.sql", "SELECT 1;\nSELECT 1 AS one WHERE false \\gset\n"))
	w0, err = wl.DialWorker(waiting, env, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Close()
	if err := stepEvent(w0.(*worker), &ev); err == nil || !strings.Contains(err.Error(), "gset.sql:2:") || !strings.Contains(err.Error(), "one row") {
		t.Fatalf("\\gset of no row: %v", err)
	}

	for _, text := range []string{"\\sleep 1 ms\nSELECT 1;\n", "\\startpipeline\nSELECT 1;\n\\endpipeline\n"} {
		wl := setup(t, "--file", writeFile(t, "no.sql", text), "--protocol", Extended)
		w, err := wl.DialWorker(waiting, env, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if w.(*worker).CanStep() {
			t.Errorf("%q: CanStep", text)
		}
		w.Close()
	}
	w1, err := wl.DialWorker(context.Background(), env, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w1.(*worker).CanStep() {
		t.Error("CanStep without a Waiter")
	}
	w1.Close()
}
