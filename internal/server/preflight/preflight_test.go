package preflight_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/preflight"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func open(t *testing.T, tgt target.Target, maxConns int) *sql.DB {
	t.Helper()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// limits returns the *LimitError values in err, by setting.
func limits(err error) map[string]*preflight.LimitError {
	out := map[string]*preflight.LimitError{}
	var walk func(error)
	walk = func(err error) {
		var le *preflight.LimitError
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		} else if errors.As(err, &le) {
			out[le.Setting] = le
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// hold opens n connections on db, each preparing perConn statements, and
// closes them.
func hold(t *testing.T, db *sql.DB, f target.Family, n, perConn int) {
	t.Helper()
	ctx := testCtx(t)
	var conns []*sql.Conn
	var stmts []*sql.Stmt
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range n {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		conns = append(conns, c)
		for k := range perConn {
			q := fmt.Sprintf("SELECT %d + ?", k)
			if f == target.Postgres {
				q = fmt.Sprintf("SELECT %d + $1::int", k)
			}
			s, err := c.PrepareContext(ctx, q)
			if err != nil {
				t.Fatalf("connection %d, statement %d: %v", i+1, k+1, err)
			}
			stmts = append(stmts, s)
		}
	}
}

// TestDefaultSandbox checks that a sandbox takes the largest shipped run
// (TPC-C's nine tables) with no limit raised.
func TestDefaultSandbox(t *testing.T) {
	for _, tc := range []struct {
		flavor  target.Flavor
		threads int
	}{{target.FlavorMariaDB, sandbox.MaxThreadsMySQL}, {target.FlavorPostgres, sandbox.MaxThreadsPostgres}} {
		t.Run(string(tc.flavor), func(t *testing.T) {
			db := open(t, sandboxtest.Start(t, tc.flavor), 2)
			need := workload.Demand{Connections: tc.threads, PreparedPerConn: 50, Tables: 9}
			if err := preflight.Check(testCtx(t), db, tc.flavor, need, 4); err != nil {
				t.Errorf("Check(%+v) = %v, want nil", need, err)
			}
		})
	}
}

func TestMySQLLimits(t *testing.T) {
	sb := sandboxtest.StartNamed(t, target.FlavorMariaDB, func(s *sandbox.Spec) {
		s.Settings = []sandbox.Setting{{Key: "max_connections", Value: "30"}, {Key: "max_prepared_stmt_count", Value: "50"},
			{Key: "table_open_cache", Value: "50"}}
	})
	db := open(t, sb.Target, 0)
	ctx := testCtx(t)
	need := workload.Demand{Connections: 40, PreparedPerConn: 4, Tables: 2}

	err := preflight.Check(ctx, db, target.FlavorMariaDB, need, 2)
	got := limits(err)
	if c := got["max_connections"]; c == nil || c.Have != 30 || c.Need < 42 {
		t.Errorf("Check: max_connections error %+v, want have 30, need >= 42 (all: %v)", c, err)
	}
	const want = "max_prepared_stmt_count is 50, this run needs 160 (SET GLOBAL max_prepared_stmt_count = 160, or fewer --threads)"
	if p := got["max_prepared_stmt_count"]; p == nil || p.Error() != want {
		t.Errorf("Check: max_prepared_stmt_count error %v, want %q", p, want)
	}
	if len(got) != 2 {
		t.Errorf("Check: %v, want exactly two limits", err)
	}
	if err := preflight.Check(ctx, db, target.FlavorMariaDB, workload.Demand{Connections: 5, PreparedPerConn: 4}, 2); err != nil {
		t.Errorf("Check of a small run: %v", err)
	}

	// The workload account may not SET GLOBAL: Raise goes through the
	// sandbox's superuser.
	if _, err := preflight.Raise(ctx, db, db, target.FlavorMariaDB, need, 2); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("Raise as the workload account = %v, want access denied", err)
	}
	adminTarget, err := sb.Manager.Admin(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	admin := open(t, adminTarget, 1)
	notes, err := preflight.Raise(ctx, db, admin, target.FlavorMariaDB, need, 2)
	if err != nil {
		t.Fatalf("Raise: %v", err)
	}
	joined := strings.Join(notes, "\n")
	for _, w := range []string{"raised max_connections from 30 to ", "raised max_prepared_stmt_count from 50 to 160 for this run",
		"raised table_open_cache from 50 to 80 for this run"} {
		if !strings.Contains(joined, w) {
			t.Errorf("Raise notes %q lack %q", notes, w)
		}
	}
	admin.Close() // as the run's pipeline does once raised
	if err := preflight.Check(ctx, db, target.FlavorMariaDB, need, 2); err != nil {
		t.Errorf("Check after Raise: %v", err)
	}
	admin = open(t, adminTarget, 1)
	hold(t, db, target.MySQL, need.Connections, need.PreparedPerConn)
	// A connection closed a moment ago still counts on the server until it
	// is reaped: wait for the counts to settle before asking again.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if preflight.Check(ctx, db, target.FlavorMariaDB, need, 2) == nil {
			break
		}
	}
	if notes, err := preflight.Raise(ctx, db, admin, target.FlavorMariaDB, need, 2); err != nil || len(notes) != 0 {
		t.Errorf("second Raise = %q, %v; want nothing to do", notes, err)
	}

	// Beyond what the server allows: the limits say so, and nothing is
	// raised (a refused run leaves the server as it was).
	before := globals(t, admin)
	huge := workload.Demand{Connections: 200000, PreparedPerConn: 30000}
	_, err = preflight.Raise(ctx, db, admin, target.FlavorMariaDB, huge, 2)
	got = limits(err)
	if p := got["max_prepared_stmt_count"]; p == nil || p.Need != 6e9 || !strings.Contains(p.Error(), "largest value is 4294967295") {
		t.Errorf("Raise past the maximum: prepared statements %v, want need 6e9, largest 4294967295 (all: %v)", p, err)
	}
	if c := got["max_connections"]; c == nil || !strings.Contains(c.Error(), "largest value is 100000") {
		t.Errorf("Raise past the maximum: connections %v, want the largest, 100000", c)
	}
	if f := got["open_files_limit"]; f == nil || !strings.Contains(f.Error(), "--set open_files_limit=") {
		t.Errorf("Raise past the file limit: %v, want an open_files_limit error naming --set", err)
	}
	if after := globals(t, admin); after != before {
		t.Errorf("a refused Raise changed the server: %s, then %s", before, after)
	}
	// One limit out of reach (the file limit) keeps the others as they are.
	fileBound := workload.Demand{Connections: 90000}
	if _, err := preflight.Raise(ctx, db, admin, target.FlavorMariaDB, fileBound, 2); limits(err)["open_files_limit"] == nil {
		t.Errorf("Raise of 90000 connections: %v, want the file limit", err)
	}
	if after := globals(t, admin); after != before {
		t.Errorf("a refused Raise changed the server: %s, then %s", before, after)
	}
}

