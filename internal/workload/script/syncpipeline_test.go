package script

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// syncScript is a pipeline of two segments (and an empty third): the
// first two inserts share a transaction, the third has its own.
const syncScript = `\startpipeline
INSERT INTO sync_log VALUES (:tool, 1, txid_current());
INSERT INTO sync_log VALUES (:tool, 1, txid_current());
\syncpipeline
INSERT INTO sync_log VALUES (:tool, 2, txid_current());
\syncpipeline
\endpipeline
`

// pgbenchMajor is the major version of the pgbench first on PATH, 0 when
// there is none.
func pgbenchMajor(t *testing.T) (string, int) {
	path, err := exec.LookPath("pgbench")
	if err != nil {
		return "", 0
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", path, err)
	}
	f := strings.Fields(string(out)) // pgbench (PostgreSQL) 18.6
	major := 0
	if len(f) >= 3 {
		fmt.Sscanf(f[2], "%d", &major)
	}
	return path, major
}

// TestSyncPipeline: pgbench 17's \syncpipeline splits a pipeline into
// transactions as pgbench 17/18 does (the reference is the pgbench first
// on PATH, run on the same server when it is 17 or newer): every
// statement reaches the server, the segments commit apart, and the
// statements are counted against their lines. A failure in the first
// segment fails the event there and rolls back that segment only; the
// connection goes on.
func TestSyncPipeline(t *testing.T) {
	const n = 20
	file := writeFile(t, "sync.sql", syncScript)
	env := sandboxtest.Env(t, target.FlavorPostgres)
	ctx := context.Background()
	for _, q := range []string{"DROP TABLE IF EXISTS sync_log", "CREATE TABLE sync_log (tool text, seg int CHECK (seg < 100), x bigint)"} {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// tool -> rows, transactions
	figures := func(tool string) (int, int) {
		t.Helper()
		var rows, txs int
		if err := env.DB.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT x) FROM sync_log WHERE tool = $1", tool).Scan(&rows, &txs); err != nil {
			t.Fatal(err)
		}
		return rows, txs
	}
	if pgbench, major := pgbenchMajor(t); major >= 17 {
		for _, proto := range []string{Extended, Prepared} {
			args, penv := pgbenchConn(t, env)
			cmd := exec.Command(pgbench, append([]string{"-n", "-c", "1", "-t", strconv.Itoa(n), "-M", proto,
				"-D", "tool=pgbench-" + proto, "-f", file}, args...)...)
			cmd.Env = penv
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pgbench -M %s: %v\n%s", proto, err, out)
			}
			if rows, txs := figures("pgbench-" + proto); rows != 3*n || txs != 2*n {
				t.Fatalf("pgbench %d -M %s: %d rows in %d transactions, want %d in %d", major, proto, rows, txs, 3*n, 2*n)
			}
		}
	} else {
		t.Logf("no pgbench 17 or newer on PATH (%q is %d): dbarena checked against pgbench 17's documented behaviour only", pgbench, major)
	}
	for _, run := range protoClients(target.FlavorPostgres) {
		proto, client := run[0], run[1]
		if proto == Simple {
			continue
		}
		t.Run(proto+"/"+client, func(t *testing.T) {
			tool := "dbarena-" + proto + "-" + client
			wl := setup(t, "--file", file, "--protocol", proto, "--client", client, "--define", "tool="+tool)
			conn, err := env.DB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			runEvents(t, wl, env, conn, n)
			if rows, txs := figures(tool); rows != 3*n || txs != 2*n {
				t.Errorf("%d rows in %d transactions, want %d in %d (as pgbench)", rows, txs, 3*n, 2*n)
			}
			sum := &summary.Run{}
			wl.Summarize(sum)
			for _, line := range []int{2, 3, 5} {
				if got := sum.Figures[fmt.Sprintf("stmt.%s:%d.count", file, line)]; got != n {
					t.Errorf("stmt %s:%d.count = %v, want %d", file, line, got, n)
				}
			}
			// seg 500 breaks the check in the first segment: the event
			// fails at \endpipeline (line 7) with the violation, counted
			// against line 3; the first segment is rolled back, the second
			// commits; the connection is usable.
			failing := tool + "-failing"
			ffile := writeFile(t, "syncfail.sql", strings.Replace(syncScript, ":tool, 1, txid_current());\n\\syncpipeline", ":tool, 500, txid_current());\n\\syncpipeline", 1))
			fwl := setup(t, "--file", ffile, "--protocol", proto, "--client", client, "--define", "tool="+failing)
			w := newWorker(t, fwl, env, conn, 0, 7)
			var ev workload.Event
			err = w.Event(ctx, &ev)
			if err == nil || !strings.Contains(err.Error(), ":7:") || env.Dialect.Classify(err).Code != "23514" {
				t.Fatalf("event: %v, want a check violation at \\endpipeline (line 7)", err)
			}
			if w.pw != nil {
				if _, err := w.pw.Exec("SELECT 1", nil); err != nil {
					t.Fatalf("wire connection after a failed pipeline: %v", err)
				}
			}
			w.Close()
			var segs string
			if err := env.DB.QueryRowContext(ctx, "SELECT coalesce(string_agg(seg::text, ','), '') FROM sync_log WHERE tool = $1", failing).Scan(&segs); err != nil {
				t.Fatal(err)
			}
			if segs != "2" {
				t.Errorf("after a failure in the first segment the table holds segments %q, want only the second (2)", segs)
			}
			sum = &summary.Run{}
			fwl.Summarize(sum)
			if got := sum.Figures["stmt."+ffile+":3.errors.23514"]; got != 1 {
				t.Errorf("errors.23514 of line 3 = %v, want 1", got)
			}
		})
	}
}
