package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

var flavors = []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres}

// counter is a workload.Progress that counts.
type counter struct{ total, rows, bytes atomic.Int64 }

func (c *counter) SetTotal(n int64)   { c.total.Store(n) }
func (c *counter) Add(rows, by int64) { c.rows.Add(rows); c.bytes.Add(by) }

// setup builds a workload from command-line style args.
func setup(t testing.TB, name string, args ...string) workload.Workload {
	t.Helper()
	wl := byName(t, name)
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	return wl
}

func countRows(t testing.TB, env workload.Env, table string) int64 {
	t.Helper()
	var n int64
	if err := env.DB.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func sbtestTables(t testing.TB, env workload.Env) []string {
	t.Helper()
	q := "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'sbtest%'"
	if env.Dialect.Family() == target.Postgres {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'sbtest%'"
	}
	rows, err := env.DB.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

// clientsFor lists the --client values that make a difference on flavor.
func clientsFor(flavor target.Flavor) []string {
	return []string{ClientAuto, ClientSQL}
}

// runEvents runs n events of wl on one connection, the worker's own when wl
// dials its connections itself as the runner would let it, and returns
// their counts.
func runEvents(t testing.TB, env workload.Env, wl workload.Workload, id, n int) []workload.Queries {
	t.Helper()
	ctx := context.Background()
	var w workload.Worker
	var err error
	if d, ok := wl.(workload.Dialer); ok && d.OwnsConns(env) {
		w, err = d.DialWorker(ctx, env, id, int64(id)+7)
	} else {
		var conn *sql.Conn
		conn, err = env.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		w, err = wl.(workload.Runner).NewWorker(ctx, env, conn, id, int64(id)+7)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []workload.Queries
	for i := 0; i < n; i++ {
		var ev workload.Event
		if err := w.Event(ctx, &ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		out = append(out, ev.Queries)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIntegrationWorkloads(t *testing.T) {
	type check func(t *testing.T, q workload.Queries)
	exact := func(want workload.Queries) check {
		return func(t *testing.T, q workload.Queries) {
			t.Helper()
			if q != want {
				t.Fatalf("event queries %+v, want %+v", q, want)
			}
		}
	}
	// writesOrOther: a DML matching no row counts as other, as in sysbench.
	writesOrOther := func(read, dml, trx int64) check {
		return func(t *testing.T, q workload.Queries) {
			t.Helper()
			if q.Read != read || q.Write+q.Other != dml+trx || q.Other < trx {
				t.Fatalf("event queries %+v, want %d reads and %d writes+other (%d BEGIN/COMMIT)", q, read, dml, trx)
			}
		}
	}
	tests := []struct {
		name  string
		args  []string
		check check
		// rows is the expected row count of all tables after the events,
		// given the count before and the summed queries.
		rows func(before int64, sum workload.Queries) int64
	}{
		{"oltp_read_write", nil, writesOrOther(14, 4, 2), nil},
		{"oltp_read_only", nil, exact(workload.Queries{Read: 14, Other: 2}), stable},
		{"oltp_write_only", []string{"--ps-mode=disable"}, writesOrOther(0, 4, 2), nil},
		{"oltp_point_select", nil, exact(workload.Queries{Read: 1}), stable},
		{"oltp_update_index", nil, exact(workload.Queries{Write: 1}), stable},
		{"oltp_update_non_index", nil, exact(workload.Queries{Write: 1}), stable},
		{"oltp_insert", nil, exact(workload.Queries{Write: 1}), func(b int64, s workload.Queries) int64 { return b + s.Write }},
		{"oltp_delete", nil, writesOrOther(0, 1, 0), func(b int64, s workload.Queries) int64 { return b - s.Write }},
		{"select_random_points", []string{"--tables=1"}, exact(workload.Queries{Read: 1}), stable},
		{"select_random_ranges", []string{"--tables=1"}, exact(workload.Queries{Read: 1}), stable},
	}
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			for _, tt := range tests {
				for _, client := range clientsFor(flavor) {
					t.Run(tt.name+strings.Join(tt.args, "")+"/client="+client, func(t *testing.T) {
						args := append([]string{"--tables=2", "--table-size=1000", "--client=" + client}, tt.args...)
						wl := setup(t, tt.name, args...)
						wire := wl.(workload.Dialer).OwnsConns(env)
						if want := client == ClientAuto; wire != want {
							t.Fatalf("OwnsConns = %v, want %v", wire, want)
						}
						ctx := context.Background()
						cfg := wl.(*Workload).Config()
						_ = wl.(workload.Cleaner).Cleanup(ctx, env)
						p := &counter{}
						if err := wl.(workload.Preparer).Prepare(ctx, env, 4, p); err != nil {
							t.Fatal(err)
						}
						want := int64(cfg.Tables) * 1000
						if p.total.Load() != want || p.rows.Load() != want {
							t.Errorf("progress total %d rows %d, want %d", p.total.Load(), p.rows.Load(), want)
						}
						before := int64(0)
						for i := 1; i <= cfg.Tables; i++ {
							n := countRows(t, env, tableName(i))
							if n != 1000 {
								t.Errorf("%s has %d rows", tableName(i), n)
							}
							before += n
						}
						var sum workload.Queries
						for id := 0; id < 2; id++ {
							for _, q := range runEvents(t, env, wl, id, 150) {
								tt.check(t, q)
								sum.Add(q)
							}
						}
						after := int64(0)
						for i := 1; i <= cfg.Tables; i++ {
							after += countRows(t, env, tableName(i))
						}
						if tt.rows != nil {
							if want := tt.rows(before, sum); after != want {
								t.Errorf("%d rows after the events, want %d (queries %+v)", after, want, sum)
							}
						} else if after < before {
							t.Errorf("rows went from %d to %d", before, after)
						}
						if err := wl.(workload.Cleaner).Cleanup(ctx, env); err != nil {
							t.Fatal(err)
						}
						if left := sbtestTables(t, env); len(left) != 0 {
							t.Errorf("tables left after cleanup: %v", left)
						}
					})
				}
			}
		})
	}
}

func stable(before int64, _ workload.Queries) int64 { return before }

func TestIntegrationBulkInsert(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			ctx := context.Background()
			wl := setup(t, "bulk_insert").(*BulkInsert)
			wl.SetThreads(2)
			_ = wl.Cleanup(ctx, env)
			if err := wl.Prepare(ctx, env, 2, &counter{}); err != nil {
				t.Fatal(err)
			}
			const n = 60000 // more than one 512 KiB statement
			for id := 0; id < 2; id++ {
				var writes int64
				for _, q := range runEvents(t, env, wl, id, n) {
					writes += q.Write
				}
				if writes < 1 {
					t.Errorf("worker %d: no INSERT counted in %d events", id, n)
				}
				if got := countRows(t, env, tableName(id+1)); got != n {
					t.Errorf("%s has %d rows, want %d", tableName(id+1), got, n)
				}
			}
			if err := wl.Cleanup(ctx, env); err != nil {
				t.Fatal(err)
			}
			if left := sbtestTables(t, env); len(left) != 0 {
				t.Errorf("tables left after cleanup: %v", left)
			}
		})
	}
}