// globals reads the settings Raise may change.
func globals(t *testing.T, db *sql.DB) string {
	t.Helper()
	var s string
	if err := db.QueryRow("SELECT CONCAT_WS(' ', @@max_connections, @@max_prepared_stmt_count, @@table_open_cache)").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPostgresLimits(t *testing.T) {
	sb := sandboxtest.StartNamed(t, target.FlavorPostgres, func(s *sandbox.Spec) {
		s.Settings = []sandbox.Setting{{Key: "max_connections", Value: "20"}}
	})
	db := open(t, sb.Target, 0)
	ctx := testCtx(t)
	need := workload.Demand{Connections: 30, PreparedPerConn: 4}

	// The sandbox's own bootstrap connection may still be leaving.
	waitAlone(t, db)
	// 30 workers + 2 extra + 3 superuser_reserved_connections.
	const want = "max_connections is 20, this run needs 35 (ALTER SYSTEM SET max_connections = 35 and restart the server, or fewer --threads)"
	err := preflight.Check(ctx, db, target.FlavorPostgres, need, 2)
	if c := limits(err)["max_connections"]; c == nil || c.Error() != want {
		t.Errorf("Check = %v, want %q", err, want)
	}
	// Other clients' connections count.
	other := open(t, sb.Target, 0)
	for range 4 {
		c, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	err = preflight.Check(ctx, db, target.FlavorPostgres, need, 2)
	if c := limits(err)["max_connections"]; c == nil || c.Need != 39 {
		t.Errorf("Check with 4 other connections = %v, want need 39", err)
	}
	if err := preflight.Check(ctx, db, target.FlavorPostgres, workload.Demand{Connections: 8}, 2); err != nil {
		t.Errorf("Check of a small run: %v", err)
	}

	notes, err := preflight.Raise(ctx, db, db, target.FlavorPostgres, need, 2)
	c := limits(err)["max_connections"]
	if len(notes) != 0 || c == nil || !strings.Contains(c.Error(), "restart the sandbox with --set max_connections=39") {
		t.Errorf("Raise = %q, %v; want no notes and a max_connections error naming --set", notes, err)
	}
}

// waitAlone waits until db's connections are the server's only client
// backends: a backend outlives its client's disconnection a little.
func waitAlone(t *testing.T, db *sql.DB) {
	t.Helper()
	ctx := testCtx(t)
	for {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n <= db.Stats().OpenConnections {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d other client backends stay connected", n-db.Stats().OpenConnections)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
