package script

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

type nopProgress struct{}

func (nopProgress) SetTotal(int64)   {}
func (nopProgress) Add(int64, int64) {}

// countProgress counts what a prepare reports.
type countProgress struct{ total, rows, bytes atomic.Int64 }

func (p *countProgress) SetTotal(n int64)      { p.total.Store(n) }
func (p *countProgress) Add(rows, bytes int64) { p.rows.Add(rows); p.bytes.Add(bytes) }

func setup(t testing.TB, args ...string) *Workload {
	t.Helper()
	wl := New().(*Workload)
	fs := pflag.NewFlagSet("script", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	return wl
}

func writeFile(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// counters reads the server's statement counters for what a worker did:
// MySQL's session Com_* on the worker's own connection; PostgreSQL's
// per-table counters, after the worker's session flushed its statistics.
func counters(t testing.TB, env workload.Env, conn *sql.Conn, table string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	out := map[string]int64{}
	if env.Dialect.Family() == target.MySQL {
		rows, err := conn.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name IN ('Com_select','Com_insert','Com_update','Com_begin','Com_commit')")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var v int64
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[strings.ToLower(strings.TrimPrefix(k, "Com_"))] = v
		}
		return out
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	var ins, upd, seq, idx int64
	err := env.DB.QueryRowContext(ctx, "SELECT n_tup_ins, n_tup_upd, coalesce(seq_scan,0), coalesce(idx_scan,0) FROM pg_stat_user_tables WHERE relname = $1", table).Scan(&ins, &upd, &seq, &idx)
	if err != nil {
		t.Fatal(err)
	}
	out["insert"], out["update"], out["seq"], out["idx"] = ins, upd, seq, idx
	return out
}

func diff(a, b map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range b {
		d[k] = v - a[k]
	}
	return d
}

// newWorker makes a worker as the runner would: on its own wire
// connection when wl dials one (PostgreSQL, --client auto), else on conn.
func newWorker(t testing.TB, wl *Workload, env workload.Env, conn *sql.Conn, id int, seed int64) *worker {
	t.Helper()
	ctx := context.Background()
	var w workload.Worker
	var err error
	if wl.OwnsConns(env) {
		w, err = wl.DialWorker(ctx, env, id, seed)
	} else {
		w, err = wl.NewWorker(ctx, env, conn, id, seed)
	}
	if err != nil {
		t.Fatal(err)
	}
	return w.(*worker)
}

// flush makes a wire worker's session publish its statistics (as the
// test's own connection does in counters), before the worker closes.
func flush(t testing.TB, w *worker) {
	t.Helper()
	if w.pw == nil {
		return
	}
	for _, q := range []string{"SELECT pg_stat_force_next_flush()", "SELECT 1"} {
		if _, err := w.pw.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func runEvents(t testing.TB, wl *Workload, env workload.Env, conn *sql.Conn, n int) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := newWorker(t, wl, env, conn, 0, 42)
	defer w.Close()
	types := map[string]int64{}
	for i := 0; i < n; i++ {
		var ev workload.Event
		if err := w.Event(ctx, &ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		types[ev.Type]++
	}
	flush(t, w)
	return types
}

// clientsFor lists the --client values that make a difference on flavor.
func clientsFor(fl target.Flavor) []string {
	if fl == target.FlavorPostgres {
		return []string{ClientAuto, ClientSQL}
	}
	return []string{ClientAuto}
}

var flavors = []target.Flavor{target.FlavorPostgres, target.FlavorMariaDB}

// protoClients pairs every --protocol with every --client of flavor.
func protoClients(fl target.Flavor) [][2]string {
	var out [][2]string
	for _, p := range []string{Simple, Extended, Prepared} {
		for _, c := range clientsFor(fl) {
			out = append(out, [2]string{p, c})
		}
	}
	return out
}

// pgbench's tpcb-like script, unchanged, on both families: the server's
// counters see exactly the statements the script issues.
func TestBuiltinTPCB(t *testing.T) {
	const n = 150
	for _, fl := range flavors {
		t.Run(string(fl), func(t *testing.T) {
			env := sandboxtest.Env(t, fl)
			ctx := context.Background()
			p := &countProgress{}
			if err := setup(t, "--builtin", "tpcb-like").Prepare(ctx, env, 2, p); err != nil {
				t.Fatal(err)
			}
			if p.rows.Load() != p.total.Load() || p.total.Load() != 100011 || p.bytes.Load() < 100011*6 {
				t.Errorf("progress: %d rows (%d bytes) of %d announced, want 100011", p.rows.Load(), p.bytes.Load(), p.total.Load())
			}
			var total int64
			for _, run := range protoClients(fl) {
				proto, client := run[0], run[1]
				t.Run(proto+"/"+client, func(t *testing.T) {
					wl := setup(t, "--builtin", "tpcb-like", "--protocol", proto, "--client", client)
					if err := wl.Ready(ctx, env); err != nil {
						t.Fatal(err)
					}
					conn, err := env.DB.Conn(ctx)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close()
					before := counters(t, env, conn, "pgbench_accounts")
					types := runEvents(t, wl, env, conn, n)
					total += n
					after := counters(t, env, conn, "pgbench_accounts")
					d := diff(before, after)
					if types["tpcb-like"] != n {
						t.Errorf("event types %v", types)
					}
					if fl == target.FlavorMariaDB {
						want := map[string]int64{"select": n, "insert": n, "update": 3 * n, "begin": n, "commit": n}
						for k, v := range want {
							if d[k] != v {
								t.Errorf("Com_%s: %d, want %d (all %v)", k, d[k], v, d)
							}
						}
					} else if d["update"] != n || d["idx"] != 2*n {
						// Index scans only: the checks below scan the whole
						// table from another connection, whose statistics
						// arrive whenever that connection flushes them.
						t.Errorf("pgbench_accounts: %v, want %d updates and %d index scans", d, n, 2*n)
					}
					var hist, sumDelta, sumA, sumT, sumB int64
					row := env.DB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM pgbench_history), (SELECT coalesce(sum(delta),0) FROM pgbench_history),
						(SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)`)
					if err := row.Scan(&hist, &sumDelta, &sumA, &sumT, &sumB); err != nil {
						t.Fatal(err)
					}
					if hist != total || sumA != sumDelta || sumT != sumDelta || sumB != sumDelta {
						t.Errorf("history %d rows (want %d); sums: delta %d accounts %d tellers %d branches %d", hist, total, sumDelta, sumA, sumT, sumB)
					}
					run := &summary.Run{}
					wl.Summarize(run)
					if got := run.Figures["stmt.tpcb-like:6.count"]; got != n {
						t.Errorf("stmt.tpcb-like:6.count = %v, want %d", got, n)
					}
					if !strings.Contains(wl.FormatSummary(run), "UPDATE pgbench_accounts") {
						t.Error("summary lacks the statement")
					}
				})
			}
			if err := (&Workload{}).Cleanup(ctx, env); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// everyMeta uses every meta-command but \startpipeline, in SQL both
// families accept.
const everyMeta = `-- every meta-command
\set n random(1, 3)
\set d :n * 2 + \
  0
SELECT :n AS one, :d AS two \gset p_
\if :p_one = :n AND :p_two = 2 * :n
INSERT INTO script_log (kind, v) VALUES ('if', :p_two);
\elif :n > 100
INSERT INTO script_log (kind, v) VALUES ('elif', 0);
\else
INSERT INTO script_log (kind, v) VALUES ('else', 0);
\endif
SELECT count(*) AS c FROM script_log \aset
\if :c > 0
\sleep 1 us
\endif
\sleep :n us
UPDATE script_log SET v = v + 0 WHERE kind = 'none';
`

func TestEveryMetaCommand(t *testing.T) {
	const n = 60
	file := writeFile(t, "every.sql", everyMeta)
	for _, fl := range flavors {
		t.Run(string(fl), func(t *testing.T) {
			env := sandboxtest.Env(t, fl)
			ctx := context.Background()
			for _, run := range protoClients(fl) {
				proto, client := run[0], run[1]
				t.Run(proto+"/"+client, func(t *testing.T) {
					for _, q := range []string{"DROP TABLE IF EXISTS script_log", "CREATE TABLE script_log (kind varchar(10), v int)"} {
						if _, err := env.DB.ExecContext(ctx, q); err != nil {
							t.Fatal(err)
						}
					}
					wl := setup(t, "--file", file, "--protocol", proto, "--client", client)
					conn, err := env.DB.Conn(ctx)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close()
					before := counters(t, env, conn, "script_log")
					runEvents(t, wl, env, conn, n)
					d := diff(before, counters(t, env, conn, "script_log"))
					if fl == target.FlavorMariaDB {
						if d["select"] != 2*n || d["insert"] != n || d["update"] != n {
							t.Errorf("counters %v, want %d selects, %d inserts and updates", d, 2*n, n)
						}
					} else if d["insert"] != n || d["seq"]+d["idx"] != 2*n {
						t.Errorf("counters %v, want %d inserts and %d scans", d, n, 2*n)
					}
					var ifs, bad int64
					if err := env.DB.QueryRowContext(ctx, "SELECT count(*), sum(CASE WHEN kind <> 'if' OR v < 2 OR v > 6 OR v % 2 <> 0 THEN 1 ELSE 0 END) FROM script_log").Scan(&ifs, &bad); err != nil {
						t.Fatal(err)
					}
					if ifs != n || bad != 0 {
						t.Errorf("script_log: %d rows (want %d), %d not from the \\if branch with v=2n", ifs, n, bad)
					}
				})
			}
		})
	}
}

// A failing statement is counted by error code against its line.
func TestStatementErrors(t *testing.T) {
	file := writeFile(t, "err.sql", "SELECT 1;\nSELECT * FROM no_such_table;\n")
	env := sandboxtest.Env(t, target.FlavorPostgres)
	for _, client := range clientsFor(target.FlavorPostgres) {
		t.Run(client, func(t *testing.T) {
			wl := setup(t, "--file", file, "--client", client)
			ctx := context.Background()
			conn, err := env.DB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			w := newWorker(t, wl, env, conn, 0, 1)
			defer w.Close()
			var ev workload.Event
			err = w.Event(ctx, &ev)
			if err == nil || !strings.Contains(err.Error(), "err.sql:2:") || env.Dialect.Classify(err).Code != "42P01" {
				t.Fatalf("error %v (class %v), want err.sql:2 and 42P01", err, env.Dialect.Classify(err))
			}
			run := &summary.Run{}
			wl.Summarize(run)
			k := "stmt." + file + ":2.errors.42P01"
			if run.Figures[k] != 1 || run.Figures["stmt."+file+":1.count"] != 1 {
				t.Errorf("figures %v", run.Figures)
			}
		})
	}
}

// A script error names its file and line and is found by Validate.
func TestValidateScriptErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"SELECT 1;\n\\startpipeline\nSELECT 2;\n\\endpipeline\n", ":2: \\startpipeline needs --protocol extended or prepared"},
		{"-- nothing but a comment\n", ":1: empty command list for script"},
		{"\\set x 1\nSELECT " + strings.Repeat(":x, ", 255) + ":x;\n", ":2: statement has too many arguments (maximum is 255)"},
		{"\\frobnicate\n", ":1: unknown meta-command \\frobnicate"},
		{"\\set x (1 +\n", ":1: \\set x: syntax error"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			file := writeFile(t, "bad.sql", tc.text)
			wl := New().(*Workload)
			fs := pflag.NewFlagSet("script", pflag.ContinueOnError)
			wl.Flags(fs)
			proto := Extended
			if strings.Contains(tc.want, "needs --protocol") {
				proto = Simple
			}
			if err := fs.Parse([]string{"--file", file, "--protocol", proto}); err != nil {
				t.Fatal(err)
			}
			errs := wl.Validate()
			var se *pgscript.Error
			if len(errs) != 1 || !errors.As(errs[0], &se) || errs[0].Error() != file+tc.want+strings.TrimPrefix(errs[0].Error(), file+tc.want) || !strings.HasPrefix(errs[0].Error(), file+tc.want) {
				t.Errorf("Validate: %v, want %s%s", errs, file, tc.want)
			}
		})
	}
	for _, args := range [][]string{
		{"--builtin", "nope"}, {"--protocol", "binary", "--builtin", "select-only"}, {"--file", "/no/such/file"},
		{"--builtin", "select-only@x"}, {"--builtin", "select-only@0"}, {"--define", "novalue", "--builtin", "select-only"},
	} {
		wl := New().(*Workload)
		fs := pflag.NewFlagSet("script", pflag.ContinueOnError)
		wl.Flags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if errs := wl.Validate(); len(errs) == 0 {
			t.Errorf("Validate(%v): no error", args)
		}
	}
}

// mysqlslap-style --query and --create, and weights between scripts.
func TestQueryAndCreate(t *testing.T) {
	create := writeFile(t, "create.sql", "DROP TABLE IF EXISTS slap|CREATE TABLE slap (id int)|")
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	wl := setup(t, "--create", create, "--delimiter", "|", "--query", "INSERT INTO slap VALUES (1)|SELECT count(*) FROM slap", "--query", "SELECT 1")
	conn, err := env.DB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	types := runEvents(t, wl, env, conn, 100)
	if types["query1"]+types["query2"] != 100 || types["query1"] < 20 || types["query2"] < 20 {
		t.Errorf("types %v: want both queries about evenly", types)
	}
	var rows int64
	if err := env.DB.QueryRow("SELECT count(*) FROM slap").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != types["query1"] {
		t.Errorf("slap has %d rows, want %d", rows, types["query1"])
	}
}

func TestDefaultScript(t *testing.T) {
	wl := setup(t)
	if len(wl.scripts) != 1 || wl.scripts[0].s.Name != "tpcb-like" {
		t.Errorf("without a script: %v, want pgbench's default tpcb-like", wl.builtins)
	}
}

// Every client hashes and permutes alike (one :default_seed per run).
func TestDefaultSeedShared(t *testing.T) {
	file := writeFile(t, "seed.sql", "\\set h hash(7)\n\\set p permute(3, 1000)\nSELECT :h AS h, :p AS p, :default_seed AS s \\gset\n")
	env := sandboxtest.Env(t, target.FlavorPostgres)
	wl := setup(t, "--file", file, "--random-seed", "5432")
	wl.SetThreads(2)
	ctx := context.Background()
	var got []string
	for id := 0; id < 2; id++ {
		conn, err := env.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		w := newWorker(t, wl, env, conn, id, int64(100+id))
		defer w.Close()
		var ev workload.Event
		if err := w.Event(ctx, &ev); err != nil {
			t.Fatal(err)
		}
		var vs []string
		for _, n := range []string{"h", "p", "s"} {
			v, _ := w.st.Get(n)
			vs = append(vs, v.Text())
		}
		got = append(got, strings.Join(vs, "/"))
	}
	// pgbench 15.18 -c 2 --random-seed=5432 draws :default_seed
	// 7312993047133655103 (its third draw: after the two clients').
	if got[0] != got[1] || !strings.HasSuffix(got[0], "/7312993047133655103") {
		t.Errorf("clients 0 and 1: %v, want equal, :default_seed pgbench's", got)
	}
}

func TestDemandAndReady(t *testing.T) {
	wl := setup(t, "--builtin", "tpcb-like", "--protocol", Prepared)
	if d := wl.Demand(4); d.Connections != 4 || d.PreparedPerConn != 11 || d.Tables != 4 {
		t.Errorf("demand %+v", d)
	}
	env := sandboxtest.Env(t, target.FlavorPostgres)
	ctx := context.Background()
	if err := wl.Cleanup(ctx, env); err != nil {
		t.Fatal(err)
	}
	var nr *workload.NotReadyError
	if err := wl.Ready(ctx, env); !errors.As(err, &nr) {
		t.Errorf("Ready without tables: %v, want NotReadyError", err)
	}
}

// \startpipeline on PostgreSQL's extended protocol: every statement
// reaches the server, a failing one is counted against its line, and the
// connection stays usable.
func TestPipeline(t *testing.T) {
	const n = 40
	file := writeFile(t, "pipe.sql", `\set v random(1, 9)
\startpipeline
INSERT INTO pipe_log VALUES (:v);
\set w :v * 10
INSERT INTO pipe_log VALUES (:w);
SELECT count(*) FROM pipe_log;
\endpipeline
`)
	env := sandboxtest.Env(t, target.FlavorPostgres)
	ctx := context.Background()
	for _, run := range protoClients(target.FlavorPostgres) {
		proto, client := run[0], run[1]
		if proto == Simple {
			continue
		}
		t.Run(proto+"/"+client, func(t *testing.T) {
			for _, q := range []string{"DROP TABLE IF EXISTS pipe_log", "CREATE TABLE pipe_log (v int CHECK (v < 100))"} {
				if _, err := env.DB.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			wl := setup(t, "--file", file, "--protocol", proto, "--client", client)
			conn, err := env.DB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			before := counters(t, env, conn, "pipe_log")
			runEvents(t, wl, env, conn, n)
			d := diff(before, counters(t, env, conn, "pipe_log"))
			if d["insert"] != 2*n || d["seq"] != n {
				t.Errorf("counters %v, want %d inserts and %d scans", d, 2*n, n)
			}
			var rows, tens int64
			if err := env.DB.QueryRowContext(ctx, "SELECT count(*), sum(CASE WHEN v >= 10 THEN 1 ELSE 0 END) FROM pipe_log").Scan(&rows, &tens); err != nil {
				t.Fatal(err)
			}
			if rows != 2*n || tens != n {
				t.Errorf("pipe_log: %d rows, %d of them :w; want %d and %d", rows, tens, 2*n, n)
			}
			run := &summary.Run{}
			wl.Summarize(run)
			if got := run.Figures["stmt."+file+":5.count"]; got != n {
				t.Errorf("stmt %s:5.count = %v, want %d", file, got, n)
			}
			// A check violation inside the pipeline fails the event at
			// \endpipeline, is counted against its line, and the
			// connection goes on.
			if _, err := env.DB.ExecContext(ctx, "ALTER TABLE pipe_log DROP CONSTRAINT pipe_log_v_check, ADD CHECK (v < 10) NOT VALID"); err != nil {
				t.Fatal(err)
			}
			w := newWorker(t, wl, env, conn, 1, 7)
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
			var one int
			if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
				t.Fatalf("connection after a failed pipeline: %v", err)
			}
			run = &summary.Run{}
			wl.Summarize(run)
			if got := run.Figures["stmt."+file+":5.errors.23514"]; got != 1 {
				t.Errorf("errors.23514 of line 5 = %v, want 1 (%v)", got, run.Figures)
			}
		})
	}
}
