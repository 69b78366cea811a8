package lab

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/store/storetest"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// addressProbe is a pipeline that asks whichever server answers at a fixed
// address what it is, as an application configured for that address would.
type addressProbe struct {
	st   *store.Store
	port int
	seen []string // "server round: product"
}

func (*addressProbe) Prepare(context.Context, Job) error { return nil }

func (pr *addressProbe) Run(ctx context.Context, j Job) (*summary.Run, error) {
	t := j.Target
	if t.Port != pr.port {
		return nil, fmt.Errorf("target port %d, want %d", t.Port, pr.port)
	}
	t.Host, t.Socket = "127.0.0.1", "" // the fixed address, not the sandbox's socket
	d, err := dialect.For(t.Family())
	if err != nil {
		return nil, err
	}
	db, err := d.Open(t, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return nil, err
	}
	product := "postgres"
	if strings.Contains(v, "MariaDB") {
		product = "mariadb"
	}
	pr.seen = append(pr.seen, fmt.Sprintf("%s r%d: %s", j.Step.CoordMap()["server"], j.Step.Round, product))
	run := &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: j.Step.Workload,
		StartedAt: time.Now().UTC(), EndedAt: time.Now().UTC(), Threads: 1, Plan: j.Ref(), Tags: map[string]string{}}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	_, err = pr.st.SaveRun(ctx, run)
	return run, err
}

// TestFixedPortRealServers: a MariaDB and a PostgreSQL sandbox given the
// same port answer at 127.0.0.1:PORT in turn, each round.
func TestFixedPortRealServers(t *testing.T) {
	m := sandboxtest.Manager(t)
	bins, _ := m.Discover()
	if !hasFlavor(bins, target.FlavorMariaDB) || !hasFlavor(bins, target.FlavorPostgres) {
		if os.Getenv("CI") != "" {
			t.Fatal("no mariadb or postgres server binary")
		}
		t.Skip("no mariadb or postgres server binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	st := storetest.Temp(t)
	p := mustParse(t, fmt.Sprintf(`name: port
servers:
  - {name: pm, flavor: mariadb, profile: fast, port: %d}
  - {name: pp, flavor: postgres, profile: fast, port: %d}
workloads: [probe]
rounds: 2
`, port, port))
	pr := &addressProbe{st: st, port: port}
	l := &Lab{Store: st, Sandboxes: Local{Manager: m, Catalog: catalog.Open(t.TempDir())}, Pipeline: pr}
	res, err := l.Run(ctx, p, Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 4 || res.Failed != 0 {
		var errs []string
		rows, _ := st.List(ctx, store.Filter{})
		for _, r := range rows {
			run, _ := st.Run(ctx, r.ID)
			errs = append(errs, run.Error)
		}
		t.Fatalf("result %+v: %q", res, errs)
	}
	equal(t, "who answers", pr.seen, []string{"pm r1: mariadb", "pp r1: postgres", "pm r2: mariadb", "pp r2: postgres"})
	for _, v := range p.Variants() {
		t.Cleanup(func() { _ = m.Remove(context.Background(), SandboxName(v)) })
	}
}
