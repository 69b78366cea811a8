package tpcc

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// loadTime is fixed so that separate loads write identical rows.
var loadTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// progress counts, and cancels a load once it passed cancelAt rows.
type progress struct {
	total, rows atomic.Int64
	cancelAt    int64
	cancel      context.CancelFunc
}

func (p *progress) SetTotal(n int64) { p.total.Store(n) }
func (p *progress) Add(rows, _ int64) {
	if n := p.rows.Add(rows); p.cancel != nil && n >= p.cancelAt {
		p.cancel()
	}
}

func setup(t testing.TB, args ...string) *Workload {
	t.Helper()
	wl := New()
	fs := pflag.NewFlagSet("tpcc", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	wl.cfg.LoadTime = loadTime
	return wl
}

func scalar(t testing.TB, env workload.Env, q string) int64 {
	t.Helper()
	var n int64
	if err := env.DB.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// perItem reads rows of an id and three numbers into a map by id.
func perItem(t testing.TB, env workload.Env, q string) map[int64][3]int64 {
	t.Helper()
	rows, err := env.DB.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := map[int64][3]int64{}
	for rows.Next() {
		var id int64
		var v [3]int64
		if err := rows.Scan(&id, &v[0], &v[1], &v[2]); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out[id] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// checkStock checks New-Order's stock updates (clause 2.4.2.2) against the
// order lines it inserted (orders above the initial 3000): per item, S_YTD
// grew by their quantities, S_ORDER_CNT by their number, S_REMOTE_CNT by
// the remote ones; every S_QUANTITY stays within 10..100.
func checkStock(t testing.TB, env workload.Env, before map[int64][3]int64) {
	t.Helper()
	after := perItem(t, env, "SELECT s_i_id, s_ytd, s_order_cnt, s_remote_cnt FROM stock")
	lines := perItem(t, env, "SELECT ol_i_id, SUM(ol_quantity), COUNT(*), "+
		"SUM(CASE WHEN ol_supply_w_id <> ol_w_id THEN 1 ELSE 0 END) FROM order_line WHERE ol_o_id > 3000 GROUP BY ol_i_id")
	if len(lines) == 0 {
		t.Fatal("no new order lines")
	}
	for id, a := range after {
		b, l := before[id], lines[id]
		if got := [3]int64{a[0] - b[0], a[1] - b[1], a[2] - b[2]}; got != l {
			t.Errorf("item %d: stock s_ytd, s_order_cnt, s_remote_cnt grew by %v, its new order lines say %v", id, got, l)
		}
	}
	if n := scalar(t, env, "SELECT COUNT(*) FROM stock WHERE s_quantity IS NULL OR s_quantity NOT BETWEEN 10 AND 100"); n != 0 {
		t.Errorf("%d stock rows with S_QUANTITY outside 10..100", n)
	}
}

// checksums returns "rows:sum" of a hash of every row, per table.
func checksums(t testing.TB, env workload.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range allTables {
		cols := strings.Join(tb.colNames(), ", ")
		q := "SELECT COUNT(*), CAST(COALESCE(SUM(CRC32(CONCAT_WS('#', " + cols + "))), 0) AS CHAR) FROM " + tb.name
		if env.Dialect.Family() == target.Postgres {
			q = "SELECT COUNT(*), COALESCE(SUM(hashtext(concat_ws('#', " + cols + "))::numeric), 0)::text FROM " + tb.name
		}
		var n int64
		var sum string
		if err := env.DB.QueryRow(q).Scan(&n, &sum); err != nil {
			t.Fatalf("checksum %s: %v", tb.name, err)
		}
		out[tb.name] = fmt.Sprintf("%d:%s", n, sum)
	}
	return out
}

func mustCheck(t testing.TB, env workload.Env, wl *Workload, when string) {
	t.Helper()
	var out strings.Builder
	ok, err := wl.Check(context.Background(), env, &out)
	if err != nil {
		t.Fatalf("check %s: %v", when, err)
	}
	if !ok {
		t.Fatalf("consistency %s:\n%s", when, out.String())
	}
}

func TestIntegration(t *testing.T) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			ctx := context.Background()
			wl := setup(t, "--warehouses", "1")
			if err := wl.Cleanup(ctx, env); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = wl.Cleanup(context.Background(), env) })
			t.Run("not ready before prepare", func(t *testing.T) { testNotPrepared(t, env) })

			// A clean load of one warehouse.
			p := &progress{}
			if err := wl.Prepare(ctx, env, 4, p); err != nil {
				t.Fatalf("prepare: %v", err)
			}
			if p.rows.Load() != p.total.Load() {
				t.Errorf("progress: %d rows of %d announced", p.rows.Load(), p.total.Load())
			}
			clean := checksums(t, env)

			t.Run("cardinalities", func(t *testing.T) {
				olRows := scalar(t, env, "SELECT SUM(o_ol_cnt) FROM orders")
				for _, tc := range []struct {
					table string
					want  int64
				}{{"warehouse", 1}, {"district", 10}, {"customer", 30000}, {"history", 30000}, {"orders", 30000},
					{"new_orders", 9000}, {"item", 100000}, {"stock", 100000}, {"order_line", olRows}} {
					if got := scalar(t, env, "SELECT COUNT(*) FROM "+tc.table); got != tc.want {
						t.Errorf("%s: %d rows, want %d", tc.table, got, tc.want)
					}
				}
			})
			t.Run("distributions", func(t *testing.T) {
				pct := func(q string) float64 { return float64(scalar(t, env, q)) }
				for _, tc := range []struct {
					name     string
					got      float64
					min, max float64
				}{
					{"I_DATA ORIGINAL per 1000", pct("SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'") / 100, 90, 110},
					{"S_DATA ORIGINAL per 1000", pct("SELECT COUNT(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'") / 100, 90, 110},
					{"C_CREDIT BC per 1000", pct("SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'") / 30, 88, 112},
					{"new orders per district", pct("SELECT MIN(c) FROM (SELECT COUNT(*) AS c FROM new_orders GROUP BY no_d_id) x"), 900, 900},
					{"max new orders per district", pct("SELECT MAX(c) FROM (SELECT COUNT(*) AS c FROM new_orders GROUP BY no_d_id) x"), 900, 900},
					{"null carriers", pct("SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"), 9000, 9000},
					{"null carriers below 2101", pct("SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL AND o_id < 2101"), 0, 0},
					{"min ol_cnt", pct("SELECT MIN(o_ol_cnt) FROM orders"), 5, 5},
					{"max ol_cnt", pct("SELECT MAX(o_ol_cnt) FROM orders"), 15, 15},
					{"distinct customers per district", pct("SELECT MIN(c) FROM (SELECT COUNT(DISTINCT o_c_id) AS c FROM orders GROUP BY o_d_id) x"), 3000, 3000},
					{"undelivered amounts", pct("SELECT COUNT(*) FROM order_line WHERE ol_o_id >= 2101 AND (ol_amount < 0.01 OR ol_delivery_d IS NOT NULL)"), 0, 0},
					{"delivered amounts", pct("SELECT COUNT(*) FROM order_line WHERE ol_o_id < 2101 AND (ol_amount <> 0 OR ol_delivery_d IS NULL)"), 0, 0},
				} {
					if tc.got < tc.min || tc.got > tc.max {
						t.Errorf("%s = %v, want %v..%v", tc.name, tc.got, tc.min, tc.max)
					}
				}
			})
			mustCheck(t, env, wl, "after the load")
			t.Run("ready", func(t *testing.T) { testReady(t, env) })

			t.Run("interrupted load resumes to the same data", func(t *testing.T) {
				if err := wl.Cleanup(ctx, env); err != nil {
					t.Fatal(err)
				}
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				ip := &progress{cancelAt: 250000, cancel: cancel}
				if err := setup(t).Prepare(cctx, env, 4, ip); err == nil {
					t.Fatal("the interrupted load reported success")
				}
				done := scalar(t, env, "SELECT COUNT(*) FROM "+unitsTable)
				if done >= 4 {
					t.Fatalf("%d units recorded after the interruption, want fewer than 4", done)
				}
				testIncomplete(t, env)
				// Resume through the INSERT path: the same rows either way.
				resume := setup(t, "--load-method", "insert")
				if err := resume.Prepare(ctx, env, 4, &progress{}); err != nil {
					t.Fatalf("resume: %v", err)
				}
				got := checksums(t, env)
				for name, want := range clean {
					if got[name] != want {
						t.Errorf("%s: %s after resume, %s after a clean load", name, got[name], want)
					}
				}
				mustCheck(t, env, wl, "after the resumed load")
			})

			for i, typ := range txTypes {
				t.Run("alone "+typ, func(t *testing.T) {
					weights := []string{"0", "0", "0", "0", "0"}
					weights[i] = "1"
					w := setup(t, "--weights", strings.Join(weights, ","))
					stock := perItem(t, env, "SELECT s_i_id, s_ytd, s_order_cnt, s_remote_cnt FROM stock")
					res := run(t, env, w, runner.Config{Threads: 2, Events: 20})
					if res.PerType[typ] == nil || res.PerType[typ].Count != 20 || res.Errors != 0 {
						t.Fatalf("%s alone: %+v errors %d", typ, res.PerType[typ], res.Errors)
					}
					if typ == NewOrder {
						checkStock(t, env, stock)
					}
					// Two terminals deliver in one warehouse at once:
					// none skips a district that had orders.
					if delivered, skipped := w.delivery.take(); typ == Delivery && (delivered != 200 || skipped != 0) {
						t.Errorf("20 Deliveries: %d districts delivered, %d skipped; want 200 and 0", delivered, skipped)
					}
				})
			}
			mustCheck(t, env, wl, "after each transaction alone")

			t.Run("mix", func(t *testing.T) {
				w := setup(t)
				res := run(t, env, w, runner.Config{Threads: 4, Duration: 3 * time.Second, ReportInterval: time.Second})
				if res.Errors != 0 || res.Err != nil {
					t.Fatalf("errors %d: %v", res.Errors, res.Err)
				}
				for _, typ := range txTypes {
					if res.PerType[typ] == nil || res.PerType[typ].Count == 0 {
						t.Errorf("no %s in the mix", typ)
					}
				}
				if len(res.Intervals) == 0 || len(res.Intervals[0].PerType) == 0 {
					t.Error("intervals carry no per-type figures")
				}
				var run summary.Run
				res.Fill(&run)
				w.Summarize(&run)
				if run.TpmC == nil || *run.TpmC <= 0 || len(run.Checks) != 10 {
					t.Errorf("summary: tpmc %v, %d checks", run.TpmC, len(run.Checks))
				}
				if !strings.Contains(w.FormatSummary(&run), "TpmC") {
					t.Error("the final report has no TpmC")
				}
				if run.Figures[FigureDeliveredDistricts] == 0 || run.Figures[FigureSkippedDistricts] != 0 {
					t.Errorf("figures %v: want delivered districts and none skipped", run.Figures)
				}
			})
			t.Run("clients", func(t *testing.T) { testClients(t, env) })
			t.Run("pipeline", func(t *testing.T) { testPipeline(t, env) })
			t.Run("delivery after a concurrent taker", func(t *testing.T) { testDeliveryAfterConcurrentTaker(t, env) })
			mustCheck(t, env, wl, "after a concurrent delivery")
			t.Run("skipped district", func(t *testing.T) { testSkippedDistrict(t, env) })
			t.Run("prepared statements", func(t *testing.T) { testPreparedStatements(t, env) })
			t.Run("think times", func(t *testing.T) {
				w := setup(t, "--think")
				w.cfg.ThinkScale = 0.001 // New-Order: 18 ms keying, 12 ms mean think
				res := run(t, env, w, runner.Config{Threads: 2, Events: 10})
				if res.Events != 10 || res.Errors != 0 {
					t.Fatalf("%d events, %d errors", res.Events, res.Errors)
				}
			})
			mustCheck(t, env, wl, "after the mix")

			t.Run("a broken condition is reported", func(t *testing.T) {
				if _, err := env.DB.Exec("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 7"); err != nil {
					t.Fatal(err)
				}
				defer env.DB.Exec("UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 1 AND d_id = 7") //nolint:errcheck
				var out strings.Builder
				ok, err := wl.Check(ctx, env, &out)
				if err != nil || ok {
					t.Fatalf("check: ok %v err %v", ok, err)
				}
				for _, want := range []string{"[NG] 3.3.2.1 ", "[NG] 3.3.2.9 ", "d_w_id=1 d_id=7", "[OK] 3.3.2.2 "} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("check output lacks %q:\n%s", want, out.String())
					}
				}
			})
			t.Run("broken order and customer conditions are reported", func(t *testing.T) {
				for _, q := range []string{"UPDATE customer SET c_balance = c_balance + 1 WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 17",
					"UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 5"} {
					if _, err := env.DB.Exec(q); err != nil {
						t.Fatal(err)
					}
				}
				defer env.DB.Exec("UPDATE customer SET c_balance = c_balance - 1 WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 17") //nolint:errcheck
				defer env.DB.Exec("UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 5")      //nolint:errcheck
				var out strings.Builder
				if ok, err := wl.Check(ctx, env, &out); err != nil || ok {
					t.Fatalf("check: ok %v err %v", ok, err)
				}
				for _, want := range []string{"[NG] 3.3.2.6  O_OL_CNT = ORDER-LINE rows of the order: fails at o_w_id=1 o_d_id=2 o_id=5 ",
					"[NG] 3.3.2.10 C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT): fails at c_w_id=1 c_d_id=3 c_id=17 off_by=-1",
					"[NG] 3.3.2.12 C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT): fails at c_w_id=1 c_d_id=3 c_id=17 off_by=-1",
					"[OK] 3.3.2.8 "} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("check output lacks %q:\n%s", want, out.String())
					}
				}
			})
		})
	}
}

