package lab

import (
	"context"
	"fmt"
	"os"
	"sort"
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

// tlsParams renders a target's TLS parameters as "k=v k=v" in key order.
func tlsParams(t target.Target) string {
	var keys []string
	for k := range t.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(" %s=%s", k, t.Params[k])
	}
	return s
}

// TestTLSAxisTargets: with tls: [off, on] each sandbox starts once, with
// TLS on, and only the tls=on cells' targets verify the server with its CA
// (tls/tls-ca for MariaDB, sslmode/sslrootcert for PostgreSQL); the runs'
// plan coordinates carry tls.
func TestTLSAxisTargets(t *testing.T) {
	w := newWorld()
	var seen []string
	w.onRun = func(j Job) {
		seen = append(seen, fmt.Sprintf("%s tls=%s:%s", j.Step.CoordMap()["server"], j.Step.CoordMap()["tls"], tlsParams(j.Target)))
	}
	p := mustParse(t, `name: tls
servers:
  - {name: a, flavor: mariadb}
  - {name: b, flavor: postgres}
workloads: [oltp_point_select]
axes:
  tls: [off, on]
rounds: 1
`)
	if _, err := w.lab().Run(context.Background(), p, Options{Session: "s"}); err != nil {
		t.Fatal(err)
	}
	equal(t, "starts", w.logged("start"), []string{"start lab-a tls", "start lab-b tls"})
	equal(t, "targets", seen, []string{
		"a tls=off:",
		"a tls=on: tls=true tls-ca=/ca/lab-a.pem",
		"b tls=off:",
		"b tls=on: sslmode=verify-full sslrootcert=/ca/lab-b.pem",
	})
	for _, r := range w.runs {
		if v := r.Plan.Coords["tls"]; v != "on" && v != "off" {
			t.Errorf("run %d: plan coords %v lack tls", r.ID, r.Plan.Coords)
		}
	}
	if n := w.statuses()[summary.StatusComplete]; n != 4 {
		t.Errorf("%d complete runs, want 4: %v", n, w.lines)
	}
}

// TestServerTLSWithoutAxis: a server's tls: true starts its sandbox with
// TLS and its runs verify it; another server of the plan stays plain.
func TestServerTLSWithoutAxis(t *testing.T) {
	w := newWorld()
	var seen []string
	w.onRun = func(j Job) { seen = append(seen, j.Step.CoordMap()["server"]+":"+tlsParams(j.Target)) }
	p := mustParse(t, `name: tls
servers:
  - {name: a, flavor: mariadb, tls: true}
  - {name: b, flavor: mariadb}
workloads: [oltp_point_select]
rounds: 1
`)
	if _, err := w.lab().Run(context.Background(), p, Options{Session: "s"}); err != nil {
		t.Fatal(err)
	}
	equal(t, "starts", w.logged("start"), []string{"start lab-a tls", "start lab-b"})
	equal(t, "targets", seen, []string{"a: tls=true tls-ca=/ca/lab-a.pem", "b:"})
}

// TestTLSAxisChecks: the tls axis is no workload parameter.
func TestTLSAxisChecks(t *testing.T) {
	p := mustParse(t, "name: c\nservers:\n  - {name: a, flavor: mariadb}\nworkloads: [toy]\naxes:\n  tls: [off, on]\n")
	if errs := Check(p, toys); len(errs) > 0 {
		t.Fatal(errs)
	}
}

// TestWithTLSCopies: WithTLS leaves the target it is given as it was.
func TestWithTLSCopies(t *testing.T) {
	plain := target.Target{Flavor: target.FlavorMariaDB, Params: map[string]string{"x": "1"}}
	got := WithTLS(plain, "/ca.pem")
	if len(plain.Params) != 1 || tlsParams(got) != " tls=true tls-ca=/ca.pem x=1" {
		t.Errorf("plain %v, with TLS %v", plain.Params, got.Params)
	}
}

// sslProbe is a pipeline that stores each run with the session's cipher
// as seen through the job's target (SHOW STATUS LIKE 'Ssl_cipher',
// pg_stat_ssl).
type sslProbe struct {
	st      *store.Store
	ciphers map[string]string // "server tls=on|off": cipher
}

func (*sslProbe) Prepare(context.Context, Job) error { return nil }

func (pr *sslProbe) Run(ctx context.Context, j Job) (*summary.Run, error) {
	d, err := dialect.For(j.Target.Family())
	if err != nil {
		return nil, err
	}
	db, err := d.Open(j.Target, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var cipher string
	if j.Target.Family() == target.Postgres {
		err = db.QueryRowContext(ctx, "SELECT coalesce(cipher, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&cipher)
	} else {
		var name string
		err = db.QueryRowContext(ctx, "SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
	}
	if err != nil {
		return nil, err
	}
	c := j.Step.CoordMap()
	pr.ciphers[c["server"]+" tls="+c["tls"]] = cipher
	run := &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: j.Step.Workload,
		StartedAt: time.Now().UTC(), EndedAt: time.Now().UTC(), Threads: j.Threads(), Plan: j.Ref(), Tags: map[string]string{}}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	_, err = pr.st.SaveRun(ctx, run)
	return run, err
}

// TestLocalTLSAxis runs tls: [off, on] on real MariaDB and PostgreSQL
// sandboxes: the tls=on runs' sessions are encrypted (verified against the
// sandbox's CA), the tls=off runs' are not, and the stored runs carry the
// tls coordinate.
func TestLocalTLSAxis(t *testing.T) {
	m := sandboxtest.Manager(t)
	if bins, _ := m.Discover(); !hasFlavor(bins, target.FlavorMariaDB) || !hasFlavor(bins, target.FlavorPostgres) {
		if os.Getenv("CI") != "" {
			t.Fatal("no mariadb or postgres server binary")
		}
		t.Skip("no mariadb or postgres server binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st := storetest.Temp(t)
	p := mustParse(t, `name: tlsreal
servers:
  - {name: m, flavor: mariadb, profile: fast}
  - {name: pg, flavor: postgres, profile: fast}
workloads: [probe]
axes:
  tls: [off, on]
rounds: 1
`)
	pr := &sslProbe{st: st, ciphers: map[string]string{}}
	l := &Lab{Store: st, Sandboxes: Local{Manager: m, Catalog: catalog.Open(t.TempDir())}, Pipeline: pr}
	res, err := l.Run(ctx, p, Options{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Session: "s", Ran: 4}); res != want {
		rows, _ := st.List(ctx, store.Filter{})
		for _, r := range rows {
			if full, err := st.Run(ctx, r.ID); err == nil {
				t.Logf("run %d: %s %s", r.ID, full.Status, full.Error)
			}
		}
		t.Fatalf("result %+v, want %+v", res, want)
	}
	for _, srv := range []string{"m", "pg"} {
		if off, on := pr.ciphers[srv+" tls=off"], pr.ciphers[srv+" tls=on"]; off != "" || on == "" {
			t.Errorf("server %s: cipher with tls=off %q, tls=on %q; want plain and encrypted", srv, off, on)
		}
	}
	rows, err := st.List(ctx, store.Filter{Tags: map[string]string{TagPlan: "tlsreal"}})
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]bool{}
	for _, r := range rows {
		cells[r.Tags[TagCell]] = true
	}
	if len(cells) != 4 || !cells["workload=probe,server=m,tls=off"] || !cells["workload=probe,server=pg,tls=on"] {
		t.Errorf("stored cells %v", cells)
	}
}
