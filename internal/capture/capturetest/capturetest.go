// Package capturetest gives tests real server logs to convert: sandboxes
// started with their statement logs on, and a test client whose traffic
// has what a replay must carry (several sessions, prepared statements, a
// transaction, session variables, a statement that depends on an earlier
// one in the same session).
//
// Use it with sandboxtest.Main in TestMain:
//
//	sb := capturetest.StartMariaDB(t)
//	capturetest.Traffic(t, sb.Target, 3)
//	logs := capturetest.MariaDBLogs(t, sb) // general, slow
//	convert.ToFile([]string{logs.General}, convert.Options{From: convert.MySQLGeneral}, out)
package capturetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// MariaDBSettings turn on the general and slow logs (long_query_time=0,
// every statement) as files in the data directory.
var MariaDBSettings = []sandbox.Setting{
	{Key: "log_output", Value: "FILE"},
	{Key: "general_log", Value: "1"},
	{Key: "general_log_file", Value: "general.log"},
	{Key: "slow_query_log", Value: "1"},
	{Key: "slow_query_log_file", Value: "slow.log"},
	{Key: "long_query_time", Value: "0"},
	{Key: "log_slow_verbosity", Value: "query_plan"},
	{Key: "performance_schema", Value: "ON"},
}

// PostgresPrefix is the log_line_prefix of PostgresSettings (Debian's
// default: the session is the process id).
const PostgresPrefix = "%m [%p] %q%u@%d "

// PostgresSettings write every statement and session boundary to a
// stderr log and a csvlog under the data directory (log/pg.log,
// log/pg.csv).
var PostgresSettings = []sandbox.Setting{
	{Key: "logging_collector", Value: "on"},
	{Key: "log_destination", Value: "stderr,csvlog"},
	{Key: "log_directory", Value: "log"},
	{Key: "log_filename", Value: "pg.log"},
	{Key: "log_line_prefix", Value: PostgresPrefix},
	{Key: "log_statement", Value: "all"},
	{Key: "log_connections", Value: "on"},
	{Key: "log_disconnections", Value: "on"},
	// With log_statement=all, durations come as lone "duration: N ms"
	// lines after each statement.
	{Key: "log_min_duration_statement", Value: "0"},
}

// StartMariaDB starts a MariaDB sandbox of the test's own with
// MariaDBSettings.
func StartMariaDB(tb testing.TB) *sandboxtest.Sandbox {
	tb.Helper()
	return sandboxtest.StartNamed(tb, target.FlavorMariaDB, func(s *sandbox.Spec) { s.Settings = MariaDBSettings })
}

// StartPostgres starts a PostgreSQL sandbox of the test's own with
// PostgresSettings.
func StartPostgres(tb testing.TB) *sandboxtest.Sandbox {
	tb.Helper()
	return sandboxtest.StartNamed(tb, target.FlavorPostgres, func(s *sandbox.Spec) { s.Settings = PostgresSettings })
}

// Logs are the paths of a sandbox's logs.
type Logs struct {
	General, Slow string // MariaDB
	Stderr, CSV   string // PostgreSQL
}

// LogsOf returns the log paths of a sandbox started by StartMariaDB or
// StartPostgres.
func LogsOf(tb testing.TB, sb *sandboxtest.Sandbox) Logs {
	tb.Helper()
	v, err := sb.Manager.Get(sb.Name)
	if err != nil {
		tb.Fatal(err)
	}
	if v.Flavor == target.FlavorPostgres {
		return Logs{Stderr: filepath.Join(v.Datadir, "log", "pg.log"), CSV: filepath.Join(v.Datadir, "log", "pg.csv")}
	}
	return Logs{General: filepath.Join(v.Datadir, "general.log"), Slow: filepath.Join(v.Datadir, "slow.log")}
}

// Marker tags statement step of session s: Traffic's statements carry
// it as a comment, so a test can check each session's order.
func Marker(s, step int) string { return fmt.Sprintf("/*cap:%d:%d*/", s, step) }

