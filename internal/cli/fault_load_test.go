package cli

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Fault cases of `dbarena load` (issue 33 item 6): the server is killed or
// frozen while a generated dump loads. The load ends within a bound, is
// stored failed with exit 1, says what happened and how to go on, and can
// be run again.

// genDump writes a dump of tables m0..m<tables-1> with no DROP TABLE (as
// a hand-made or pg_dump dump): rowsPer rows each, 200 rows a statement.
func genDump(t testing.TB, pg bool, tables, rowsPer int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gen.sql")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if pg {
		fmt.Fprintln(w, "-- PostgreSQL database dump")
	}
	pad := strings.Repeat("x", 60)
	for i := 0; i < tables; i++ {
		fmt.Fprintf(w, "CREATE TABLE m%d (id int PRIMARY KEY, v varchar(100));\n", i)
		for r := 0; r < rowsPer; r += 200 {
			fmt.Fprintf(w, "INSERT INTO m%d VALUES ", i)
			for k := r; k < r+200 && k < rowsPer; k++ {
				if k > r {
					w.WriteByte(',')
				}
				fmt.Fprintf(w, "(%d,'%s%d')", k, pad, k)
			}
			w.WriteString(";\n")
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitRows waits until table m0 of sb's database holds rows, so that a
// fault hits a load under way.
func waitRows(t *testing.T, sb *sandbox.Sandbox, ar *asyncRun) {
	t.Helper()
	db := openAs(t, sb.Target())
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var n int
		if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM m0").Scan(&n); err == nil && n > 0 {
			return
		}
		select {
		case r := <-ar.done:
			t.Fatalf("load ended before the fault: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("no rows in m0 within a minute")
}

// countRows sums the rows of m0..m<tables-1>.
func countRows(t *testing.T, db *sql.DB, tables int) int {
	t.Helper()
	total := 0
	for i := 0; i < tables; i++ {
		var n int
		if err := db.QueryRowContext(context.Background(), fmt.Sprintf("SELECT count(*) FROM m%d", i)).Scan(&n); err != nil {
			t.Fatalf("m%d: %v", i, err)
		}
		total += n
	}
	return total
}

// TestFaultLoadServerKilled: kill -9 of the server during a load. The load
// fails (exit 1, stored failed) within a bound, names the lost connection
// and --drop-existing; after a restart, loading again without it fails on
// the tables left, and with it loads every row.
func TestFaultLoadServerKilled(t *testing.T) {
	const tables, rowsPer = 12, 40000
	for _, fl := range faultFlavors() {
		t.Run(string(fl), func(t *testing.T) {
			tg, sb := faultSandbox(t, fl)
			pg := fl == target.FlavorPostgres
			dump := genDump(t, pg, tables, rowsPer)
			dir := t.TempDir()
			results := filepath.Join(dir, "r.db")
			ar := startRun(t, "load", dump, tg, "--results", results, "--threads", "2", "--no-checksum")
			waitRows(t, sb, ar)
			killed := time.Now()
			signalServer(t, sb.Name, syscall.SIGKILL)
			r := ar.wait(t)
			if took := time.Since(killed); took > 30*time.Second {
				t.Errorf("load ended %v after the kill", took)
			}
			if r.code != ExitFailed {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), r.stderr)
			}
			if !strings.Contains(r.stderr, "lost the connection to the server") || !strings.Contains(r.stderr, "--drop-existing") {
				t.Errorf("stderr does not name the lost connection and what to do:\n%s", r.stderr)
			}
			run := storedRun(t, results)
			if run.Status != summary.StatusFailed || !strings.Contains(run.Error, "lost the connection") {
				t.Errorf("stored %s %q, want failed", run.Status, run.Error)
			}
			if !run.EndedAt.After(run.StartedAt) {
				t.Errorf("stored end %v, start %v", run.EndedAt, run.StartedAt)
			}

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := suite.mgr.Start(ctx, sandbox.Spec{Name: sb.Name}); err != nil {
				t.Fatalf("restart: %v", err)
			}
			again := dbarena(t, "load", dump, tg, "--results", filepath.Join(dir, "again.db"), "--no-checksum")
			if again.code != ExitFailed || !strings.Contains(again.stderr, "already exists") || !strings.Contains(again.stderr, "--drop-existing") {
				t.Errorf("second load without --drop-existing: exit %d\n%s", again.code, again.stderr)
			}
			dbarena(t, "load", dump, tg, "--results", filepath.Join(dir, "resume.db"), "--no-checksum", "--drop-existing").mustSucceed(t)
			if n := countRows(t, openAs(t, sb.Target()), tables); n != tables*rowsPer {
				t.Errorf("%d rows after --drop-existing, want %d", n, tables*rowsPer)
			}
		})
	}
}

// TestFaultLoadServerStopped: SIGSTOP of the server during a load. A
// warning comes, then the load fails at --stall-timeout (exit 1, stored
// failed), bounded in time; the server is thawed and the load runs again.
func TestFaultLoadServerStopped(t *testing.T) {
	const tables, rowsPer = 12, 40000
	for _, fl := range faultFlavors() {
		t.Run(string(fl), func(t *testing.T) {
			tg, sb := faultSandbox(t, fl)
			dump := genDump(t, fl == target.FlavorPostgres, tables, rowsPer)
			dir := t.TempDir()
			results := filepath.Join(dir, "r.db")
			ar := startRun(t, "load", dump, tg, "--results", results, "--threads", "2", "--no-checksum",
				"--stall-timeout", "6s")
			waitRows(t, sb, ar)
			stopped := time.Now()
			signalServer(t, sb.Name, syscall.SIGSTOP)
			r := ar.wait(t)
			took := time.Since(stopped)
			signalServer(t, sb.Name, syscall.SIGCONT)
			if took < 5*time.Second || took > 40*time.Second {
				t.Errorf("load ended %v after SIGSTOP, want about the 6s stall timeout", took)
			}
			if r.code != ExitFailed {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), r.stderr)
			}
			if !strings.Contains(r.stderr, "warning: no progress and no answer from the server") ||
				!strings.Contains(r.stderr, "answered nothing for 6s") || !strings.Contains(r.stderr, "--drop-existing") {
				t.Errorf("stderr:\n%s", r.stderr)
			}
			if run := storedRun(t, results); run.Status != summary.StatusFailed || !strings.Contains(run.Error, "--stall-timeout") {
				t.Errorf("stored %s %q, want failed", run.Status, run.Error)
			}
			dbarena(t, "load", dump, tg, "--results", filepath.Join(dir, "resume.db"), "--no-checksum", "--drop-existing").mustSucceed(t)
			if n := countRows(t, openAs(t, sb.Target()), tables); n != tables*rowsPer {
				t.Errorf("%d rows after --drop-existing, want %d", n, tables*rowsPer)
			}
		})
	}
}
