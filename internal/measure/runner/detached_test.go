package runner

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// detachedRunner is a workload.Detached: its Workers need no database
// (env is empty) and stop after reps events with workload.ErrDone; every
// third event fails with errSoft, which its Classify counts under code
// "soft" (a Detached workload's errors never stop the run).
type detachedRunner struct {
	reps   int
	events atomic.Int64 // Event calls that did not return ErrDone
}

var errSoft = errors.New("soft failure")

func (d *detachedRunner) NewWorker(context.Context, workload.Env, *sql.Conn, int, int64) (workload.Worker, error) {
	return nil, errors.New("NewWorker must not be called")
}
func (d *detachedRunner) OwnsConns(workload.Env) bool { return false }
func (d *detachedRunner) DialWorker(context.Context, workload.Env, int, int64) (workload.Worker, error) {
	return &detachedWorker{d: d}, nil
}
func (d *detachedRunner) Classify(err error) dialect.Class {
	if errors.Is(err, errSoft) {
		return dialect.Class{Kind: dialect.Fatal, Code: "soft"}
	}
	return dialect.Class{Kind: dialect.Fatal, Code: "hard"}
}

type detachedWorker struct {
	d *detachedRunner
	n int
}

func (w *detachedWorker) Event(context.Context, *workload.Event) error {
	if w.n == w.d.reps {
		return workload.ErrDone
	}
	w.n++
	w.d.events.Add(1)
	if w.n%3 == 0 {
		return errSoft
	}
	return nil
}
func (w *detachedWorker) Close() error { return nil }

// TestDetachedWorkersStopWhenDone: a Detached workload runs without a
// database, its errors are classified by the workload, and workers that
// return ErrDone end the run with exactly threads x reps events done.
func TestDetachedWorkersStopWhenDone(t *testing.T) {
	d := &detachedRunner{reps: 10}
	cfg := DefaultConfig()
	cfg.Threads, cfg.Duration = 4, time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg, workload.Env{}, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil || res.Interrupted {
		t.Fatalf("run ended with %v (interrupted %v)", res.Err, res.Interrupted)
	}
	if d.events.Load() != 40 || res.Events+res.Errors != 40 || res.Errors != 12 || res.ErrorsByCode["soft"] != 12 {
		t.Errorf("events %d (ran %d), errors %d by code %v; want 28 + 12 soft = 40", res.Events, d.events.Load(), res.Errors, res.ErrorsByCode)
	}
	if res.Unfinished != 0 {
		t.Errorf("unfinished %d, want 0: ErrDone is no event", res.Unfinished)
	}
}
