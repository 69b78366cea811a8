package micro

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// test is one timed operation: setup and teardown are untimed (the event's
// Pause), run is one instance.
type test struct {
	group, op string
	// base is the instance count at --scale 1.
	base     int
	setup    func(ctx context.Context, w *worker) error
	run      func(ctx context.Context, w *worker, i int) (workload.Queries, error)
	teardown func(ctx context.Context, w *worker) error
	// verify, untimed after the last instance, checks what the test left
	// (a table's rows or indexes) and says what is wrong ("" if nothing).
	verify func(ctx context.Context, w *worker) (string, error)
}

var (
	read  = workload.Queries{Read: 1}
	write = workload.Queries{Write: 1}
	other = workload.Queries{Other: 1}
)

// ex runs the statement built from i, counted as q.
func ex(q workload.Queries, f func(w *worker, i int) string) func(context.Context, *worker, int) (workload.Queries, error) {
	return func(ctx context.Context, w *worker, i int) (workload.Queries, error) {
		return q, w.exec(ctx, f(w, i))
	}
}

// key is the i-th key of micro_a, spread over the table.
func (w *worker) key(i int) int { return (i*7919)%w.wl.rows() + 1 }

// recreate drops and creates a table of the worker's own.
func recreate(base, cols string) func(context.Context, *worker) error {
	return func(ctx context.Context, w *worker) error {
		t := w.table(base)
		if err := w.exec(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return err
		}
		return w.exec(ctx, "CREATE TABLE "+t+" ("+cols+")")
	}
}

// copyA makes the worker's own copy of micro_a, with its index.
func copyA(base string) func(context.Context, *worker) error {
	return func(ctx context.Context, w *worker) error {
		if err := recreate(base, aColumns)(ctx, w); err != nil {
			return err
		}
		t := w.table(base)
		if err := w.exec(ctx, "INSERT INTO "+t+" SELECT id, k, n, s FROM micro_a"); err != nil {
			return err
		}
		return w.exec(ctx, "CREATE INDEX "+t+"_k ON "+t+" (k)")
	}
}

// drop drops a table of the worker's own.
func drop(base string) func(context.Context, *worker) error {
	return func(ctx context.Context, w *worker) error { return w.exec(ctx, "DROP TABLE IF EXISTS "+w.table(base)) }
}

// connect opens a new connection (and runs q on it if not empty), then
// closes it.
func connect(q string) func(context.Context, *worker, int) (workload.Queries, error) {
	return func(ctx context.Context, w *worker, _ int) (workload.Queries, error) {
		db, err := w.env.Dialect.Open(w.env.Target, dialect.OpenOptions{MaxConns: 1})
		if err != nil {
			return workload.Queries{}, err
		}
		defer db.Close()
		c, err := db.Conn(ctx)
		if err != nil {
			return workload.Queries{}, err
		}
		defer c.Close()
		if q == "" {
			return workload.Queries{}, c.PingContext(ctx)
		}
		var one int
		return read, c.QueryRowContext(ctx, q).Scan(&one)
	}
}

// joinQuery joins micro_j1..n on ref = id around a 10-row range.
func joinQuery(n int) func(w *worker, i int) string {
	return func(w *worker, i int) string {
		var b strings.Builder
		b.WriteString("SELECT COUNT(*), SUM(t" + fmt.Sprint(n) + ".v) FROM micro_j1 t1")
		for j := 2; j <= n; j++ {
			fmt.Fprintf(&b, " JOIN micro_j%d t%d ON t%d.id = t%d.ref", j, j, j, j-1)
		}
		lo := i*10%w.wl.joinRows() + 1
		fmt.Fprintf(&b, " WHERE t1.id BETWEEN %d AND %d", lo, lo+9)
		return b.String()
	}
}

// joinCheck checks a joinQuery: COUNT(*) and SUM(v) over ids lo..lo+9
// of the join tables.
func joinCheck(w *worker, i int, rows [][]string) string {
	m := w.wl.model()
	lo := i*10%m.joinRows + 1
	n, sum := 0, 0
	for id := lo; id <= min(lo+9, m.joinRows); id++ {
		n++
		sum += id % 100
	}
	if n == 0 {
		return one(0, nil)(rows)
	}
	return one(n, sum)(rows)
}

// rowsChanged wants n rows changed by every instance.
func rowsChanged(n int64) func(*worker, int) int64 {
	return func(*worker, int) int64 { return n }
}

