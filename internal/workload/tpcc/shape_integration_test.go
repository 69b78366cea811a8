package tpcc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// serverStatements is MariaDB's count of prepared statements executed
// (Com_stmt_execute: every statement of a transaction is a prepared one).
// PostgreSQL 15 counts statements only with pg_stat_statements, which
// needs shared_preload_libraries: there the run's own count stands in
// (the index scan counts do not tell the shapes apart: a btree counts a
// scan per element of an IN list).
func serverStatements(t *testing.T, env workload.Env) int64 {
	t.Helper()
	var name string
	var n int64
	if err := env.DB.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIntegrationShapes runs the three statement shapes on two
// warehouses with foreign keys: tpcc-mysql's sends about 36 statements per
// transaction as the server counts them, the batched one about 11, the
// procedures one 1; each keeps the consistency conditions; the warehouses, schema and foreign
// keys of tables another tool loaded are read from the tables; and more
// warehouses than loaded are refused before the run.
func TestIntegrationShapes(t *testing.T) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			ctx := context.Background()
			wl := setup(t, "--warehouses", "2", "--fk")
			if err := wl.Cleanup(ctx, env); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = wl.Cleanup(context.Background(), env) })
			if err := wl.Prepare(ctx, env, 4, &progress{}); err != nil {
				t.Fatalf("prepare: %v", err)
			}
			perTx := map[string]float64{}
			for _, shape := range shapes {
				t.Run(shape, func(t *testing.T) {
					w := setup(t, "--shape", shape)
					mariadb := flavor == target.FlavorMariaDB
					var before int64
					if mariadb {
						before = serverStatements(t, env)
					}
					orders := scalar(t, env, "SELECT COUNT(*) FROM orders")
					res := run(t, env, w, runner.Config{Threads: 2, Events: 230})
					if res.Errors != 0 || res.Events != 230 {
						t.Fatalf("%d events, %d errors", res.Events, res.Errors)
					}
					// Every New-Order but the 1% rolled back adds an order.
					added, nos := scalar(t, env, "SELECT COUNT(*) FROM orders")-orders, res.PerType[NewOrder].Count
					if nos == 0 || added > nos || float64(added) < 0.9*float64(nos) {
						t.Errorf("%d New-Orders added %d orders", nos, added)
					}
					sent := res.Queries.Read + res.Queries.Write
					perTx[shape] = float64(sent) / float64(res.Events)
					if mariadb {
						after := serverStatements(t, env)
						perTx[shape] = float64(after-before) / float64(res.Events)
						if after-before < sent || after-before > sent+10 {
							t.Errorf("the server executed %d statements, the run counted %d", after-before, sent)
						}
					}
					var sr summary.Run
					res.Fill(&sr)
					w.Summarize(&sr)
					if res.PerType[Delivery].Count > 0 && sr.Figures[FigureDeliveredDistricts] != float64(10*res.PerType[Delivery].Count) {
						t.Errorf("%d Deliveries delivered %v districts", res.PerType[Delivery].Count, sr.Figures[FigureDeliveredDistricts])
					}
					if sr.Params["shape"] != shape {
						t.Errorf("summary params shape %v, want %s", sr.Params["shape"], shape)
					}
					rep := w.FormatSummary(&sr)
					if !strings.Contains(rep, "statement shape: "+shape) {
						t.Errorf("the report does not name the shape:\n%s", rep)
					}
					mustCheck(t, env, wl, "after the "+shape+" shape")
				})
			}
			t.Logf("%s: statements per transaction (MariaDB: as the server counts them): tpcc-mysql %.1f, batched %.1f, procedures %.2f",
				flavor, perTx[ShapeTpccMySQL], perTx[ShapeBatched], perTx[ShapeProcedures])
			// tpcc-mysql: about 36 per transaction over the 10/10/1/1/1 mix
			// (Stock-Level ~200, New-Order ~45, Payment ~7).
			if got := perTx[ShapeTpccMySQL]; got < 28 || got > 48 {
				t.Errorf("tpcc-mysql shape: %.1f statements per transaction, want about 36", got)
			}
			if got := perTx[ShapeBatched]; got > 15 {
				t.Errorf("batched shape: %.1f statements per transaction, want about 11", got)
			}
			if got := perTx[ShapeProcedures]; got != 1 {
				t.Errorf("procedures shape: %.2f statements per transaction, want 1", got)
			}

			// The tables as another tool leaves them: no dbarena meta.
			for _, tb := range []string{metaTable, unitsTable} {
				if _, err := env.DB.Exec("DROP TABLE " + tb); err != nil {
					t.Fatal(err)
				}
			}
			w := setup(t)
			if err := w.Ready(ctx, env); err != nil {
				t.Fatalf("ready on tables without dbarena's meta: %v", err)
			}
			p := w.Params()
			if p["warehouses"] != 2 || p["fk"] != true || p["schema"] != SchemaStandard {
				t.Errorf("params before the run: warehouses %v fk %v schema %v, want 2 true standard",
					p["warehouses"], p["fk"], p["schema"])
			}
			res := run(t, env, w, runner.Config{Threads: 2, Events: 50})
			if res.Errors != 0 {
				t.Fatalf("%d errors", res.Errors)
			}
			var sr summary.Run
			sr.Params = map[string]any{"warehouses": 1, "fk": false} // as the run's start recorded them before
			res.Fill(&sr)
			w.Summarize(&sr)
			if sr.Params["warehouses"] != 2 || sr.Params["fk"] != true {
				t.Errorf("summary params: warehouses %v fk %v, want 2 true", sr.Params["warehouses"], sr.Params["fk"])
			}
			err := setup(t, "--warehouses", "3").Ready(ctx, env)
			var nr *workload.NotReadyError
			if !errors.As(err, &nr) || !nr.Refuse || !strings.Contains(nr.Problem, "--warehouses 3: the TPC-C tables hold 2") {
				t.Errorf("ready, --warehouses 3 on 2: %#v", err)
			}
		})
	}
}
