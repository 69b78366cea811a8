package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox"
)

// fakeLoader logs "load SANDBOX DUMP [engine=E] [keep]" and stores a
// complete run of workload load, or fails with loadErr.
type fakeLoader struct {
	w       *world
	loadErr error
	kept    bool // return a nil run (data already there)
}

func (f *fakeLoader) Load(ctx context.Context, j LoadJob) (*summary.Run, error) {
	line := "load " + j.Target.Sandbox + " " + j.Dump
	if j.Engine != "" {
		line += " engine=" + j.Engine
	}
	if j.KeepLoaded {
		line += " keep"
	}
	f.w.log = append(f.w.log, line)
	if f.loadErr != nil {
		return nil, f.loadErr
	}
	if f.kept {
		return nil, nil
	}
	run := &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: LoadWorkload,
		Plan: j.Ref(), Tags: map[string]string{}, StartedAt: time.Now()}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	_, err := (*fakeStore)(f.w).SaveRun(ctx, run)
	return run, err
}

const dataPlan = `name: shop
servers:
  - {name: maria, flavor: mariadb}
  - {name: pg, flavor: postgres}
data:
  dump: {mysql: my.sql, postgres: pg.sql}
  engine: [MyISAM, InnoDB]
%s
workloads: [script, oltp_point_select]
rounds: 2
warmup: 0
duration: 1s
`

// TestDataLoadedOncePerVariant: the dump is loaded (not prepared) once per
// sandbox and engine, with the variant's engine on the MySQL family and
// none on PostgreSQL; both workloads and both rounds reuse it; each load
// is stored as a run of workload load placed at its server and engine.
func TestDataLoadedOncePerVariant(t *testing.T) {
	w := newWorld()
	l := w.lab()
	l.Loader = &fakeLoader{w: w}
	p := mustParse(t, fmt.Sprintf(dataPlan, ""))
	res, err := l.Run(context.Background(), p, Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "loads", w.logged("load", "prepare"), []string{
		"load lab-maria-myisam my.sql engine=MyISAM",
		"load lab-maria-innodb my.sql engine=InnoDB",
		"load lab-pg pg.sql",
	})
	if res.Ran != 12 || res.Failed != 0 {
		t.Errorf("result %+v", res)
	}
	var cells []string
	for _, r := range w.runs {
		if r.Workload == LoadWorkload {
			cells = append(cells, r.Tags[TagCell]+" "+r.Plan.Coords["engine"])
			if r.Plan.Cell != r.Tags[TagCell] || r.Tags[TagSession] != "s" || r.Tags[TagPlan] != "shop" {
				t.Errorf("load run: tags %v plan %+v", r.Tags, r.Plan)
			}
		}
	}
	equal(t, "load runs", cells, []string{
		"workload=load,server=maria,engine=MyISAM MyISAM",
		"workload=load,server=maria,engine=InnoDB InnoDB",
		"workload=load,server=pg ",
	})
}

// TestDataReload: reload: always loads again before every round; reload:
// never asks the loader to keep loaded data, and a kept load is noted.
func TestDataReload(t *testing.T) {
	w := newWorld()
	l := w.lab()
	l.Loader = &fakeLoader{w: w}
	if _, err := l.Run(context.Background(), mustParse(t, fmt.Sprintf(dataPlan, "  reload: always")), Options{}); err != nil {
		t.Fatal(err)
	}
	if n := len(w.logged("load")); n != 12 {
		t.Errorf("reload: always: %d loads, want 12 (3 variants x 2 workloads x 2 rounds): %q", n, w.logged("load"))
	}

	w = newWorld()
	l = w.lab()
	l.Loader = &fakeLoader{w: w, kept: true}
	if _, err := l.Run(context.Background(), mustParse(t, fmt.Sprintf(dataPlan, "  reload: never")), Options{}); err != nil {
		t.Fatal(err)
	}
	equal(t, "loads", w.logged("load"), []string{
		"load lab-maria-myisam my.sql engine=MyISAM keep",
		"load lab-maria-innodb my.sql engine=InnoDB keep",
		"load lab-pg pg.sql keep",
	})
	if len(w.notes) != 3 {
		t.Errorf("notes %q", w.notes)
	}
}

