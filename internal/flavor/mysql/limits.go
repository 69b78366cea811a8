package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/flavor"
)

// Limits implements flavor.Server: connections, prepared statements,
// open files and the table cache.
func (Dialect) Limits(ctx context.Context, conn *sql.Conn, need flavor.Demand, others func(connected int64) int64) ([]flavor.Limit, error) {
	vars, err := readPairs(ctx, conn, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "+
		"('max_connections', 'max_prepared_stmt_count', 'open_files_limit', 'table_open_cache')")
	if err != nil {
		return nil, err
	}
	status, err := readPairs(ctx, conn, "SHOW GLOBAL STATUS WHERE Variable_name IN "+
		"('Threads_connected', 'Prepared_stmt_count', 'Open_files', 'Innodb_num_open_files')")
	if err != nil {
		return nil, err
	}
	conns := int64(need.Connections) + int64(need.Extra) + others(status["threads_connected"])
	// Files: a socket per connection, those open now, one per table touched.
	files := conns + status["open_files"] + status["innodb_num_open_files"] + int64(need.Tables) + 64
	tables := int64(need.Connections) * int64(need.Tables)
	return []flavor.Limit{
		{Setting: "max_connections", Have: vars["max_connections"], Need: conns, Live: true},
		{Setting: "max_prepared_stmt_count", Have: vars["max_prepared_stmt_count"], Live: true,
			Need: int64(need.Connections)*int64(need.PreparedPerConn) + status["prepared_stmt_count"]},
		{Setting: "open_files_limit", Have: vars["open_files_limit"], Need: files},
		// Every connection keeps its tables open; the cache is capped by
		// what the file limit leaves (MyISAM and Aria tables hold files).
		{Setting: "table_open_cache", Have: vars["table_open_cache"], Need: tables, Live: true, Soft: true,
			Ceiling: max((vars["open_files_limit"]-conns)/2, vars["table_open_cache"])},
	}, nil
}

// readPairs reads the name/value rows of a SHOW statement, names in lower
// case; values that are not integers are left out.
func readPairs(ctx context.Context, conn *sql.Conn, q string) (map[string]int64, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[strings.ToLower(name)] = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return out, nil
}
