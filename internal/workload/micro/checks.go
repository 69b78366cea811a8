package micro

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/dbarena/dbarena/internal/workload"
)

// Result checks. Like sql-bench, which prints a warning and marks the
// operation's time with "?" when a query returns something else than the
// data say it must, every select of the suite checks the rows it gets
// against a model of the prepared tables (model), and statements that
// change data check the rows they changed. A wrong result does not stop
// the suite: it is counted per operation (Summarize adds it to the run's
// errors under the code WrongResultCode), noted with its first instance,
// and the operation's Time for line is preceded by a "Warning:" line, so
// that sql-bench's run-all-tests marks it "?" as it marks its own.

// WrongResultCode is the error code wrong results are counted under.
const WrongResultCode = "wrong_result"

// WrongPrefix+OP is the figure counting OP's wrong results.
const WrongPrefix = "micro.wrong."

// model is what micro_a and micro_j1..10 hold after Prepare: micro_a row
// id has k = kOf(id), n = id % 100, s = sOf(id); micro_jN row id has
// ref = id, v = id % 100.
type model struct {
	rows, joinRows int
	// ids lists, for each k, the ids of micro_a rows with that k.
	ids map[int][]int
}

func (m *model) kOf(id int) int     { return (id*7919)%m.rows + 1 }
func (m *model) sOf(id int) string  { return fmt.Sprintf("s%08d", m.kOf(id)) }
func (m *model) nOf(id int) int     { return id % 100 }
func (m *model) has(id int) bool    { return id >= 1 && id <= m.rows }
func (m *model) hasJ(id int) bool   { return id >= 1 && id <= m.joinRows }
func (m *model) idsOfK(k int) []int { return m.ids[k] }

var modelMu sync.Mutex

// model returns the model of the tables at the run's --scale.
func (wl *Workload) model() *model {
	modelMu.Lock()
	defer modelMu.Unlock()
	if wl.m == nil || wl.m.rows != wl.rows() {
		m := &model{rows: wl.rows(), joinRows: wl.joinRows(), ids: map[int][]int{}}
		for id := 1; id <= m.rows; id++ {
			k := m.kOf(id)
			m.ids[k] = append(m.ids[k], id)
		}
		wl.m = m
	}
	return wl.m
}

// wrongs counts an operation's wrong results.
type wrongs struct {
	n     int64
	first string
}

// wrong records that instance i of op returned a wrong result.
func (w *worker) wrong(op string, i int, what string) {
	wl := w.wl
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if wl.wrong == nil {
		wl.wrong = map[string]*wrongs{}
	}
	x := wl.wrong[op]
	if x == nil {
		x = &wrongs{first: fmt.Sprintf("instance %d: %s", i+1, what)}
		wl.wrong[op] = x
	}
	x.n++
}

// checker says what is wrong with the rows instance i of a query returned
// ("" when nothing is).
type checker func(w *worker, i int, rows [][]string) string

// selc runs the query built from i, reads every row and checks them.
func selc(f func(w *worker, i int) string, check checker) func(context.Context, *worker, int) (workload.Queries, error) {
	return func(ctx context.Context, w *worker, i int) (workload.Queries, error) {
		rows, err := w.rows(ctx, f(w, i))
		if err != nil {
			return read, err
		}
		if what := check(w, i, rows); what != "" {
			w.wrong(w.tests[w.ti].op, i, what)
		}
		return read, nil
	}
}

// rows runs q and returns every row, each value as text ("NULL" for NULL).
func (w *worker) rows(ctx context.Context, q string, args ...any) ([][]string, error) {
	rs, err := w.conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return readRows(rs)
}

// readRows reads and closes rs.
func readRows(rs *sql.Rows) ([][]string, error) {
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	return out, rs.Err()
}

// one wants exactly one row holding vals.
func one(vals ...any) func(rows [][]string) string {
	return func(rows [][]string) string { return wantRows([][]any{vals})(rows) }
}

// wantRows wants exactly these rows, in this order. A float value is
// compared as a number (SUM and AVG come back as decimals).
func wantRows(want [][]any) func(rows [][]string) string {
	return func(rows [][]string) string {
		if len(rows) != len(want) {
			return fmt.Sprintf("got %d rows, want %d", len(rows), len(want))
		}
		for r, row := range rows {
			if len(row) != len(want[r]) {
				return fmt.Sprintf("row %d: got %d columns, want %d", r+1, len(row), len(want[r]))
			}
			for c, v := range want[r] {
				if !same(row[c], v) {
					return fmt.Sprintf("row %d column %d: got %q, want %v", r+1, c+1, row[c], v)
				}
			}
		}
		return ""
	}
}

// same compares a value as text with want (an int, a string, nil for NULL).
func same(got string, want any) bool {
	switch v := want.(type) {
	case nil:
		return got == "NULL"
	case int:
		if got == strconv.Itoa(v) {
			return true
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(got), 64)
		return err == nil && f == float64(v)
	case string:
		return got == v
	}
	return fmt.Sprint(want) == got
}

// count wants n rows.
func count(n int) func(rows [][]string) string {
	return func(rows [][]string) string {
		if len(rows) != n {
			return fmt.Sprintf("got %d rows, want %d", len(rows), n)
		}
		return ""
	}
}

// ints reads column c of every row as integers.
func ints(rows [][]string, c int) ([]int, string) {
	out := make([]int, len(rows))
	for r, row := range rows {
		if c >= len(row) {
			return nil, fmt.Sprintf("row %d has %d columns", r+1, len(row))
		}
		v, err := strconv.Atoi(row[c])
		if err != nil {
			return nil, fmt.Sprintf("row %d column %d: %q is not an integer", r+1, c+1, row[c])
		}
		out[r] = v
	}
	return out, ""
}

// sorted wants n rows whose column c is in order (descending when desc).
func sorted(n, c int, desc bool) func(rows [][]string) string {
	return func(rows [][]string) string {
		if len(rows) != n {
			return fmt.Sprintf("got %d rows, want %d", len(rows), n)
		}
		vs, bad := ints(rows, c)
		if bad != "" {
			return bad
		}
		for r := 1; r < len(vs); r++ {
			if desc && vs[r] > vs[r-1] || !desc && vs[r] < vs[r-1] {
				return fmt.Sprintf("rows %d and %d out of order (%d, %d)", r, r+1, vs[r-1], vs[r])
			}
		}
		return ""
	}
}

// affected runs a statement and checks the rows it changed.
func (w *worker) affected(ctx context.Context, i int, want int64, q string, args ...any) error {
	res, err := w.conn.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != want {
		w.wrong(w.tests[w.ti].op, i, fmt.Sprintf("changed %d rows, want %d", n, want))
	}
	return nil
}

// exa runs the statement built from i, counted as q, and checks that it
// changed want(w, i) rows.
func exa(q workload.Queries, f func(w *worker, i int) string, want func(w *worker, i int) int64) func(context.Context, *worker, int) (workload.Queries, error) {
	return func(ctx context.Context, w *worker, i int) (workload.Queries, error) {
		return q, w.affected(ctx, i, want(w, i), f(w, i))
	}
}

// check turns a check of rows alone into a checker.
func check(f func(w *worker, i int) func(rows [][]string) string) checker {
	return func(w *worker, i int, rows [][]string) string { return f(w, i)(rows) }
}
