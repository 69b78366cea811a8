package runner

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/workload"
)

// pacerRunner's Workers are Pacers: each has n events, due 50 ms before
// Next is called (so each starts late), every other one failing with a
// deadlock; then ErrDone.
type pacerRunner struct {
	n        int
	attempts atomic.Int64
}

func (p *pacerRunner) NewWorker(_ context.Context, _ workload.Env, _ *sql.Conn, _ int, _ int64) (workload.Worker, error) {
	return &pacerWorker{r: p}, nil
}

type pacerWorker struct {
	r    *pacerRunner
	done int
}

func (w *pacerWorker) Next(_ context.Context, stop <-chan struct{}) (time.Time, error) {
	if w.done >= w.r.n {
		return time.Time{}, workload.ErrDone
	}
	return time.Now().Add(-50 * time.Millisecond), nil
}

func (w *pacerWorker) Event(_ context.Context, ev *workload.Event) error {
	w.r.attempts.Add(1)
	w.done++
	ev.Queries.Read = 1
	if w.done%2 == 0 {
		return &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
	}
	return nil
}

func (w *pacerWorker) Close() error { return nil }

// TestPacer: a Pacer's latency counts from its due time, it is late, its
// failed events are neither retried nor rolled back, and the run ends
// when every worker is done.
func TestPacer(t *testing.T) {
	h := newHarness(t, nil)
	p := &pacerRunner{n: 6}
	cfg := testConfig(2, 0)
	cfg.Duration = time.Hour
	cfg.IgnoreErrors = []string{"all"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg, h.env, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || res.Err != nil {
		t.Fatalf("interrupted %v err %v", res.Interrupted, res.Err)
	}
	if res.Events != 6 || res.Errors != 6 || p.attempts.Load() != 12 {
		t.Errorf("events %d errors %d attempts %d, want 6, 6, 12 (no retries)", res.Events, res.Errors, p.attempts.Load())
	}
	if res.Retries != 0 || h.db.rollbacks.Load() != 0 {
		t.Errorf("retries %d rollbacks %d, want none", res.Retries, h.db.rollbacks.Load())
	}
	if res.Late != 12 || res.Latency.Min() < 49*time.Millisecond {
		t.Errorf("late %d min latency %v: want every event late and counted from its due time", res.Late, res.Latency.Min())
	}
}
