package execute

import (
	"context"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/results/store/storetest"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload/web"
)

// rounds records a request's rounds.
type rounds struct {
	printer
	seen []int
	runs []*summary.Run
}

func (r *rounds) Round(i, _ int) { r.seen = append(r.seen, i) }
func (r *rounds) Ran(out *Outcome) error {
	r.runs = append(r.runs, out.Run)
	return out.StoreErr
}

// TestRequestRounds: a request of two rounds runs and stores each, tagged
// round=N, on a fresh session each; a request for shard 0 of 1 joins its
// start barrier and is stored as the shard of its run.
func TestRequestRounds(t *testing.T) {
	tg := sandboxtest.Start(t, target.FlavorMariaDB)
	st := storetest.Temp(t)
	open := func(ctx context.Context) (*Session, error) {
		return Connect(ctx, tg, dialect.OpenOptions{MaxConns: 4})
	}
	base := spec(&toy{})
	req := &Request{Workload: &toy{}, Config: base.Config, Given: Given{Threads: true, Time: true}, Monitor: MonitorOff,
		Home: base.Home, Tags: [][2]string{{"k", "v"}}, Rounds: 2, Version: "test", Open: open}
	if err := req.Configure(); err != nil {
		t.Fatal(err)
	}
	var obs rounds
	if err := Rounds(context.Background(), st, req, &obs); err != nil {
		t.Fatal(err)
	}
	if len(obs.seen) != 2 || len(obs.runs) != 2 {
		t.Fatalf("rounds %v, %d runs", obs.seen, len(obs.runs))
	}
	for i, run := range obs.runs {
		if run.Status != summary.StatusComplete || run.Tags["round"] != []string{"1", "2"}[i] || run.Tags["k"] != "v" || run.ID == 0 {
			t.Errorf("round %d: %s, tags %v, id %d", i+1, run.Status, run.Tags, run.ID)
		}
	}

	req = &Request{Workload: &toy{}, Config: base.Config, Given: Given{Threads: true, Time: true}, Monitor: MonitorOff,
		Home: base.Home, Rounds: 1, Open: open, Shard: &Shard{Index: 0, Count: 1, Key: "req-test"}}
	if err := req.Configure(); err != nil {
		t.Fatal(err)
	}
	obs = rounds{}
	if err := Rounds(context.Background(), st, req, &obs); err != nil {
		t.Fatal(err)
	}
	run := obs.runs[0]
	if run.RunKey != "req-test" || run.Shard == nil || run.Shard.Count != 1 || run.Tags[shard.TagRun] != "req-test" ||
		run.Tags[shard.TagIndex] != "0" || run.Status != summary.StatusComplete {
		t.Errorf("shard run: %s, key %q, shard %+v, tags %v", run.Status, run.RunKey, run.Shard, run.Tags)
	}
}

// TestRequestConfigureTellsThreadsFirst: the workload knows its threads
// before its event limit is read, so that http's --reps limits the run
// (threads x reps requests, not cut by the default time) in `dbarena run`
// as in a plan.
func TestRequestConfigureTellsThreadsFirst(t *testing.T) {
	w := web.New()
	fs := pflag.NewFlagSet("run http", pflag.ContinueOnError)
	w.Flags(fs)
	if err := fs.Parse([]string{"--url", "http://127.0.0.1:1/", "--reps", "5"}); err != nil {
		t.Fatal(err)
	}
	cfg := spec(w).Config
	cfg.Threads = 4
	req := &Request{Workload: w, Config: cfg, Given: Given{Threads: true}}
	if err := req.Configure(); err != nil {
		t.Fatal(err)
	}
	if req.Config.Events != 20 || req.Config.Duration != 0 {
		t.Errorf("events %d, time %v; want 20 and none", req.Config.Events, req.Config.Duration)
	}
}