// TestIntegrationSplitLoad loads one table with more threads than tables
// (explicit ids by range) and checks that ids are 1..N, k is in range, the
// index exists, and that later INSERTs without an id do not collide.
func TestIntegrationSplitLoad(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			ctx := context.Background()
			wl := setup(t, "oltp_insert", "--tables=1", "--table-size=25000")
			_ = wl.(workload.Cleaner).Cleanup(ctx, env)
			start := time.Now()
			if err := wl.(workload.Preparer).Prepare(ctx, env, 4, &counter{}); err != nil {
				t.Fatal(err)
			}
			t.Logf("loaded 25000 rows with 4 threads in %v", time.Since(start))
			var n, lo, hi, kmin, kmax int64
			if err := env.DB.QueryRow("SELECT COUNT(*), MIN(id), MAX(id), MIN(k), MAX(k) FROM sbtest1").Scan(&n, &lo, &hi, &kmin, &kmax); err != nil {
				t.Fatal(err)
			}
			if n != 25000 || lo != 1 || hi != 25000 || kmin < 1 || kmax > 25000 {
				t.Errorf("count %d ids [%d, %d] k [%d, %d]", n, lo, hi, kmin, kmax)
			}
			for _, q := range runEvents(t, env, wl, 0, 50) {
				if q.Write != 1 {
					t.Fatalf("insert counted %+v", q)
				}
			}
			if got := countRows(t, env, "sbtest1"); got != 25050 {
				t.Errorf("%d rows after 50 inserts", got)
			}
			_ = wl.(workload.Cleaner).Cleanup(ctx, env)
		})
	}
}

