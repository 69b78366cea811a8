package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/workload"
)

// tableInfo is what the server's catalog says about one sbtest table.
type tableInfo struct {
	exists  bool
	columns map[string]bool
	autoInc bool   // id is AUTO_INCREMENT (MySQL) or has a nextval() default (SERIAL)
	primary bool   // id is the PRIMARY KEY
	kIndex  bool   // index k_N exists
	engine  string // MySQL storage engine, lower case; "" on PostgreSQL
}

// inspect reads the catalog entries of sbtest1..n; the result is indexed by
// table number (index 0 unused).
func inspect(ctx context.Context, env workload.Env, n int) ([]tableInfo, error) {
	var qs [3]string
	qs[0], qs[1], qs[2] = env.Dialect.Catalog("sbtest%")
	out := make([]tableInfo, n+1)
	// num is the number of table sbtestN for N in 1..n, else 0.
	num := func(name string) int {
		i, err := strconv.Atoi(strings.TrimPrefix(name, "sbtest"))
		if err != nil || i < 1 || i > n || tableName(i) != name {
			return 0
		}
		return i
	}
	// scan runs q, whose rows are a table name, a string and, when
	// withBool, a boolean, and hands each row of sbtest1..n to fn.
	scan := func(q string, withBool bool, fn func(i int, a string, b bool)) error {
		rows, err := env.DB.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("read the catalog: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var name, a string
			var b sql.NullBool
			dest := []any{&name, &a}
			if withBool {
				dest = append(dest, &b)
			}
			if err := rows.Scan(dest...); err != nil {
				return fmt.Errorf("read the catalog: %w", err)
			}
			// Columns and indexes are read for the tables found first.
			if i := num(name); i > 0 && (out[i].exists || !withBool) {
				fn(i, a, b.Bool)
			}
		}
		return rows.Err()
	}
	if err := scan(qs[0], false, func(i int, engine string, _ bool) {
		out[i] = tableInfo{exists: true, engine: strings.ToLower(engine), columns: map[string]bool{}}
	}); err != nil {
		return nil, err
	}
	if err := scan(qs[1], true, func(i int, col string, autoInc bool) {
		col = strings.ToLower(col)
		out[i].columns[col] = true
		if col == "id" {
			out[i].autoInc = autoInc
		}
	}); err != nil {
		return nil, err
	}
	if err := scan(qs[2], true, func(i int, index string, primary bool) {
		if primary {
			out[i].primary = true
		}
		if strings.EqualFold(index, "k_"+strconv.Itoa(i)) {
			out[i].kIndex = true
		}
	}); err != nil {
		return nil, err
	}
	return out, nil
}
