package sandbox

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// stmtsPerConn is what each connection of TestCapacity prepares: 2048 x 10
// exceeds MariaDB's default max_prepared_stmt_count (16382).
const stmtsPerConn = 10

// TestCapacity opens MaxThreads connections at once to a default sandbox
// as the workload account, each holding stmtsPerConn prepared statements,
// as the largest shipped run does.
func TestCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("opens thousands of connections")
	}
	for _, tc := range []struct {
		flavor target.Flavor
		conns  int
	}{
		{target.FlavorMariaDB, MaxThreadsMySQL},
		{target.FlavorPostgres, MaxThreadsPostgres},
	} {
		t.Run(string(tc.flavor), func(t *testing.T) {
			m := testManager(t, false)
			requireServer(t, m, tc.flavor)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			sb, err := m.Start(ctx, Spec{Name: "capacity", Flavor: tc.flavor})
			if err != nil {
				t.Fatal(err)
			}
			holdConnections(ctx, t, sb.Target(), tc.conns)
		})
	}
}

// holdConnections opens n connections (64 dialling at a time), prepares
// stmtsPerConn statements on each, checks that the server counts them
// all, and closes them.
func holdConnections(ctx context.Context, t *testing.T, tgt target.Target, n int) {
	t.Helper()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: n + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conns := make([]*sql.Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 64)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gate <- struct{}{}
			defer func() { <-gate }()
			conns[i], errs[i] = holdOne(ctx, db, tgt.Family())
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	failed := 0
	for i, err := range errs {
		if err != nil {
			if failed < 3 {
				t.Errorf("connection %d of %d: %v", i+1, n, err)
			}
			failed++
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d connections failed", failed, n)
	}
	var q string
	if tgt.Family() == target.Postgres {
		q = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
	} else {
		q = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'"
	}
	var connected int
	if err := conns[0].QueryRowContext(ctx, q).Scan(&connected); err != nil {
		t.Fatal(err)
	}
	if connected < n {
		t.Errorf("server counts %d connections, want at least %d", connected, n)
	}
	if tgt.Family() == target.MySQL {
		var prepared int
		q := "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'PREPARED_STMT_COUNT'"
		if err := conns[0].QueryRowContext(ctx, q).Scan(&prepared); err != nil {
			t.Fatal(err)
		}
		if prepared < n*stmtsPerConn {
			t.Errorf("server holds %d prepared statements, want at least %d", prepared, n*stmtsPerConn)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d connections holding %d prepared statements each", n, stmtsPerConn)
}

// holdOne opens a connection and prepares stmtsPerConn statements on it,
// left open on purpose: they are dropped with the connection.
func holdOne(ctx context.Context, db *sql.DB, f target.Family) (*sql.Conn, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for k := range stmtsPerConn {
		q := fmt.Sprintf("SELECT %d + ?", k)
		if f == target.Postgres {
			q = fmt.Sprintf("SELECT %d + $1::int", k)
		}
		if _, err := c.PrepareContext(ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("prepare statement %d: %w", k+1, err)
		}
	}
	return c, nil
}

// TestServerFileLimit checks that a server gets the hard RLIMIT_NOFILE as
// its soft limit even when dbarena's own soft limit is low (Go hands its
// children the soft limit it started with).
func TestServerFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	if lim.Max < 2048 {
		t.Skipf("hard file limit %d is too low to test", lim.Max)
	}
	low := lim
	low.Cur = 1024
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	m := testManager(t, false)
	requireServer(t, m, target.FlavorPostgres)
	sb, err := m.Start(testCtx(t), Spec{Name: "files", Flavor: target.FlavorPostgres, Profile: ProfileFast})
	if err != nil {
		t.Fatal(err)
	}
	soft, hard := procFileLimit(t, sb.PID)
	if soft != hard || hard != lim.Max {
		t.Errorf("server's open files limit: soft %d, hard %d; want both %d", soft, hard, lim.Max)
	}
}

// procFileLimit reads "Max open files" of pid from /proc.
func procFileLimit(t *testing.T, pid int) (soft, hard uint64) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, "Max open files")); len(f) >= 2 && strings.HasPrefix(l, "Max open files") {
			soft, _ = strconv.ParseUint(f[0], 10, 64)
			hard, _ = strconv.ParseUint(f[1], 10, 64)
			return soft, hard
		}
	}
	t.Fatalf("no open files limit in /proc/%d/limits", pid)
	return 0, 0
}