// wideCols is the column count of the big group's wide table.
const wideCols = 100

func wideTable() string {
	var b strings.Builder
	b.WriteString("id INT PRIMARY KEY")
	for c := 1; c < wideCols; c++ {
		fmt.Fprintf(&b, ", c%d INT NOT NULL", c)
	}
	return b.String()
}

func wideRow(w *worker, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s VALUES (%d", w.table("wide"), i+1)
	for c := 1; c < wideCols; c++ {
		fmt.Fprintf(&b, ", %d", (i+c)%1000)
	}
	b.WriteString(")")
	return b.String()
}

// txn runs BEGIN, one insert, and end (COMMIT or ROLLBACK).
func txn(end string) func(context.Context, *worker, int) (workload.Queries, error) {
	return func(ctx context.Context, w *worker, i int) (workload.Queries, error) {
		q := workload.Queries{}
		if err := w.exec(ctx, "BEGIN"); err != nil {
			return q, err
		}
		q.Other++
		id := i + 1
		if end == "ROLLBACK" {
			id = -id
		}
		err := w.exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, %d)", w.table("tx"), id, i))
		q.Write++
		if err != nil {
			_ = w.exec(ctx, "ROLLBACK")
			return q, err
		}
		q.Other++
		return q, w.exec(ctx, end)
	}
}

// insIgnore inserts a row whose key is already there, ignoring it.
func insIgnore(w *worker, i int) string {
	v := fmt.Sprintf("(%d, %d, 'dup')", i%100+1, i)
	if isPG(w.fam) {
		return "INSERT INTO " + w.table("ins") + " VALUES " + v + " ON CONFLICT DO NOTHING"
	}
	return "INSERT IGNORE INTO " + w.table("ins") + " VALUES " + v
}

// insColumns is the insert group's table.
const insColumns = "id INT PRIMARY KEY, k INT NOT NULL, s VARCHAR(32) NOT NULL"

// deleteStep is the width of delete_range's ranges.
const deleteStep = 10

// suite is every test, in the order they run.
var suite = append(baseSuite, moreSuite...)