// sysbenchArgs are the connection options of sysbench for env.
func sysbenchArgs(env workload.Env) []string {
	tg := env.Target
	if env.Dialect.Family() == target.Postgres {
		return []string{"--db-driver=pgsql", "--pgsql-host=" + tg.Host, "--pgsql-port=" + strconv.Itoa(tg.Port),
			"--pgsql-user=" + tg.User, "--pgsql-password=" + tg.Password, "--pgsql-db=" + tg.Database}
	}
	a := []string{"--db-driver=mysql", "--mysql-user=" + tg.User, "--mysql-password=" + tg.Password, "--mysql-db=" + tg.Database}
	if tg.Socket != "" {
		return append(a, "--mysql-socket="+tg.Socket)
	}
	return append(a, "--mysql-host="+tg.Host, "--mysql-port="+strconv.Itoa(tg.Port))
}

func sysbench(t testing.TB, env workload.Env, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("sysbench not on PATH")
	}
	out, err := exec.Command(path, append(args, sysbenchArgs(env)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench %v: %v\n%s", args[:2], err, out)
	}
	return string(out)
}

// schemaOf describes sbtest tables: SHOW CREATE TABLE on MySQL, columns and
// index definitions on PostgreSQL.
func schemaOf(t testing.TB, env workload.Env, tables int) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= tables; i++ {
		if env.Dialect.Family() == target.Postgres {
			rows, err := env.DB.Query(`SELECT column_name || ' ' || data_type || ' ' || COALESCE(character_maximum_length::text, '') ||
				' ' || is_nullable || ' ' || COALESCE(column_default, '') FROM information_schema.columns
				WHERE table_name = $1 ORDER BY ordinal_position`, tableName(i))
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(strings.Join(scanStrings(t, rows), "\n"))
			rows, err = env.DB.Query(`SELECT indexdef FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`, tableName(i))
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(strings.Join(scanStrings(t, rows), "\n"))
			continue
		}
		var name, ddl string
		if err := env.DB.QueryRow("SHOW CREATE TABLE "+tableName(i)).Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		// AUTO_INCREMENT=N reflects the rows, not the DDL.
		if j := strings.Index(ddl, " AUTO_INCREMENT="); j >= 0 {
			k := strings.IndexByte(ddl[j+1:], ' ')
			ddl = ddl[:j] + ddl[j+1+k:]
		}
		b.WriteString(ddl)
	}
	return b.String()
}

