package micro

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/workload"
)

// The groups below are sql-bench's operations the first nine groups had no
// counterpart for (docs/benchmarks.md maps every sql-bench operation):
// prepared statements, outer joins and IN lists, index and key DDL with
// insert-select, DISTINCT and COUNT(DISTINCT), ORDER BY over the whole
// table, bulk deletes, and sql-bench's transaction variants (a batch
// committed or rolled back at once, autocommit). Operations that do what
// sql-bench's do carry sql-bench's names. Every one checks what it gets.

// ph is the first bind placeholder of the worker's dialect.
func (w *worker) ph() string {
	if isPG(w.fam) {
		return "$1"
	}
	return "?"
}

// keySelect is the prepared selects' statement.
func keySelect(w *worker) string { return "SELECT s FROM micro_a WHERE id = " + w.ph() }

// preparedSelect prepares, runs and closes a key lookup, each time.
func preparedSelect(ctx context.Context, w *worker, i int) (workload.Queries, error) {
	st, err := w.conn.PrepareContext(ctx, keySelect(w))
	if err != nil {
		return read, err
	}
	defer st.Close()
	return read, w.keyRow(ctx, st, i)
}

// keyRow runs the prepared key lookup for instance i and checks its row.
func (w *worker) keyRow(ctx context.Context, st *sql.Stmt, i int) error {
	id := w.key(i)
	rs, err := st.QueryContext(ctx, id)
	if err != nil {
		return err
	}
	rows, err := readRows(rs)
	if err != nil {
		return err
	}
	if what := one(w.wl.model().sOf(id))(rows); what != "" {
		w.wrong(w.tests[w.ti].op, i, what)
	}
	return nil
}

func prepareOnce(ctx context.Context, w *worker) error {
	st, err := w.conn.PrepareContext(ctx, keySelect(w))
	w.stmt = st
	return err
}

func oncePrepared(ctx context.Context, w *worker, i int) (workload.Queries, error) {
	return read, w.keyRow(ctx, w.stmt, i)
}

func closeOnce(_ context.Context, w *worker) error { return w.closeStmt() }

// closeStmt closes once_prepared_select's statement, if open.
func (w *worker) closeStmt() error {
	if w.stmt == nil {
		return nil
	}
	err := w.stmt.Close()
	w.stmt = nil
	return err
}

// span is ids lo..lo+width-1 of micro_a, clipped to the table.
func (w *worker) span(i, width int) (lo, hi int) {
	m := w.wl.model()
	lo = w.key(i)
	return lo, min(lo+width-1, m.rows)
}

// outerRows is what an outer join of micro_a ids lo..hi with micro_j1
// returns: id, and j1's v or NULL.
func outerRows(m *model, lo, hi int) [][]any {
	var out [][]any
	for id := lo; id <= hi; id++ {
		var v any
		if m.hasJ(id) {
			v = id % 100
		}
		out = append(out, []any{id, v})
	}
	return out
}