// MarkedSteps are the markers' steps each Traffic session sends, in
// order (6 is the prepared statement, executed twice).
var MarkedSteps = []int{1, 2, 4, 5, 6, 6, 8, 9}

// Traffic sends the test traffic on sessions connections of tgt, one
// after the other, and returns when they are closed. Per session s, in
// order (mysql / postgres):
//
//	1 SET @v = s              / SET work_mem = '(s+1)MB'            session variable
//	2 SELECT @v + 1           / SELECT current_setting('work_mem')  depends on 1
//	  BEGIN (the driver's)
//	4 INSERT INTO cap_t (v) VALUES (s)
//	5 SELECT LAST_INSERT_ID() / SELECT lastval()                    depends on 4
//	  COMMIT
//	6 a prepared SELECT (server-side), executed twice
//	8 a three-line SELECT
//	9 SELECT COUNT(*) FROM cap_t
//
// The table cap_t is created first by a session of its own.
func Traffic(tb testing.TB, tgt target.Target, sessions int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		tb.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0) // closing a Conn ends its session (a Quit in the log)
	pg := tgt.Family() == target.Postgres
	run := func(c *sql.Conn, q string, args ...any) {
		tb.Helper()
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	one := func(c *sql.Conn, q string, args ...any) string {
		tb.Helper()
		var s string
		if err := c.QueryRowContext(ctx, q, args...).Scan(&s); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
		return s
	}
	c, err := db.Conn(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if pg {
		run(c, "CREATE TABLE IF NOT EXISTS cap_t (id SERIAL PRIMARY KEY, v INT)")
	} else {
		run(c, "CREATE TABLE IF NOT EXISTS cap_t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
	}
	run(c, "INSERT INTO cap_t (v) VALUES (0)")
	c.Close()
	for s := 1; s <= sessions; s++ {
		c, err := db.Conn(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if pg {
			run(c, fmt.Sprintf("%s SET work_mem = '%dMB'", Marker(s, 1), s+1))
			if got := one(c, Marker(s, 2)+" SELECT current_setting('work_mem')"); got != fmt.Sprintf("%dMB", s+1) {
				tb.Fatalf("session variable: got %s", got)
			}
		} else {
			run(c, fmt.Sprintf("%s SET @v = %d", Marker(s, 1), s))
			if got := one(c, Marker(s, 2)+" SELECT @v + 1"); got != fmt.Sprint(s+1) {
				tb.Fatalf("session variable: got %s", got)
			}
		}
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("%s INSERT INTO cap_t (v) VALUES (%d)", Marker(s, 4), s)); err != nil {
			tb.Fatal(err)
		}
		last := Marker(s, 5) + " SELECT LAST_INSERT_ID()"
		if pg {
			last = Marker(s, 5) + " SELECT lastval()"
		}
		var id string
		if err := tx.QueryRowContext(ctx, last).Scan(&id); err != nil || id == "0" {
			tb.Fatalf("%s: %q %v", last, id, err)
		}
		if err := tx.Commit(); err != nil {
			tb.Fatal(err)
		}
		q := Marker(s, 6) + " SELECT v FROM cap_t WHERE id = ?"
		if pg {
			q = strings.Replace(q, "?", "$1", 1)
		}
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			tb.Fatal(err)
		}
		for _, arg := range []any{id, 1} {
			var v int
			if err := st.QueryRowContext(ctx, arg).Scan(&v); err != nil {
				tb.Fatal(err)
			}
		}
		st.Close()
		one(c, Marker(s, 8)+" SELECT\n  CONCAT(1,\n  'two') AS b")
		one(c, Marker(s, 9)+" SELECT COUNT(*) FROM cap_t")
		c.Close()
	}
}

// WaitFor waits (up to 30 s) until the file at path holds want: servers
// write their logs asynchronously.
func WaitFor(tb testing.TB, path, want string) {
	tb.Helper()
	WaitCount(tb, path, want, 1)
}

// WaitCount waits (up to 30 s) until the file at path holds want n times.
func WaitCount(tb testing.TB, path, want string, n int) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Count(string(b), want) >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: %q not logged after 30 s; it holds:\n%s", path, want, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
