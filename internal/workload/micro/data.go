package micro

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/workload"
)

// aColumns is micro_a's layout: id the primary key, k indexed (a
// permutation of the ids), n = id % 100 (1% groups, no index), s text.
const aColumns = "id INT PRIMARY KEY, k INT NOT NULL, n INT NOT NULL, s VARCHAR(32) NOT NULL"

// joinTables is how many micro_jN tables the join tests use.
const joinTables = 10

// loadBatch is rows per INSERT while preparing.
const loadBatch = 500

// Prepare implements workload.Preparer: micro_a and micro_j1..10, loaded.
func (wl *Workload) Prepare(ctx context.Context, env workload.Env, _ int, p workload.Progress) error {
	if err := wl.Cleanup(ctx, env); err != nil {
		return err
	}
	n, nj := wl.rows(), wl.joinRows()
	p.SetTotal(int64(n + joinTables*nj))
	if err := create(ctx, env.DB, "micro_a", aColumns, n, p, func(id int) string {
		k := (id*7919)%n + 1
		return fmt.Sprintf("(%d, %d, %d, 's%08d')", id, k, id%100, k)
	}); err != nil {
		return err
	}
	if _, err := env.DB.ExecContext(ctx, "CREATE INDEX micro_a_k ON micro_a (k)"); err != nil {
		return fmt.Errorf("index micro_a: %w", err)
	}
	for j := 1; j <= joinTables; j++ {
		if err := create(ctx, env.DB, fmt.Sprintf("micro_j%d", j), "id INT PRIMARY KEY, ref INT NOT NULL, v INT NOT NULL", nj, p, func(id int) string {
			return fmt.Sprintf("(%d, %d, %d)", id, id, id%100)
		}); err != nil {
			return err
		}
	}
	return nil
}

// create makes table and inserts rows 1..n from row.
func create(ctx context.Context, db *sql.DB, table, cols string, n int, p workload.Progress, row func(id int) string) error {
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" ("+cols+")"); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	for lo := 1; lo <= n; lo += loadBatch {
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " VALUES ")
		hi := min(n, lo+loadBatch-1)
		for id := lo; id <= hi; id++ {
			if id > lo {
				b.WriteString(",")
			}
			b.WriteString(row(id))
		}
		if _, err := db.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("load %s: %w", table, err)
		}
		p.Add(int64(hi-lo+1), int64(b.Len()))
	}
	return nil
}

// Cleanup implements workload.Cleaner: it drops every micro_ table of the
// current database (schema on PostgreSQL), workers' leftovers included.
func (wl *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	names, err := microTables(ctx, env)
	if err != nil {
		return err
	}
	for _, t := range names {
		if _, err := env.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("drop %s: %w", t, err)
		}
	}
	return nil
}

// microTables lists the micro_ tables of the current database.
func microTables(ctx context.Context, env workload.Env) ([]string, error) {
	schema := "DATABASE()"
	if isPG(env.Dialect.Family()) {
		schema = "current_schema()"
	}
	rows, err := env.DB.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = "+schema+
		" AND table_name LIKE 'micro\\_%' ORDER BY table_name")
	if err != nil {
		return nil, fmt.Errorf("list micro tables: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// Ready implements workload.Readier: micro_a and the join tables hold the
// rows --scale asks for.
func (wl *Workload) Ready(ctx context.Context, env workload.Env) error {
	hint := fmt.Sprintf("dbarena prepare micro --scale %g", wl.scale)
	want := map[string]int{"micro_a": wl.rows()}
	for j := 1; j <= joinTables; j++ {
		want[fmt.Sprintf("micro_j%d", j)] = wl.joinRows()
	}
	have, err := microTables(ctx, env)
	if err != nil {
		return err
	}
	for _, t := range append([]string{"micro_a"}, joinNames()...) {
		if !contains(have, t) {
			return &workload.NotReadyError{Problem: "table " + t + " is missing", Hint: hint}
		}
		var n int
		if err := env.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t).Scan(&n); err != nil {
			return fmt.Errorf("count %s: %w", t, err)
		}
		if n != want[t] {
			// Tables of another scale are refused, never run: the
			// operations' keys and checks are those of --scale.
			p := fmt.Sprintf("table %s has %d rows, --scale %g wants %d", t, n, wl.scale, want[t])
			if s, ok := scaleOf(t, n); ok {
				p += fmt.Sprintf(" (the tables were prepared with --scale %g: run with it, or prepare again)", s)
			}
			return &workload.NotReadyError{Problem: p, Hint: "dbarena cleanup micro && " + hint, Refuse: true}
		}
	}
	return nil
}

// scaleOf is the --scale that gives table t n rows, when one does.
func scaleOf(t string, n int) (float64, bool) {
	if t != "micro_a" || n <= 100 {
		return 0, false
	}
	s := float64(n) / 10000
	probe := &Workload{scale: s}
	return s, probe.rows() == n
}

func joinNames() []string {
	var out []string
	for j := 1; j <= joinTables; j++ {
		out = append(out, fmt.Sprintf("micro_j%d", j))
	}
	return out
}
