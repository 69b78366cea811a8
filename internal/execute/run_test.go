package execute

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/store/storetest"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// toy is the smallest workload: one SELECT per event. It is all a new
// workload needs to run through the pipeline (plus one line in the CLI's
// registry: workload.NewRegistry(..., func() workload.Workload { return &toy{} })).
type toy struct{ fail bool }

var _ workload.Runner = (*toy)(nil)

func (*toy) Name() string           { return "toy" }
func (*toy) Description() string    { return "SELECT 1 per event" }
func (*toy) Flags(*pflag.FlagSet)   {}
func (*toy) Validate() []error      { return nil }
func (*toy) Params() map[string]any { return map[string]any{"query": "SELECT 1"} }
func (t *toy) NewWorker(_ context.Context, _ workload.Env, conn *sql.Conn, _ int, _ int64) (workload.Worker, error) {
	return &toyWorker{conn: conn}, nil
}

type toyWorker struct{ conn *sql.Conn }

func (w *toyWorker) Event(ctx context.Context, ev *workload.Event) error {
	ev.Queries.Read++
	var one int
	return w.conn.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}
func (w *toyWorker) Close() error { return nil }

// toyReady is toy with a Readier that says its table is missing.
type toyReady struct{ toy }

func (*toyReady) Ready(context.Context, workload.Env) error {
	return &workload.NotReadyError{Problem: "table toy does not exist", Hint: "dbarena prepare toy"}
}

// printer records what the pipeline told its observer.
type printer struct {
	begun     []string
	intervals []runner.Interval
}

func (p *printer) Begin(_ *Session, _ *Spec, notes []string) { p.begun = notes }
func (p *printer) Interval(iv runner.Interval, _ map[string]float64) {
	p.intervals = append(p.intervals, iv)
}

func session(t *testing.T, flavor target.Flavor) *Session {
	t.Helper()
	tg := sandboxtest.Start(t, flavor)
	s, err := Connect(context.Background(), tg, dialect.OpenOptions{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func spec(w workload.Workload) Spec {
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Duration, cfg.ReportInterval = 2, 2*time.Second, 500*time.Millisecond
	return Spec{Workload: w, Config: cfg, Monitor: MonitorOff, Home: os.TempDir(),
		Tags: map[string]string{"k": "v"}, Checkpoint: 700 * time.Millisecond}
}

// TestToyWorkloadThroughPipeline: a workload of a few lines runs on real
// servers, is stored as it goes and comes back complete, its intervals
// adding up to its total.
func TestToyWorkloadThroughPipeline(t *testing.T) {
	for _, fl := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(fl), func(t *testing.T) {
			s, st := session(t, fl), storetest.Temp(t)
			p := &printer{}
			out, err := Run(context.Background(), st, s, spec(&toy{}), p)
			if err != nil {
				t.Fatal(err)
			}
			run := out.Run
			if out.StoreErr != nil || run.Status != summary.StatusComplete || run.ID == 0 {
				t.Fatalf("status %s id %d store %v", run.Status, run.ID, out.StoreErr)
			}
			var sum int64
			for _, iv := range run.Intervals {
				sum += iv.Events
			}
			if sum != run.Totals.Events || run.Totals.Events == 0 || len(p.intervals) != len(run.Intervals) {
				t.Errorf("intervals add to %d of %d events; %d printed, %d stored", sum, run.Totals.Events,
					len(p.intervals), len(run.Intervals))
			}
			got, err := st.Run(context.Background(), run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != summary.StatusComplete || len(got.Intervals) != len(run.Intervals) || got.Tags["k"] != "v" ||
				got.Totals.Events != run.Totals.Events || got.Histogram == "" {
				t.Errorf("stored: %s, %d intervals, tags %v, %d events", got.Status, len(got.Intervals), got.Tags, got.Totals.Events)
			}
			if len(run.ServerCounters) == 0 {
				t.Errorf("no server counters")
			}
		})
	}
}

// TestNotReadyRefused: a workload whose data is missing is refused before
// anything is stored, with the command that fixes it.
func TestNotReadyRefused(t *testing.T) {
	s, st := session(t, target.FlavorMariaDB), storetest.Temp(t)
	_, err := Run(context.Background(), st, s, spec(&toyReady{}), &printer{})
	if KindOf(err) != NotReady || !strings.Contains(err.Error(), "run `dbarena prepare toy") {
		t.Fatalf("err %v (kind %d), want NotReady naming the prepare command", err, KindOf(err))
	}
	if rows, _ := st.List(context.Background(), store.Filter{}); len(rows) != 0 {
		t.Errorf("%d runs stored for a refused run", len(rows))
	}
}

// TestServerLimitRefused: on a server dbarena did not start, a run that
// would pass max_connections is refused before it starts (BadInput),
// naming the setting.
func TestServerLimitRefused(t *testing.T) {
	s, st := session(t, target.FlavorMariaDB), storetest.Temp(t)
	s.Target.Sandbox = "" // as a DSN target: checked, not raised
	sp := spec(&toy{})
	sp.Config.Threads = 100000
	_, err := Run(context.Background(), st, s, sp, &printer{})
	if KindOf(err) != BadInput || !strings.Contains(err.Error(), "max_connections") {
		t.Fatalf("err %v (kind %d), want BadInput naming max_connections", err, KindOf(err))
	}
}

// TestCheckpointsWhileRunning: the store holds the run, its intervals and
// figures while it is still going.
func TestCheckpointsWhileRunning(t *testing.T) {
	s, st := session(t, target.FlavorMariaDB), storetest.Temp(t)
	sp := spec(&toy{})
	sp.Config.Duration = 3 * time.Second
	var seen *summary.Run
	probe := &storeProbe{Store: st, onCheckpoint: func(id int64) {
		if seen == nil {
			seen, _ = st.Run(context.Background(), id)
		}
	}}
	out, err := Run(context.Background(), probe, s, sp, &printer{})
	if err != nil {
		t.Fatal(err)
	}
	if seen == nil || seen.Status != summary.StatusRunning || len(seen.Intervals) == 0 || seen.Totals.Events == 0 {
		t.Fatalf("mid-run the store held %+v", seen)
	}
	if out.Run.Status != summary.StatusComplete {
		t.Errorf("final status %s", out.Run.Status)
	}
}

// storeProbe is the real store, with a hook after each checkpoint.
type storeProbe struct {
	*store.Store
	onCheckpoint func(id int64)
}

func (p *storeProbe) Checkpoint(ctx context.Context, id int64, run *summary.Run) error {
	err := p.Store.Checkpoint(ctx, id, run)
	p.onCheckpoint(id)
	return err
}
