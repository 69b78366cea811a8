package micro

import (
	"context"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestWrongResultsCaught: on tables that are not what micro prepared (rows
// 1 and 100 of micro_a gone, every s changed, micro_j1 emptied), every
// operation that reads them reports wrong results, counted as errors under
// wrong_result and marked with a Warning line sql-bench's run-all-tests
// turns into "?"; the suite still runs to its end. On the tables as
// prepared, no operation of any group reports one.
func TestWrongResultsCaught(t *testing.T) {
	groups := "select,update,wisconsin,prepared,joins,keys,distinct,order,delete"
	caught := []string{
		"select_key", "select_key2", "select_range_100", "select_min_max", "select_count", "select_group_by",
		"order_by_key", "order_by_nokey", "select_like",
		"select_join_2", "select_join_3", "select_join_4", "select_join_5", "select_join_6", "select_join_7",
		"select_join_8", "select_join_9", "select_join_10",
		"update_range", "update_of_key_big", "delete_key",
		"wisc_select_1pct", "wisc_select_10pct_index", "wisc_join_ab", "wisc_agg_distinct",
		"prepared_select", "once_prepared_select",
		"outer_join_on_key", "outer_join", "outer_join_found", "outer_join_not_found", "select_in", "select_join_in",
		"insert_select_1_key", "insert_select_2_keys",
		"select_distinct", "count_distinct", "count_distinct_2", "count_distinct_key_prefix",
		"count_distinct_group_on_key", "count_distinct_group", "count_distinct_big",
		"order_by_big_key", "order_by_big_key_desc", "order_by_big_key2", "order_by_big", "order_by_range",
		"delete_big", "delete_big_many_keys",
	}
	for _, fl := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(fl), func(t *testing.T) {
			env := sandboxtest.Env(t, fl)
			ctx := context.Background()
			wl, _ := setup(t, "--scale", testScale)
			if err := wl.Prepare(ctx, env, 1, nopProgress{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = wl.Cleanup(context.Background(), env) })

			// As prepared: nothing wrong, in any group.
			s := run(t, wl, env, 1)
			if s.Totals.Errors != 0 {
				t.Fatalf("clean tables: %d errors, notes %q", s.Totals.Errors, s.Notes)
			}
			if strings.Contains(wl.FormatSummary(s), "Warning:") {
				t.Fatalf("clean tables: a Warning line:\n%s", wl.FormatSummary(s))
			}

			for _, q := range []string{"DELETE FROM micro_a WHERE id IN (1, 100)", "UPDATE micro_a SET s = 'wrong'", "DELETE FROM micro_j1"} {
				if _, err := env.DB.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			wl, _ = setup(t, "--scale", testScale, "--tests", groups)
			s = run(t, wl, env, 1)
			out := wl.FormatSummary(s)
			var total int64
			for _, op := range caught {
				n := int64(s.Figures[WrongPrefix+op])
				total += n
				if n == 0 {
					t.Errorf("%s: no wrong result caught", op)
					continue
				}
				if s.PerType[op].ErrorsByCode[WrongResultCode] != n {
					t.Errorf("%s: per-type errors %v, want %d wrong_result", op, s.PerType[op].ErrorsByCode, n)
				}
				if !strings.Contains(out, "Warning: "+op+" returned ") || !strings.Contains(out, "\nTime for "+op+" (") {
					t.Errorf("%s: no Warning line before its Time for line", op)
				}
			}
			if s.Totals.ErrorsByCode[WrongResultCode] < total || s.Totals.Errors < total {
				t.Errorf("totals: errors %d %v, want >= %d wrong_result", s.Totals.Errors, s.Totals.ErrorsByCode, total)
			}
			if s.Totals.Events != wl.Planned(1) {
				t.Errorf("events %d, want the whole suite's %d", s.Totals.Events, wl.Planned(1))
			}
			if !strings.Contains(strings.Join(s.Notes, "\n"), "select_key: ") {
				t.Errorf("notes %q lack select_key's first wrong result", s.Notes)
			}
		})
	}
}

// TestVerifyCatches: the untimed checks of the tests that return no rows
// (index DDL, create_key+drop, the batch group's commits and rollbacks,
// the bulk deletes) report a table that is not what the test must leave.
func TestVerifyCatches(t *testing.T) {
	for _, fl := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(fl), func(t *testing.T) {
			env := sandboxtest.Env(t, fl)
			ctx := context.Background()
			wl, _ := setup(t, "--scale", testScale)
			conn, err := env.DB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			w := &worker{wl: wl, env: env, conn: conn, id: 7, fam: env.Dialect.Family(), tests: wl.tests()}
			for _, q := range []string{
				"DROP TABLE IF EXISTS micro_ix_7", "CREATE TABLE micro_ix_7 (id INT PRIMARY KEY, n INT)",
				"DROP TABLE IF EXISTS micro_ck_7", "CREATE TABLE micro_ck_7 (id INT PRIMARY KEY)",
				"DROP TABLE IF EXISTS micro_bt_7", "CREATE TABLE micro_bt_7 (" + btColumns + ")", "INSERT INTO micro_bt_7 VALUES (1, -1, 0, 2)",
				"DROP TABLE IF EXISTS micro_dk_7", "CREATE TABLE micro_dk_7 (id INT PRIMARY KEY)", "INSERT INTO micro_dk_7 VALUES (1)",
			} {
				if err := w.exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			defer func() {
				for _, tb := range []string{"micro_ix_7", "micro_ck_7", "micro_bt_7", "micro_dk_7"} {
					_ = w.exec(context.Background(), "DROP TABLE IF EXISTS "+tb)
				}
			}()
			for _, op := range []string{"create_index", "create_key+drop", "insert_autocommit", "insert_rollback", "update_rollback",
				"delete_rollback", "update_autocommit", "delete_autocommit", "delete_big_many_keys"} {
				tt := suite[indexOp(op)]
				what, err := tt.verify(ctx, w)
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				if what == "" {
					t.Errorf("%s: a wrong table passed its check", op)
				}
			}
			// drop_index wants 2 indexes: the table above has one.
			if what, _ := suite[indexOp("drop_index")].verify(ctx, w); !strings.Contains(what, "has 1 indexes, want 2") {
				t.Errorf("drop_index: %q", what)
			}
		})
	}
}