// inKeys are the ids instance i's IN list asks for, sorted, and the list.
func inKeys(i, n, count int) ([]int, string) {
	var ids []int
	for j := range count {
		id := ((i*count+j)*7919)%n + 1
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for j, id := range ids {
		parts[j] = fmt.Sprint(id)
	}
	return ids, strings.Join(parts, ",")
}

// inCount is the length of select_in's and select_join_in's IN lists.
const inCount = 10

// indexCount is how many indexes table has (its primary key included).
func (w *worker) indexCount(ctx context.Context, table string) (int, error) {
	q := "SELECT COUNT(DISTINCT index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ?"
	if isPG(w.fam) {
		q = "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1"
	}
	var n int
	err := w.conn.QueryRowContext(ctx, q, table).Scan(&n)
	return n, err
}

// wantIndexes checks, after an index test, that its table has want
// indexes.
func wantIndexes(base string, want func(w *worker) int) func(context.Context, *worker) (string, error) {
	return func(ctx context.Context, w *worker) (string, error) {
		n, err := w.indexCount(ctx, w.table(base))
		if err != nil {
			return "", err
		}
		if n != want(w) {
			return fmt.Sprintf("%s has %d indexes, want %d", w.table(base), n, want(w)), nil
		}
		return "", nil
	}
}

// wantCount checks, after a test, that the query counts want rows.
func wantCount(q func(w *worker) string, want func(w *worker) int) func(context.Context, *worker) (string, error) {
	return func(ctx context.Context, w *worker) (string, error) {
		var n int
		if err := w.conn.QueryRowContext(ctx, q(w)).Scan(&n); err != nil {
			return "", err
		}
		if n != want(w) {
			return fmt.Sprintf("%s: %d, want %d", q(w), n, want(w)), nil
		}
		return "", nil
	}
}

// copyAKeys is copyA with two more indexes (n and s): the table of the
// bulk deletes on many keys and of insert_select_2_keys.
func copyAKeys(base string) func(context.Context, *worker) error {
	return func(ctx context.Context, w *worker) error {
		if err := copyA(base)(ctx, w); err != nil {
			return err
		}
		t := w.table(base)
		if err := w.exec(ctx, "CREATE INDEX "+t+"_n ON "+t+" (n)"); err != nil {
			return err
		}
		return w.exec(ctx, "CREATE INDEX "+t+"_s ON "+t+" (s)")
	}
}

// emptyWithKey makes an empty table like micro_a with n keys beside the
// primary key (k, then n).
func emptyWithKey(base string, keys int) func(context.Context, *worker) error {
	return func(ctx context.Context, w *worker) error {
		if err := recreate(base, aColumns)(ctx, w); err != nil {
			return err
		}
		t := w.table(base)
		for _, c := range []string{"k", "n"}[:keys] {
			if err := w.exec(ctx, "CREATE INDEX "+t+"_"+c+" ON "+t+" ("+c+")"); err != nil {
				return err
			}
		}
		return nil
	}
}

// bigStr is select_big_str's string: 10,000 characters.
var bigStr = strings.Repeat("0123456789", 1000)

// btColumns is the batch group's table, sql-bench's transactions table:
// a primary key and a unique key.
const btColumns = "id INT PRIMARY KEY, rev INT NOT NULL, grp INT NOT NULL, u INT NOT NULL, UNIQUE (rev)"

// batchRows is how many statements one rollback batch holds.
const batchRows = 10

// inTxn runs the statement of instance i of n inside one transaction that
// the first instance begins and the last commits: sql-bench's *_commit.
func inTxn(stmt func(w *worker, i int) string) func(context.Context, *worker, int) (workload.Queries, error) {
	return func(ctx context.Context, w *worker, i int) (workload.Queries, error) {
		q := workload.Queries{Write: 1}
		n := w.wl.count(w.tests[w.ti])
		if i == 0 {
			if err := w.exec(ctx, "BEGIN"); err != nil {
				return workload.Queries{}, err
			}
			w.txOpen = true
			q.Other++
		}
		if err := w.affected(ctx, i, 1, stmt(w, i)); err != nil {
			return q, err
		}
		if i == n-1 {
			q.Other++
			w.txOpen = false
			return q, w.exec(ctx, "COMMIT")
		}
		return q, nil
	}
}

// rolledBack runs batchRows statements of batch i in a transaction, each
// checked to change one row, and rolls it back: sql-bench's *_rollback.
func rolledBack(stmt func(w *worker, i, j int) string) func(context.Context, *worker, int) (workload.Queries, error) {
	return func(ctx context.Context, w *worker, i int) (workload.Queries, error) {
		q := workload.Queries{Other: 1}
		if err := w.exec(ctx, "BEGIN"); err != nil {
			return workload.Queries{}, err
		}
		for j := range batchRows {
			q.Write++
			if err := w.affected(ctx, i, 1, stmt(w, i, j)); err != nil {
				return q, err
			}
		}
		q.Other++
		return q, w.exec(ctx, "ROLLBACK")
	}
}

// Rows of the batch table: insert_commit makes ids 1..c, insert_autocommit
// c+1..2c, c = count("insert_commit").
func (w *worker) btCommitted() int { return w.wl.countBase(1000) }

func btRow(w *worker, id int) string {
	return fmt.Sprintf("INSERT INTO %s VALUES (%d, %d, %d, 0)", w.table("bt"), id, -id, id/10)
}

// distinctPairs is how many distinct (n, k) pairs micro_a holds.
func (m *model) distinctPairs() int {
	seen := map[[2]int]bool{}
	for id := 1; id <= m.rows; id++ {
		seen[[2]int{m.nOf(id), m.kOf(id)}] = true
	}
	return len(seen)
}

// moreSuite are the tests of the groups after wisconsin, in order.
var moreSuite = []*test{
	{group: "prepared", op: "prepared_select", base: 1000, run: preparedSelect},
	{group: "prepared", op: "once_prepared_select", base: 1000, setup: prepareOnce, run: oncePrepared, teardown: closeOnce},

	{group: "joins", op: "outer_join_on_key", base: 100, run: selc(func(w *worker, i int) string {
		lo, hi := w.span(i, 10)
		return fmt.Sprintf("SELECT a.id, b.v FROM micro_a a LEFT JOIN micro_j1 b ON b.id = a.id WHERE a.id BETWEEN %d AND %d ORDER BY a.id", lo, hi)
	}, check(func(w *worker, i int) func([][]string) string {
		lo, hi := w.span(i, 10)
		return wantRows(outerRows(w.wl.model(), lo, hi))
	}))},
	{group: "joins", op: "outer_join", base: 100, run: selc(func(w *worker, i int) string {
		lo, hi := w.span(i, 10)
		return fmt.Sprintf("SELECT a.id, b.v FROM micro_a a LEFT JOIN micro_j1 b ON b.ref = a.id WHERE a.id BETWEEN %d AND %d ORDER BY a.id", lo, hi)
	}, check(func(w *worker, i int) func([][]string) string {
		lo, hi := w.span(i, 10)
		return wantRows(outerRows(w.wl.model(), lo, hi))
	}))},
	{group: "joins", op: "outer_join_found", base: 100, run: selc(func(w *worker, i int) string {
		lo, hi := w.span(i, 100)
		return fmt.Sprintf("SELECT COUNT(*) FROM micro_a a LEFT JOIN micro_j1 b ON b.id = a.id WHERE b.id IS NOT NULL AND a.id BETWEEN %d AND %d", lo, hi)
	}, check(func(w *worker, i int) func([][]string) string {
		lo, hi := w.span(i, 100)
		return one(max(0, min(hi, w.wl.model().joinRows)-lo+1))
	}))},
	{group: "joins", op: "outer_join_not_found", base: 100, run: selc(func(w *worker, i int) string {
		lo, hi := w.span(i, 100)
		return fmt.Sprintf("SELECT COUNT(*) FROM micro_a a LEFT JOIN micro_j1 b ON b.id = a.id WHERE b.id IS NULL AND a.id BETWEEN %d AND %d", lo, hi)
	}, check(func(w *worker, i int) func([][]string) string {
		lo, hi := w.span(i, 100)
		return one(hi - lo + 1 - max(0, min(hi, w.wl.model().joinRows)-lo+1))
	}))},
	{group: "joins", op: "select_in", base: 100, run: selc(func(w *worker, i int) string {
		_, list := inKeys(i, w.wl.rows(), inCount)
		return "SELECT id, s FROM micro_a WHERE id IN (" + list + ") ORDER BY id"
	}, check(func(w *worker, i int) func([][]string) string {
		m := w.wl.model()
		ids, _ := inKeys(i, m.rows, inCount)
		var want [][]any
		for _, id := range ids {
			want = append(want, []any{id, m.sOf(id)})
		}
		return wantRows(want)
	}))},
	{group: "joins", op: "select_join_in", base: 100, run: selc(func(w *worker, i int) string {
		_, list := inKeys(i, w.wl.joinRows(), inCount)
		return "SELECT a.id, a.s, b.v FROM micro_a a JOIN micro_j1 b ON b.id = a.id WHERE a.id IN (" + list + ") ORDER BY a.id"
	}, check(func(w *worker, i int) func([][]string) string {
		m := w.wl.model()
		ids, _ := inKeys(i, m.joinRows, inCount)
		var want [][]any
		for _, id := range ids {
			want = append(want, []any{id, m.sOf(id), id % 100})
		}
		return wantRows(want)
	}))},

	{group: "keys", op: "insert_select_1_key", base: 2, setup: emptyWithKey("is1", 0), run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("INSERT INTO %s SELECT id + %d, k, n, s FROM micro_a", w.table("is1"), i*w.wl.rows())
	}, func(w *worker, _ int) int64 { return int64(w.wl.rows()) }), teardown: drop("is1")},
	{group: "keys", op: "insert_select_2_keys", base: 2, setup: emptyWithKey("is2", 1), run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("INSERT INTO %s SELECT id + %d, k, n, s FROM micro_a", w.table("is2"), i*w.wl.rows())
	}, func(w *worker, _ int) int64 { return int64(w.wl.rows()) }), teardown: drop("is2")},
	{group: "keys", op: "create_index", base: 10, setup: copyA("ix"), run: ex(other, func(w *worker, i int) string {
		return fmt.Sprintf("CREATE INDEX %s_x%d ON %s (n, id)", w.table("ix"), i, w.table("ix"))
	}), verify: wantIndexes("ix", func(w *worker) int { return 2 + w.wl.countBase(10) })},
	{group: "keys", op: "drop_index", base: 10, run: ex(other, func(w *worker, i int) string {
		if isPG(w.fam) {
			return fmt.Sprintf("DROP INDEX %s_x%d", w.table("ix"), i)
		}
		return fmt.Sprintf("DROP INDEX %s_x%d ON %s", w.table("ix"), i, w.table("ix"))
	}), verify: wantIndexes("ix", func(*worker) int { return 2 }), teardown: drop("ix")},
	{group: "keys", op: "create_key+drop", base: 100, run: func(ctx context.Context, w *worker, i int) (workload.Queries, error) {
		t := w.table("ck")
		if err := w.exec(ctx, "CREATE TABLE "+t+" (id INT PRIMARY KEY, k INT NOT NULL, s VARCHAR(32) NOT NULL, UNIQUE (k))"); err != nil {
			return workload.Queries{}, err
		}
		return workload.Queries{Other: 2}, w.exec(ctx, "DROP TABLE "+t)
	}, verify: func(ctx context.Context, w *worker) (string, error) {
		// On the worker's own connection: the run's pool may have no other.
		schema, ph := "DATABASE()", "?"
		if isPG(w.fam) {
			schema, ph = "current_schema()", "$1"
		}
		var n int
		if err := w.conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "+schema+
			" AND table_name = "+ph, w.table("ck")).Scan(&n); err != nil {
			return "", err
		}
		if n != 0 {
			return w.table("ck") + " is still there", nil
		}
		return "", nil
	}},

	{group: "distinct", op: "select_distinct", base: 100, run: selc(func(w *worker, i int) string {
		lo, hi := w.span(i, 50)
		return fmt.Sprintf("SELECT DISTINCT n FROM micro_a WHERE id BETWEEN %d AND %d ORDER BY n", lo, hi)
	}, check(func(w *worker, i int) func([][]string) string {
		lo, hi := w.span(i, 50)
		var ns []int
		for id := lo; id <= hi; id++ {
			ns = append(ns, id%100)
		}
		slices.Sort(ns)
		var want [][]any
		for _, n := range slices.Compact(ns) {
			want = append(want, []any{n})
		}
		return wantRows(want)
	}))},
	{group: "distinct", op: "count_distinct", base: 100, run: selc(func(*worker, int) string {
		return "SELECT COUNT(DISTINCT n) FROM micro_a"
	}, check(func(w *worker, _ int) func([][]string) string { return one(min(100, w.wl.rows())) }))},
	{group: "distinct", op: "count_distinct_2", base: 20, run: selc(func(w *worker, _ int) string {
		if isPG(w.fam) {
			return "SELECT COUNT(DISTINCT (n, k)) FROM micro_a"
		}
		return "SELECT COUNT(DISTINCT n, k) FROM micro_a"
	}, check(func(w *worker, _ int) func([][]string) string { return one(w.wl.model().distinctPairs()) }))},
	{group: "distinct", op: "count_distinct_key_prefix", base: 100, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT COUNT(DISTINCT k) FROM micro_a WHERE k BETWEEN %d AND %d", w.key(i), w.key(i)+99)
	}, check(func(w *worker, i int) func([][]string) string {
		m, n := w.wl.model(), 0
		for k := w.key(i); k <= w.key(i)+99; k++ {
			if len(m.idsOfK(k)) > 0 {
				n++
			}
		}
		return one(n)
	}))},
	{group: "distinct", op: "count_distinct_group_on_key", base: 100, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT k, COUNT(DISTINCT n) FROM micro_a WHERE k BETWEEN %d AND %d GROUP BY k ORDER BY k", w.key(i), w.key(i)+99)
	}, check(func(w *worker, i int) func([][]string) string {
		m := w.wl.model()
		var want [][]any
		for k := w.key(i); k <= w.key(i)+99; k++ {
			ns := map[int]bool{}
			for _, id := range m.idsOfK(k) {
				ns[m.nOf(id)] = true
			}
			if len(ns) > 0 {
				want = append(want, []any{k, len(ns)})
			}
		}
		return wantRows(want)
	}))},
	{group: "distinct", op: "count_distinct_group", base: 20, run: selc(func(*worker, int) string {
		return "SELECT n, COUNT(DISTINCT s) FROM micro_a GROUP BY n ORDER BY n"
	}, check(func(w *worker, _ int) func([][]string) string {
		m := w.wl.model()
		ss := map[int]map[string]bool{}
		for id := 1; id <= m.rows; id++ {
			if ss[m.nOf(id)] == nil {
				ss[m.nOf(id)] = map[string]bool{}
			}
			ss[m.nOf(id)][m.sOf(id)] = true
		}
		var want [][]any
		for n := range 100 {
			if len(ss[n]) > 0 {
				want = append(want, []any{n, len(ss[n])})
			}
		}
		return wantRows(want)
	}))},
	{group: "distinct", op: "count_distinct_big", base: 20, run: selc(func(*worker, int) string {
		return "SELECT COUNT(DISTINCT s) FROM micro_a"
	}, check(func(w *worker, _ int) func([][]string) string {
		m, ss := w.wl.model(), map[string]bool{}
		for id := 1; id <= m.rows; id++ {
			ss[m.sOf(id)] = true
		}
		return one(len(ss))
	}))},

	{group: "order", op: "order_by_big_key", base: 10, run: selc(func(*worker, int) string {
		return "SELECT id, k FROM micro_a ORDER BY k"
	}, check(func(w *worker, _ int) func([][]string) string { return sorted(w.wl.rows(), 1, false) }))},
	{group: "order", op: "order_by_big_key_desc", base: 10, run: selc(func(*worker, int) string {
		return "SELECT id, k FROM micro_a ORDER BY k DESC"
	}, check(func(w *worker, _ int) func([][]string) string { return sorted(w.wl.rows(), 1, true) }))},
	{group: "order", op: "order_by_big_key2", base: 10, run: selc(func(*worker, int) string {
		return "SELECT id, k FROM micro_a ORDER BY id"
	}, check(func(w *worker, _ int) func([][]string) string { return sorted(w.wl.rows(), 0, false) }))},
	{group: "order", op: "order_by_big", base: 10, run: selc(func(*worker, int) string {
		return "SELECT id, k, n FROM micro_a ORDER BY n, id"
	}, check(func(w *worker, _ int) func([][]string) string { return sorted(w.wl.rows(), 2, false) }))},
	{group: "order", op: "order_by_range", base: 100, run: selc(func(w *worker, i int) string {
		return fmt.Sprintf("SELECT id, k FROM micro_a WHERE k BETWEEN %d AND %d ORDER BY k", w.key(i), w.key(i)+99)
	}, check(func(w *worker, i int) func([][]string) string {
		m, n := w.wl.model(), 0
		for k := w.key(i); k <= w.key(i)+99; k++ {
			n += len(m.idsOfK(k))
		}
		return sorted(n, 1, false)
	}))},

	{group: "delete", op: "delete_big", base: 1, setup: copyA("db"), run: exa(write, func(w *worker, _ int) string {
		return "DELETE FROM " + w.table("db")
	}, func(w *worker, i int) int64 {
		if i == 0 {
			return int64(w.wl.rows())
		}
		return 0
	}), teardown: drop("db")},
	{group: "delete", op: "delete_big_many_keys", base: 10, setup: copyAKeys("dk"), run: exa(write, func(w *worker, i int) string {
		lo, hi := bigSlice(w, i)
		return fmt.Sprintf("DELETE FROM %s WHERE id > %d AND id <= %d", w.table("dk"), lo, hi)
	}, func(w *worker, i int) int64 {
		lo, hi := bigSlice(w, i)
		return int64(hi - lo)
	}), verify: wantCount(func(w *worker) string { return "SELECT COUNT(*) FROM " + w.table("dk") }, func(*worker) int { return 0 }),
		teardown: drop("dk")},

	{group: "batch", op: "insert_commit", base: 1000, setup: recreate("bt", btColumns), run: inTxn(func(w *worker, i int) string { return btRow(w, i+1) })},
	{group: "batch", op: "insert_autocommit", base: 1000, run: exa(write, func(w *worker, i int) string { return btRow(w, w.btCommitted()+i+1) },
		func(*worker, int) int64 { return 1 }),
		verify: wantCount(func(w *worker) string { return "SELECT COUNT(*) FROM " + w.table("bt") }, func(w *worker) int { return 2 * w.btCommitted() })},
	{group: "batch", op: "insert_rollback", base: 100, run: rolledBack(func(w *worker, i, j int) string {
		return btRow(w, 10_000_000+i*batchRows+j)
	}), verify: wantCount(func(w *worker) string { return "SELECT COUNT(*) FROM " + w.table("bt") }, func(w *worker) int { return 2 * w.btCommitted() })},
	{group: "batch", op: "update_rollback", base: 100, run: rolledBack(func(w *worker, i, j int) string {
		return fmt.Sprintf("UPDATE %s SET u = 2 WHERE id = %d", w.table("bt"), (i*batchRows+j)%(2*w.btCommitted())+1)
	}), verify: wantCount(func(w *worker) string { return "SELECT COUNT(*) FROM " + w.table("bt") + " WHERE u = 2" }, func(*worker) int { return 0 })},
	{group: "batch", op: "delete_rollback", base: 100, run: rolledBack(func(w *worker, i, j int) string {
		return fmt.Sprintf("DELETE FROM %s WHERE id = %d", w.table("bt"), (i*batchRows+j)%(2*w.btCommitted())+1)
	}), verify: wantCount(func(w *worker) string { return "SELECT COUNT(*) FROM " + w.table("bt") }, func(w *worker) int { return 2 * w.btCommitted() })},
	{group: "batch", op: "update_commit", base: 1000, run: inTxn(func(w *worker, i int) string {
		return fmt.Sprintf("UPDATE %s SET u = 1 WHERE id = %d", w.table("bt"), i+1)
	})},
	{group: "batch", op: "update_autocommit", base: 1000, run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("UPDATE %s SET u = 1 WHERE id = %d", w.table("bt"), w.btCommitted()+i+1)
	}, func(*worker, int) int64 { return 1 }),
		verify: wantCount(func(w *worker) string { return "SELECT COUNT(*) FROM " + w.table("bt") + " WHERE u = 1" }, func(w *worker) int { return 2 * w.btCommitted() })},
	{group: "batch", op: "delete_commit", base: 500, run: inTxn(func(w *worker, i int) string {
		return fmt.Sprintf("DELETE FROM %s WHERE id = %d", w.table("bt"), i+1)
	})},
	{group: "batch", op: "delete_autocommit", base: 500, run: exa(write, func(w *worker, i int) string {
		return fmt.Sprintf("DELETE FROM %s WHERE id = %d", w.table("bt"), w.btCommitted()+i+1)
	}, func(*worker, int) int64 { return 1 }),
		verify:   wantCount(func(w *worker) string { return "SELECT COUNT(*) FROM " + w.table("bt") }, func(w *worker) int { return 2*w.btCommitted() - 2*w.wl.countBase(500) }),
		teardown: drop("bt")},
}

// bigSlice is the id range (lo, hi] instance i of delete_big_many_keys
// deletes: the table in count slices.
func bigSlice(w *worker, i int) (lo, hi int) {
	n, c := w.wl.rows(), w.wl.countBase(10)
	return i * n / c, (i + 1) * n / c
}
