package replay

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/capturetest"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

const e2eSessions = 3

// logEnv starts a sandbox with its statement logs on, sends the test
// client's traffic, and returns the environment and the logs.
func logEnv(t *testing.T, flavor target.Flavor) (*sandboxtest.Sandbox, workload.Env, capturetest.Logs) {
	t.Helper()
	var sb *sandboxtest.Sandbox
	if flavor == target.FlavorPostgres {
		sb = capturetest.StartPostgres(t)
	} else {
		sb = capturetest.StartMariaDB(t)
	}
	d, err := dialect.For(flavor.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(sb.Target, dialect.OpenOptions{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return sb, workload.Env{DB: db, Dialect: d, Target: sb.Target}, capturetest.LogsOf(t, sb)
}

// createDB makes an empty database name on sb owned by (or granted to)
// the workload account.
func createDB(t *testing.T, sb *sandboxtest.Sandbox, env workload.Env, name string) {
	t.Helper()
	admin, err := sb.Manager.Admin(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	adb, err := env.Dialect.Open(admin, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer adb.Close()
	qs := []string{"CREATE DATABASE " + name, "GRANT ALL ON " + name + ".* TO '" + env.Target.User + "'@'127.0.0.1'"}
	if env.Dialect.Family() == target.Postgres {
		qs = []string{"CREATE DATABASE " + name + " OWNER " + env.Target.User}
	}
	for _, q := range qs {
		if _, err := adb.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// tableCounts reads PostgreSQL's statistics of cap_t in db once the
// sessions' statistics are flushed: rows inserted and scans.
func tableCounts(t *testing.T, env workload.Env, db string) [2]int64 {
	t.Helper()
	tg := env.Target
	tg.Database = db
	c, err := env.Dialect.Open(tg, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := c.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out, prev [2]int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		conn.ExecContext(context.Background(), "SELECT pg_stat_clear_snapshot()")
		err := conn.QueryRowContext(context.Background(), `SELECT n_tup_ins, coalesce(seq_scan, 0) + coalesce(idx_scan, 0)
			FROM pg_stat_user_tables WHERE relname = 'cap_t'`).Scan(&out[0], &out[1])
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		if out == prev && out[0] > 0 {
			return out // stable
		}
		prev = out
	}
	return out
}

// TestEndToEndPostgres: the test client's traffic, captured by the server
// in its csvlog, converted, and replayed into an empty database of the
// same server gives the same table statistics as the original.
func TestEndToEndPostgres(t *testing.T) {
	sb, env, logs := logEnv(t, target.FlavorPostgres)
	capturetest.Traffic(t, sb.Target, e2eSessions)
	capturetest.WaitFor(t, logs.CSV, capturetest.Marker(e2eSessions, 9))
	capturetest.WaitCount(t, logs.CSV, "user="+sb.Target.User+" database="+sb.Target.Database+" host=", e2eSessions+1)
	file := filepath.Join(t.TempDir(), "pg.capture")
	if _, err := convert.ToFile([]string{logs.CSV}, convert.Options{From: convert.PGCSV, Filter: capture.Filter{Users: []string{sb.Target.User}}}, file); err != nil {
		t.Fatal(err)
	}
	orig := tableCounts(t, env, sb.Target.Database)
	createDB(t, sb, env, "e2e_replay")
	// At the captured concurrency (see faithful in e2e_sources_test.go):
	// the csvlog's disconnection lines come after the client's next
	// session began, which the slot assignment must not take for overlap.
	run, res := replayRun(t, env, file, append(faithful, "--db", "e2e_replay")...)
	if res.Errors != 0 {
		for _, ty := range run.PerType {
			if ty.Errors > 0 {
				t.Logf("%v: %s", ty.ErrorsByCode, ty.Examples)
			}
		}
		t.Fatalf("errors %v", res.ErrorsByCode)
	}
	if got := tableCounts(t, env, "e2e_replay"); got != orig {
		t.Errorf("cap_t statistics after the replay %v, original %v (rows inserted, scans)", got, orig)
	}
	if ty := fpByText(t, run, "select count (*) from cap_t"); ty.Count != e2eSessions {
		t.Errorf("SELECT COUNT(*): %+v", ty)
	}
	_ = os.Remove(file)
}

// TestEndToEndMariaDB: the same from MariaDB's general log: the replay's
// Com_* counters equal the original traffic's (executes of the general
// log carry their substituted text: they run as text statements, so
// Com_stmt_execute is the one counter that differs).
func TestEndToEndMariaDB(t *testing.T) {
	sb, env, logs := logEnv(t, target.FlavorMariaDB)
	counters := func() map[string]int64 {
		// A pool of its own, closed at once: the general log must show a
		// Quit for every Connect.
		db, err := env.Dialect.Open(env.Target, dialectOpts())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		return serverCounters(t, workload.Env{DB: db, Dialect: env.Dialect})
	}
	before := counters()
	capturetest.Traffic(t, sb.Target, e2eSessions)
	orig := counters()
	last := capturetest.Marker(e2eSessions, 9)
	capturetest.WaitFor(t, logs.General, last)
	b, _ := os.ReadFile(logs.General)
	capturetest.WaitCount(t, logs.General, " Quit\t", strings.Count(string(b), " Connect\t"))
	file := filepath.Join(t.TempDir(), "my.capture")
	if _, err := convert.ToFile([]string{logs.General}, convert.Options{From: convert.MySQLGeneral, Filter: capture.Filter{Users: []string{sb.Target.User}}}, file); err != nil {
		t.Fatal(err)
	}
	createDB(t, sb, env, "e2e_replay")
	start := counters()
	// At the captured concurrency: the general log's whole seconds cannot
	// order a Quit and the next session's Connect; the lines' order does.
	_, res := replayRun(t, env, file, append(faithful, "--db", "e2e_replay")...)
	end := counters()
	if res.Errors != 0 {
		t.Fatalf("errors %v", res.ErrorsByCode)
	}
	for _, k := range []string{"Com_insert", "Com_create_table", "Com_commit", "Com_set_option", "Com_stmt_prepare"} {
		if o, r := orig[k]-before[k], end[k]-start[k]; o != r {
			t.Errorf("%s: original traffic %d, replay %d", k, o, r)
		}
	}
	// Executes count in Com_select as well as Com_stmt_execute.
	o, r := orig["Com_select"]-before["Com_select"], end["Com_select"]-start["Com_select"]
	if o != r {
		t.Errorf("Com_select: original %d, replay %d", o, r)
	}
}