// baseSuite are the tests of the groups up to wisconsin, in order.
var baseSuite = []*test{
	{group: "connect", op: "connect", base: 100, run: connect("")},
	{group: "connect", op: "connect+select_1", base: 100, run: connect("SELECT 1")},
	{group: "connect", op: "select_1", base: 1000, run: selc(func(*worker, int) string { return "SELECT 1" },
		check(func(*worker, int) func([][]string) string { return one(1) }))},

	{group: "create", op: "create_table", base: 100, run: ex(other, func(w *worker, i int) string {
		return fmt.Sprintf("CREATE TABLE %s_%d (id INT PRIMARY KEY, v INT)", w.table("c"), i)
	})},
	{group: "create", op: "drop_table", base: 100, run: ex(other, func(w *worker, i int) string {
		return fmt.Sprintf("DROP TABLE IF EXISTS %s_%d", w.table("c"), i)
	})},

	{group: "insert", op: "insert", base: 10000, setup: recreate("ins", insColumns), run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("INSERT INTO %s VALUES (%d, %d, 's%08d')", w.table("ins"), i+1, w.key(i), i)
	}, rowsChanged(1))},
	{group: "insert", op: "insert_multi_100", base: 100, run: exa(write, func(w *worker, i int) string {
		var b strings.Builder
		b.WriteString("INSERT INTO " + w.table("ins") + " VALUES ")
		for r := 0; r < 100; r++ {
			id := 1_000_000 + i*100 + r
			if r > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "(%d, %d, 'm%08d')", id, id%1000, id)
		}
		return b.String()
	}, rowsChanged(100))},
	{group: "insert", op: "insert_duplicate", base: 1000, run: exa(write, insIgnore, rowsChanged(0)), teardown: drop("ins")},

	{group: "select", op: "select_key", base: 10000, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT s FROM micro_a WHERE id = %d", w.key(i))
	}, check(func(w *worker, i int) func([][]string) string { return one(w.wl.model().sOf(w.key(i))) }))},
	{group: "select", op: "select_key2", base: 10000, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT id FROM micro_a WHERE k = %d", w.key(i))
	}, check(func(w *worker, i int) func([][]string) string {
		ids := w.wl.model().idsOfK(w.key(i))
		if len(ids) == 1 {
			return one(ids[0])
		}
		return count(len(ids))
	}))},
	{group: "select", op: "select_range_100", base: 1000, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT id, k, s FROM micro_a WHERE id BETWEEN %d AND %d", w.key(i), w.key(i)+99)
	}, check(func(w *worker, i int) func([][]string) string {
		lo, hi := w.span(i, 100)
		return count(hi - lo + 1)
	}))},
	{group: "select", op: "select_min_max", base: 1000, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT MIN(id), MAX(id) FROM micro_a WHERE k BETWEEN %d AND %d", w.key(i), w.key(i)+99)
	}, check(func(w *worker, i int) func([][]string) string {
		var ids []int
		for k := w.key(i); k <= w.key(i)+99; k++ {
			ids = append(ids, w.wl.model().idsOfK(k)...)
		}
		if len(ids) == 0 {
			return one(nil, nil)
		}
		return one(slices.Min(ids), slices.Max(ids))
	}))},
	{group: "select", op: "select_count", base: 100, run: selc(func(*worker, int) string { return "SELECT COUNT(*) FROM micro_a" },
		check(func(w *worker, _ int) func([][]string) string { return one(w.wl.rows()) }))},
	{group: "select", op: "select_group_by", base: 20, run: selc(func(*worker, int) string {
		return "SELECT n, COUNT(*), SUM(k) FROM micro_a GROUP BY n"
	}, check(func(w *worker, _ int) func([][]string) string { return count(min(100, w.wl.rows())) }))},
	{group: "select", op: "order_by_key", base: 100, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT id, k FROM micro_a WHERE k >= %d ORDER BY k LIMIT 100", w.key(i))
	}, check(func(w *worker, i int) func([][]string) string {
		m, n := w.wl.model(), 0
		for k := w.key(i); k <= m.rows+1; k++ {
			n += len(m.idsOfK(k))
		}
		return sorted(min(100, n), 1, false)
	}))},
	{group: "select", op: "order_by_nokey", base: 20, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT id, s FROM micro_a ORDER BY s DESC, id LIMIT 100 OFFSET %d", i%100)
	}, check(func(w *worker, i int) func([][]string) string { return count(min(100, w.wl.rows()-i%100)) }))},
	{group: "select", op: "select_like", base: 100, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT COUNT(*) FROM micro_a WHERE s LIKE '%%%d5%%'", i%10)
	}, check(func(w *worker, i int) func([][]string) string {
		m, n, sub := w.wl.model(), 0, fmt.Sprintf("%d5", i%10)
		for id := 1; id <= m.rows; id++ {
			if strings.Contains(m.sOf(id), sub) {
				n++
			}
		}
		return one(n)
	}))},
	{group: "select", op: "select_join_2", base: 200, run: selc(joinQuery(2), joinCheck)},
	{group: "select", op: "select_join_3", base: 200, run: selc(joinQuery(3), joinCheck)},
	{group: "select", op: "select_join_4", base: 200, run: selc(joinQuery(4), joinCheck)},
	{group: "select", op: "select_join_5", base: 200, run: selc(joinQuery(5), joinCheck)},
	{group: "select", op: "select_join_6", base: 200, run: selc(joinQuery(6), joinCheck)},
	{group: "select", op: "select_join_7", base: 200, run: selc(joinQuery(7), joinCheck)},
	{group: "select", op: "select_join_8", base: 200, run: selc(joinQuery(8), joinCheck)},
	{group: "select", op: "select_join_9", base: 200, run: selc(joinQuery(9), joinCheck)},
	{group: "select", op: "select_join_10", base: 200, run: selc(joinQuery(10), joinCheck)},

	{group: "update", op: "update_key", base: 1000, setup: copyA("u"), run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("UPDATE %s SET n = n + 1 WHERE id = %d", w.table("u"), w.key(i))
	}, rowsChanged(1))},
	{group: "update", op: "update_range", base: 100, run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("UPDATE %s SET n = n + 1 WHERE id BETWEEN %d AND %d", w.table("u"), w.key(i), w.key(i)+99)
	}, func(w *worker, i int) int64 {
		lo, hi := w.span(i, 100)
		return int64(hi - lo + 1)
	})},
	{group: "update", op: "update_of_key_big", base: 10, run: exa(write, func(w *worker, _ int) string {
		return "UPDATE " + w.table("u") + " SET k = k + 1"
	}, func(w *worker, _ int) int64 { return int64(w.wl.rows()) })},
	{group: "update", op: "delete_key", base: 1000, run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("DELETE FROM %s WHERE id = %d", w.table("u"), i+1)
	}, rowsChanged(1))},
	{group: "update", op: "delete_range", base: 10, run: ex(write, func(w *worker, i int) string {
		hi := w.wl.rows() - i*deleteStep
		return fmt.Sprintf("DELETE FROM %s WHERE id > %d AND id <= %d", w.table("u"), hi-deleteStep, hi)
	}), teardown: drop("u")},

	{group: "alter", op: "alter_table_add_column", base: 10, setup: copyA("alt"), run: ex(other, func(w *worker, i int) string {
		return fmt.Sprintf("ALTER TABLE %s ADD COLUMN x%d INT NOT NULL DEFAULT %d", w.table("alt"), i, i)
	})},
	{group: "alter", op: "alter_table_drop_column", base: 10, run: ex(other, func(w *worker, i int) string {
		return fmt.Sprintf("ALTER TABLE %s DROP COLUMN x%d", w.table("alt"), i)
	}), teardown: drop("alt")},

	{group: "big", op: "insert_wide_row", base: 1000, setup: recreate("wide", wideTable()), run: ex(write, wideRow)},
	{group: "big", op: "select_wide_row", base: 1000, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT * FROM %s WHERE id = %d", w.table("wide"), i%w.wl.countBase(1000)+1)
	}, func(w *worker, i int, rows [][]string) string {
		if len(rows) != 1 || len(rows[0]) != wideCols || !same(rows[0][0], i%w.wl.countBase(1000)+1) {
			return fmt.Sprintf("got %d rows, want the row with id %d and %d columns", len(rows), i%w.wl.countBase(1000)+1, wideCols)
		}
		return ""
	}), teardown: drop("wide")},
	{group: "big", op: "select_big_str", base: 100, run: selc(func(*worker, int) string { return "SELECT '" + bigStr + "'" },
		check(func(*worker, int) func([][]string) string { return one(bigStr) }))},

	{group: "transactions", op: "commit", base: 1000, setup: recreate("tx", "id INT PRIMARY KEY, v INT NOT NULL"), run: txn("COMMIT")},
	{group: "transactions", op: "rollback", base: 1000, run: txn("ROLLBACK"), teardown: drop("tx")},

	{group: "wisconsin", op: "wisc_select_1pct", base: 100, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT id, k, s FROM micro_a WHERE n = %d", i%100)
	}, check(func(w *worker, i int) func([][]string) string {
		m, n := w.wl.model(), 0
		for id := 1; id <= m.rows; id++ {
			if m.nOf(id) == i%100 {
				n++
			}
		}
		return count(n)
	}))},
	{group: "wisconsin", op: "wisc_select_10pct_index", base: 20, run: selc(func(w *worker, i int) string {
		lo := w.key(i)
		return fmt.Sprintf("SELECT id, s FROM micro_a WHERE k BETWEEN %d AND %d", lo, lo+w.wl.rows()/10)
	}, check(func(w *worker, i int) func([][]string) string {
		m, n := w.wl.model(), 0
		for k := w.key(i); k <= w.key(i)+m.rows/10; k++ {
			n += len(m.idsOfK(k))
		}
		return count(n)
	}))},
	{group: "wisconsin", op: "wisc_join_ab", base: 20, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT COUNT(*) FROM micro_a a JOIN micro_j1 b ON a.id = b.ref WHERE b.v < %d", (i%10+1)*10)
	}, check(func(w *worker, i int) func([][]string) string {
		m, n := w.wl.model(), 0
		for id := 1; id <= min(m.joinRows, m.rows); id++ {
			if id%100 < (i%10+1)*10 {
				n++
			}
		}
		return one(n)
	}))},
	{group: "wisconsin", op: "wisc_agg_distinct", base: 20, run: selc(func(*worker, int) string {
		return "SELECT n, COUNT(DISTINCT k) FROM micro_a GROUP BY n"
	}, check(func(w *worker, _ int) func([][]string) string { return count(min(100, w.wl.rows())) }))},
}

// indexOp is the position of op in the suite.
func indexOp(op string) int {
	for i, t := range suite {
		if t.op == op {
			return i
		}
	}
	panic("micro: no test " + op)
}
