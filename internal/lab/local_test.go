package lab

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/store/storetest"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// probe is a pipeline that asks the server what the lab set up: the
// setting under test and the server's process.
type probe struct {
	m    *sandbox.Manager
	st   *store.Store
	seen []string // "cell round: max_connections pid"
	pids map[string]int
}

func (*probe) Prepare(context.Context, Job) error { return nil }

func (pr *probe) Run(ctx context.Context, j Job) (*summary.Run, error) {
	d, err := dialect.For(j.Target.Family())
	if err != nil {
		return nil, err
	}
	db, err := d.Open(j.Target, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var maxConns string
	if err := db.QueryRowContext(ctx, "SELECT @@max_connections").Scan(&maxConns); err != nil {
		return nil, err
	}
	sb, err := pr.m.Get(j.Target.Sandbox)
	if err != nil {
		return nil, err
	}
	pr.seen = append(pr.seen, fmt.Sprintf("%s r%d: %s", j.Step.CoordMap()["server.max_connections"], j.Step.Round, maxConns))
	pr.pids[fmt.Sprintf("%s r%d", j.Step.ID, j.Step.Round)] = sb.PID
	run := &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: j.Step.Workload,
		StartedAt: time.Now().UTC(), EndedAt: time.Now().UTC(), Threads: j.Threads(), Plan: j.Ref(), Tags: map[string]string{}}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	_, err = pr.st.SaveRun(ctx, run)
	return run, err
}

// TestLocalSandboxes runs a plan on a real MariaDB sandbox and store: each
// cell's setting is in force, the server restarts between rounds, the
// sandbox is stopped at the end, and a resume finds the session complete.
func TestLocalSandboxes(t *testing.T) {
	m := sandboxtest.Manager(t)
	if bins, _ := m.Discover(); !hasFlavor(bins, target.FlavorMariaDB) {
		if os.Getenv("CI") != "" {
			t.Fatal("no mariadb server binary")
		}
		t.Skip("no mariadb server binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st := storetest.Temp(t)
	p := mustParse(t, `name: real
servers:
  - {name: m, flavor: mariadb, profile: fast}
workloads: [probe]
axes:
  server.max_connections: [51, 52]
rounds: 2
between_rounds: [restart]
`)
	pr := &probe{m: m, st: st, pids: map[string]int{}}
	l := &Lab{Store: st, Sandboxes: Local{Manager: m, Catalog: catalog.Open(t.TempDir())}, Pipeline: pr}
	res, err := l.Run(ctx, p, Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Session: "s", Ran: 4}); res != want {
		t.Fatalf("result %+v, want %+v (runs %v)", res, want, pr.seen)
	}
	equal(t, "settings in force", pr.seen, []string{"51 r1: 51", "51 r2: 51", "52 r1: 52", "52 r2: 52"})
	for _, set := range []string{"51", "52"} {
		id := "workload=probe,server=m,server.max_connections=" + set
		if a, b := pr.pids[id+" r1"], pr.pids[id+" r2"]; a == 0 || a == b {
			t.Errorf("max_connections=%s: server pid %d in round 1, %d in round 2: not restarted", set, a, b)
		}
	}
	sb, err := m.Get(SandboxName(p.Variants()[0]))
	if err != nil || sb.State == sandbox.StateRunning {
		t.Errorf("sandbox after the plan: %+v, %v", sb, err)
	}

	res, err = l.Run(ctx, p, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Session: "s", Skipped: 4}); res != want || len(pr.seen) != 4 {
		t.Errorf("resume: result %+v, want %+v; runs %v", res, want, pr.seen)
	}
}

func hasFlavor(bins []sandbox.Binary, f target.Flavor) bool {
	for _, b := range bins {
		if b.Flavor == f {
			return true
		}
	}
	return false
}