func run(t testing.TB, env workload.Env, w *Workload, c runner.Config) *runner.Result {
	t.Helper()
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Events, cfg.Duration, cfg.ReportInterval = c.Threads, c.Events, c.Duration, c.ReportInterval
	cfg.Seed = 11
	res, err := runner.Run(context.Background(), cfg, env, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatalf("run: %v", res.Err)
	}
	return res
}

var _ io.Writer = (*strings.Builder)(nil)

// TestIntegrationAIDPK loads the aidpk variant (surrogate keys, the
// original keys as unique indexes) and runs the mix on it.
func TestIntegrationAIDPK(t *testing.T) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			ctx := context.Background()
			wl := setup(t, "--schema", "aidpk")
			if err := wl.Cleanup(ctx, env); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = wl.Cleanup(context.Background(), env) })
			if err := wl.Prepare(ctx, env, 4, &progress{}); err != nil {
				t.Fatalf("prepare: %v", err)
			}
			for _, ix := range allIndexes(SchemaAIDPK) {
				ok, err := indexExists(ctx, env, ix)
				if err != nil || !ok {
					t.Errorf("index %s: exists %v, err %v", ix.name, ok, err)
				}
			}
			if n := scalar(t, env, "SELECT COUNT(DISTINCT id) FROM stock"); n != nItems {
				t.Errorf("stock has %d distinct ids, want %d", n, nItems)
			}
			res := run(t, env, setup(t), runner.Config{Threads: 2, Duration: time.Second})
			if res.Errors != 0 || res.Events == 0 {
				t.Fatalf("%d events, %d errors", res.Events, res.Errors)
			}
			mustCheck(t, env, wl, "after a run on aidpk")
		})
	}
}