// TestDataLoadFails: a failed load fails the cell with the loader's error
// and is tried again by the variant's next cell; a lab without a loader
// fails data plans' cells.
func TestDataLoadFails(t *testing.T) {
	w := newWorld()
	l := w.lab()
	l.Loader = &fakeLoader{w: w, loadErr: errBoom}
	p := mustParse(t, fmt.Sprintf(dataPlan, ""))
	res, err := l.Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != res.Ran || res.Ran != 12 || len(w.logged("run")) != 0 || len(w.logged("load")) != 12 {
		t.Errorf("result %+v, log %q", res, w.log)
	}
	if w.runs[0].Error != "load: boom" {
		t.Errorf("error %q", w.runs[0].Error)
	}

	w = newWorld()
	res, _ = w.lab().Run(context.Background(), p, Options{})
	if res.Failed != 12 || w.runs[0].Error == "" {
		t.Errorf("without a loader: %+v %q", res, w.runs[0].Error)
	}
}

// TestFixedPortServersRunInTurn: servers of one port never run at once:
// the one holding it is stopped before the next starts, in every round;
// a server on another port is left alone.
func TestFixedPortServersRunInTurn(t *testing.T) {
	w := newWorld()
	p := mustParse(t, `name: ports
servers:
  - {name: a, flavor: mariadb, port: 4000}
  - {name: b, flavor: postgres, port: 4000}
  - {name: c, flavor: mariadb}
workloads: [oltp_point_select]
rounds: 2
warmup: 0
duration: 1s
`)
	if _, err := w.lab().Run(context.Background(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	equal(t, "log", w.logged("start", "stop", "run"), []string{
		"start lab-a", "run a r1",
		"stop lab-a", "start lab-b", "run b r1",
		"start lab-c", "run c r1",
		"stop lab-b", "start lab-a", "run a r2",
		"stop lab-a", "start lab-b", "run b r2",
		"run c r2",
		"stop lab-b", "stop lab-c",
	})
	// Data survives a stop: each is prepared once.
	if n := len(w.logged("prepare")); n != 3 {
		t.Errorf("%d prepares, want 3: %q", n, w.logged("prepare"))
	}
}

// TestConnectAxisReachesConfig: each cell's runner config has its connect
// axis value.
func TestConnectAxisReachesConfig(t *testing.T) {
	w := newWorld()
	var got []string
	w.onRun = func(j Job) { got = append(got, fmt.Sprintf("%d/%s", j.Config().Threads, j.Config().Connect)) }
	p := mustParse(t, `name: c
servers: [{name: a, flavor: mariadb}]
workloads: [oltp_point_select]
axes:
  threads: [32, 640]
  connect: [persistent, per-event, every=5]
rounds: 1
warmup: 0
duration: 1s
`)
	if _, err := w.lab().Run(context.Background(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	equal(t, "configs", got, []string{"32/persistent", "32/per-event", "32/every=5", "640/persistent", "640/per-event", "640/every=5"})
	for _, r := range w.runs {
		if r.Plan.Coords["connect"] == "" {
			t.Errorf("run %d: coords %v lack connect", r.ID, r.Plan.Coords)
		}
	}
	var c runner.Connect
	if c.String() != "persistent" {
		t.Errorf("zero Connect is %q", c)
	}
}

// TestDataWarnings: a dump that does not exist is a warning naming the
// plan's line; one that exists is not.
func TestDataWarnings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "my.sql"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p, errs := plan.Parse(filepath.Join(dir, "p.yaml"), []byte(fmt.Sprintf(dataPlan, "")))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := Expand(p, nil, func() ([]sandbox.Binary, error) { return nil, nil })
	if len(got) != 1 || !strings.Contains(got[0], "p.yaml:5: data dump "+filepath.Join(dir, "pg.sql")) {
		t.Errorf("warnings %q", got)
	}
}