func scanStrings(t testing.TB, rows *sql.Rows) []string {
	t.Helper()
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestIntegrationSysbenchCompat runs sysbench 1.0 against dbarena's tables
// and dbarena against sysbench's, and compares the schemas both create.
func TestIntegrationSysbenchCompat(t *testing.T) {
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Skip("sysbench not on PATH")
	}
	for _, flavor := range flavors {
		for _, autoInc := range []string{"on", "off"} {
			t.Run(fmt.Sprintf("%s/auto-inc=%s", flavor, autoInc), func(t *testing.T) {
				env := sandboxtest.Env(t, flavor)
				ctx := context.Background()
				opts := []string{"--tables=2", "--table-size=500", "--auto_inc=" + autoInc}
				wl := setup(t, "oltp_read_write", "--tables=2", "--table-size=500", "--auto-inc="+autoInc)
				_ = wl.(workload.Cleaner).Cleanup(ctx, env)

				sysbench(t, env, append([]string{"oltp_read_write", "prepare"}, opts...)...)
				theirs := schemaOf(t, env, 2)
				for _, q := range runEvents(t, env, wl, 0, 50) {
					if q.Read != 14 {
						t.Fatalf("dbarena on sysbench's tables: %+v", q)
					}
				}
				sysbench(t, env, append([]string{"oltp_read_write", "cleanup"}, opts...)...)

				if err := wl.(workload.Preparer).Prepare(ctx, env, 2, &counter{}); err != nil {
					t.Fatal(err)
				}
				ours := schemaOf(t, env, 2)
				if ours != theirs {
					t.Errorf("schema differs:\nsysbench:\n%s\ndbarena:\n%s", theirs, ours)
				}
				out := sysbench(t, env, append([]string{"oltp_read_write", "run", "--events=50", "--time=0"}, opts...)...)
				if !strings.Contains(out, "read:                            700") {
					t.Errorf("sysbench on dbarena's tables:\n%s", out)
				}
				out = sysbench(t, env, append([]string{"oltp_insert", "run", "--events=50", "--time=0"}, opts...)...)
				if !strings.Contains(out, "write:                           50") {
					t.Errorf("sysbench oltp_insert on dbarena's tables:\n%s", out)
				}
				if err := wl.(workload.Cleaner).Cleanup(ctx, env); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkPrepare measures the load rate (rows/s) into a sandbox.
func BenchmarkPrepare(b *testing.B) {
	for _, flavor := range flavors {
		for _, threads := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/threads=%d", flavor, threads), func(b *testing.B) {
				env := sandboxtest.Env(b, flavor)
				ctx := context.Background()
				const rows = 100000
				wl := setup(b, "oltp_read_write", "--tables=2", "--table-size="+strconv.Itoa(rows))
				var loaded int64
				var elapsed time.Duration
				for i := 0; i < b.N; i++ {
					_ = wl.(workload.Cleaner).Cleanup(ctx, env)
					start := time.Now()
					if err := wl.(workload.Preparer).Prepare(ctx, env, threads, &counter{}); err != nil {
						b.Fatal(err)
					}
					elapsed += time.Since(start)
					loaded += 2 * rows
				}
				b.ReportMetric(float64(loaded)/elapsed.Seconds(), "rows/s")
				_ = wl.(workload.Cleaner).Cleanup(ctx, env)
			})
		}
	}
}

// BenchmarkSysbenchPrepare measures sysbench 1.0's own prepare of the same
// tables, as the reference for BenchmarkPrepare.
func BenchmarkSysbenchPrepare(b *testing.B) {
	for _, flavor := range flavors {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", flavor, threads), func(b *testing.B) {
				env := sandboxtest.Env(b, flavor)
				const rows = 100000
				opts := []string{"--tables=2", "--table-size=" + strconv.Itoa(rows), "--threads=" + strconv.Itoa(threads)}
				var elapsed time.Duration
				for i := 0; i < b.N; i++ {
					sysbench(b, env, append([]string{"oltp_read_write", "cleanup"}, opts...)...)
					start := time.Now()
					sysbench(b, env, append([]string{"oltp_read_write", "prepare"}, opts...)...)
					elapsed += time.Since(start)
				}
				b.ReportMetric(float64(2*rows*b.N)/elapsed.Seconds(), "rows/s")
				sysbench(b, env, append([]string{"oltp_read_write", "cleanup"}, opts...)...)
			})
		}
	}
}
