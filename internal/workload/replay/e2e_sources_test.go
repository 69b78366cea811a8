package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/capturetest"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/capture/live"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// End-to-end tests of the capture sources e2e_test.go does not cover: the
// MariaDB slow log, MariaDB's performance_schema (live) and PostgreSQL's
// stderr log, each converted and replayed into another database.

// faithful replays at full speed on as many connections as the capture
// had sessions open at once. The logs' clocks do not always order sessions
// that follow each other (the slow log's "# Time" has whole seconds;
// PostgreSQL logs a disconnection as the backend exits, after the client
// may have begun its next session): the slot assignment orders them by
// their last statement and the lines' order, so a session never runs
// before the one that created its table.
var faithful = []string{"--speed", "max"}

// mariaCounters reads the global Com_* counters on a pool of its own,
// closed at once (no idle session left behind).
func mariaCounters(t *testing.T, env workload.Env) map[string]int64 {
	t.Helper()
	db, err := env.Dialect.Open(env.Target, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return serverCounters(t, workload.Env{DB: db, Dialect: env.Dialect})
}

// delta is b - a per counter.
func delta(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// replayCounters replays file into a new database db of sb at full speed
// and returns the Com_* counters' deltas over the replay.
func replayCounters(t *testing.T, sb *sandboxtest.Sandbox, env workload.Env, file, db string, extra ...string) map[string]int64 {
	t.Helper()
	createDB(t, sb, env, db)
	start := mariaCounters(t, env)
	run, res := replayRun(t, env, file, append(append(faithful, "--db", db), extra...)...)
	end := mariaCounters(t, env)
	if res.Errors != 0 {
		for _, ty := range run.PerType {
			if ty.Errors > 0 {
				t.Logf("%v: %s", ty.ErrorsByCode, ty.Examples)
			}
		}
		t.Fatalf("errors %v", res.ErrorsByCode)
	}
	return delta(start, end)
}

// sameCounts checks the replay's counters against the original's.
func sameCounts(t *testing.T, orig, replay map[string]int64, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if orig[k] == 0 {
			t.Errorf("%s: the original traffic sent none", k)
		} else if orig[k] != replay[k] {
			t.Errorf("%s: original traffic %d, replay %d", k, orig[k], replay[k])
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("original %v\nreplay   %v", orig, replay)
	}
}

// TestEndToEndMariaDBSlowLog: the test client's traffic, captured by
// MariaDB in its slow log (long_query_time=0), converted and replayed
// into an empty database gives the same Com_* counters as the original.
//
// The slow log holds the statements the server ran, executes with their
// substituted text; it carries no prepares nor closes of prepared
// statements (Com_stmt_prepare, Com_stmt_close) and no connects, so those
// are not compared, and the executes replay as text statements
// (Com_stmt_execute differs; they count in Com_select on both sides).
func TestEndToEndMariaDBSlowLog(t *testing.T) {
	sb, env, logs := logEnv(t, target.FlavorMariaDB)
	before := mariaCounters(t, env)
	capturetest.Traffic(t, sb.Target, e2eSessions)
	orig := delta(before, mariaCounters(t, env))
	capturetest.WaitFor(t, logs.Slow, capturetest.Marker(e2eSessions, 9))
	file := filepath.Join(t.TempDir(), "slow.capture")
	if _, err := convert.ToFile([]string{logs.Slow}, convert.Options{From: convert.MySQLSlow, Filter: capture.Filter{Users: []string{sb.Target.User}}}, file); err != nil {
		t.Fatal(err)
	}
	got := replayCounters(t, sb, env, file, "e2e_slow")
	sameCounts(t, orig, got, "Com_insert", "Com_create_table", "Com_begin", "Com_commit", "Com_set_option", "Com_select")
}

// liveCapture runs a live capture of sb while traffic runs and writes it
// to a file.
func liveCapture(t *testing.T, sb *sandboxtest.Sandbox, o live.Options, traffic func()) string {
	t.Helper()
	v, err := sb.Manager.Get(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	o.Admin, o.Duration = v.AdminTarget(), time.Minute
	o.Filter = capture.Filter{Users: []string{sb.Target.User}}
	on := make(chan struct{})
	o.Notify = func(msg string) {
		if strings.Contains(msg, " on ") {
			close(on)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := live.Capture(ctx, o, &buf)
		done <- err
	}()
	select {
	case <-on:
	case err := <-done:
		t.Fatalf("capture ended before it began: %v", err)
	}
	traffic()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "live.capture")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestEndToEndMariaDBPerfSchema: the same from a live capture of MariaDB's
// performance_schema statement history. The capture polls the server
// (its SELECTs count in Com_select), so the original counts come from an
// identical run of the test traffic before the captured one.
//
// The history holds text statements only: prepares, executes and closes
// of the binary protocol are not in it, so the replay's Com_select is the
// original's less its executes (which count in Com_select too).
func TestEndToEndMariaDBPerfSchema(t *testing.T) {
	sb, env, _ := logEnv(t, target.FlavorMariaDB)
	before := mariaCounters(t, env)
	capturetest.Traffic(t, sb.Target, e2eSessions)
	orig := delta(before, mariaCounters(t, env))
	file := liveCapture(t, sb, live.Options{PerfSchema: true}, func() { capturetest.Traffic(t, sb.Target, e2eSessions) })
	// One slot: once, on a busy machine, one session's INSERT and SELECT
	// ran before the CREATE TABLE (1146). The history has no
	// disconnections, so a slot is free when the last statement's timer
	// ends; two sequential sessions that seem to overlap get two slots,
	// and at --speed max the later one races the first (the likely cause,
	// not reproduced). The counts, not the concurrency, are what this test
	// compares.
	got := replayCounters(t, sb, env, file, "e2e_ps", "--sessions", "1")
	orig["Com_select"] -= orig["Com_stmt_execute"]
	sameCounts(t, orig, got, "Com_insert", "Com_create_table", "Com_begin", "Com_commit", "Com_set_option", "Com_select")
}

// dbInserted reads pg_stat_database's tup_inserted of db (catalog rows
// included) once it is stable: sessions flush their statistics as they end.
func dbInserted(t *testing.T, sb *sandboxtest.Sandbox, env workload.Env, db string) int64 {
	t.Helper()
	admin, err := sb.Manager.Admin(sb.Name) // not the traffic's user: not captured
	if err != nil {
		t.Fatal(err)
	}
	c, err := env.Dialect.Open(admin, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	conn, err := c.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n, prev int64 = 0, -1
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := conn.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT tup_inserted FROM pg_stat_database WHERE datname = $1", db).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == prev {
			return n
		}
		prev = n
	}
	return n
}

// TestEndToEndPostgresStderr: the test client's traffic, captured by
// PostgreSQL in its stderr log (log_line_prefix "%m [%p] %q%u@%d", the
// process id as the session), converted and replayed into an empty
// database gives the same table and database statistics as the original.
func TestEndToEndPostgresStderr(t *testing.T) {
	sb, env, logs := logEnv(t, target.FlavorPostgres)
	before := dbInserted(t, sb, env, sb.Target.Database)
	capturetest.Traffic(t, sb.Target, e2eSessions)
	capturetest.WaitFor(t, logs.Stderr, capturetest.Marker(e2eSessions, 9))
	capturetest.WaitCount(t, logs.Stderr, "user="+sb.Target.User+" database="+sb.Target.Database+" host=", e2eSessions+1)
	file := filepath.Join(t.TempDir(), "stderr.capture")
	o := convert.Options{From: convert.PGStderr, LogLinePrefix: capturetest.PostgresPrefix, Filter: capture.Filter{Users: []string{sb.Target.User}}}
	if _, err := convert.ToFile([]string{logs.Stderr}, o, file); err != nil {
		t.Fatal(err)
	}
	orig := tableCounts(t, env, sb.Target.Database)
	origIns := dbInserted(t, sb, env, sb.Target.Database) - before
	createDB(t, sb, env, "e2e_stderr")
	run, res := replayRun(t, env, file, append(faithful, "--db", "e2e_stderr")...)
	if res.Errors != 0 {
		for _, ty := range run.PerType {
			if ty.Errors > 0 {
				t.Logf("%v: %s", ty.ErrorsByCode, ty.Examples)
			}
		}
		t.Fatalf("errors %v", res.ErrorsByCode)
	}
	if got := tableCounts(t, env, "e2e_stderr"); got != orig {
		t.Errorf("pg_stat_user_tables of cap_t after the replay %v, original %v (rows inserted, scans)", got, orig)
	}
	if got := dbInserted(t, sb, env, "e2e_stderr"); got != origIns || got == 0 {
		t.Errorf("pg_stat_database tup_inserted: replay %d, original %d", got, origIns)
	}
	if ty := fpByText(t, run, "select count (*) from cap_t"); ty.Count != e2eSessions {
		t.Errorf("SELECT COUNT(*): %+v", ty)
	}
	if ty := fpByText(t, run, "insert into cap_t"); ty.Count != e2eSessions+1 {
		t.Errorf("INSERT: %+v", ty)
	}
}
