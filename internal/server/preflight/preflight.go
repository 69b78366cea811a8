// Package preflight compares what a run will ask of a server (a
// workload.Demand) with the server's limits before the run starts: Check
// reports a limit that would be hit on a server dbarena did not start;
// Raise lifts what can be lifted live on a sandbox dbarena started.
package preflight

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// LimitError is a server limit the run would hit: Setting is Have, and
// needs to be at least Need.
type LimitError struct {
	Setting    string
	Have, Need int64
	// Fix says how to raise the limit, e.g. "SET GLOBAL max_connections = 2060".
	Fix string
}

// Error names the setting, both values and the fix.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s is %d, this run needs %d (%s, or fewer --threads)", e.Setting, e.Have, e.Need, e.Fix)
}

// limit is one setting compared with what the run needs.
type limit struct {
	setting    string
	have, need int64
	// live: SET GLOBAL raises it.
	live bool
	// soft: missing it slows the run down but does not fail it, so Check
	// ignores it.
	soft bool
	// ceiling is the most Raise sets, 0 for no ceiling.
	ceiling int64
}

func (l limit) err(fix string) *LimitError {
	return &LimitError{Setting: l.setting, Have: l.have, Need: l.need, Fix: fix}
}

// Check returns the limits of the server behind db that a run asking for
// need would hit, as *LimitError values joined into one error (nil when
// none would be hit), or another error when it could not read them.
// extraConns are the connections the caller opens besides the workers'
// (monitor, counters), db's own included when it stays open during the run;
// connections of other clients are counted from the server.
func Check(ctx context.Context, db *sql.DB, flavor target.Flavor, need workload.Demand, extraConns int) error {
	limits, err := measure(ctx, []*sql.DB{db}, flavor, need, extraConns)
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range limits {
		if !l.soft && l.need > l.have {
			errs = append(errs, l.err(fixFor(flavor, l)))
		}
	}
	return errors.Join(errs...)
}

// Raise lifts the limits a run asking for need would hit on a sandbox
// dbarena started: on the MySQL family SET GLOBAL raises max_connections,
// max_prepared_stmt_count and table_open_cache until the server restarts.
// It returns one note per raised limit. A limit it cannot raise far enough
// (open_files_limit or PostgreSQL's max_connections, which are not live, or
// a need beyond the setting's largest value) is a *LimitError whose Fix
// says what to do; then Raise changes nothing at all, so a refused run
// leaves the server as it found it. db is the run's pool, as for Check;
// admin is the sandbox superuser's connection, which sets the global
// variables (the workload account may not).
func Raise(ctx context.Context, db, admin *sql.DB, flavor target.Flavor, need workload.Demand, extraConns int) (notes []string, err error) {
	limits, err := measure(ctx, []*sql.DB{db, admin}, flavor, need, extraConns)
	if err != nil {
		return nil, err
	}
	var raise []limit
	var errs []error
	var largest map[string]int64
	for _, l := range limits {
		if l.need <= l.have {
			continue
		}
		if !l.live {
			if !l.soft {
				errs = append(errs, l.err(fmt.Sprintf("restart the sandbox with --set %s=%d", l.setting, l.need)))
			}
			continue
		}
		if largest == nil {
			if largest, err = maxima(ctx, admin); err != nil {
				return nil, err
			}
		}
		if top, ok := largest[l.setting]; ok && l.need > top && !l.soft {
			errs = append(errs, l.err(fmt.Sprintf("the server's largest value is %d", top)))
			continue
		}
		raise = append(raise, l)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, l := range raise {
		to := l.need
		if l.ceiling > 0 && to > l.ceiling {
			to = l.ceiling
		}
		if to <= l.have {
			continue
		}
		got, err := setGlobal(ctx, admin, l.setting, to)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got > l.have {
			notes = append(notes, fmt.Sprintf("raised %s from %d to %d for this run", l.setting, l.have, got))
		}
		if got < l.need && !l.soft {
			l.have = got
			errs = append(errs, l.err(fmt.Sprintf("the server's largest value is %d", got)))
		}
	}
	return notes, errors.Join(errs...)
}

// maxima reads the largest values the MySQL-family server behind admin
// accepts for the settings Raise may set: from MariaDB's
// information_schema.SYSTEM_VARIABLES or MySQL 8's
// performance_schema.variables_info; on servers with neither,
// max_connections' documented ceiling (100000, every version).
func maxima(ctx context.Context, admin *sql.DB) (map[string]int64, error) {
	const names = "('max_connections', 'max_prepared_stmt_count', 'table_open_cache')"
	for _, q := range []string{
		"SELECT VARIABLE_NAME, NUMERIC_MAX_VALUE FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME IN " + strings.ToUpper(names),
		"SELECT VARIABLE_NAME, MAX_VALUE FROM performance_schema.variables_info WHERE VARIABLE_NAME IN " + names,
	} {
		conn, err := admin.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		m, err := readPairs(ctx, conn, q)
		conn.Close()
		if err == nil && len(m) > 0 {
			return m, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("preflight: %w", ctx.Err())
		}
	}
	return map[string]int64{"max_connections": 100000}, nil
}

// fixFor is the usual way to raise l on a server dbarena did not start.
func fixFor(flavor target.Flavor, l limit) string {
	switch {
	case l.live:
		return fmt.Sprintf("SET GLOBAL %s = %d", l.setting, l.need)
	case flavor.Family() == target.Postgres:
		return fmt.Sprintf("ALTER SYSTEM SET %s = %d and restart the server", l.setting, l.need)
	}
	return fmt.Sprintf("set %s = %d in the server's config (and its RLIMIT_NOFILE) and restart it", l.setting, l.need)
}

// measure reads the server's limits and what is in use, and works out
// what the run needs of each.
// own are the caller's pools, own[0] the one to measure with: their
// connections are not "other clients".
func measure(ctx context.Context, own []*sql.DB, flavor target.Flavor, need workload.Demand, extraConns int) ([]limit, error) {
	conn, err := own[0].Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	defer conn.Close()
	switch flavor.Family() {
	case target.MySQL:
		return measureMySQL(ctx, conn, own, need, extraConns)
	case target.Postgres:
		return measurePostgres(ctx, conn, own, need, extraConns)
	}
	return nil, fmt.Errorf("preflight: unknown flavor %q", flavor)
}

// others is how many of connected are not in the pools own.
func others(own []*sql.DB, connected int64) int64 {
	for i, db := range own {
		if !slices.Contains(own[:i], db) {
			connected -= int64(db.Stats().OpenConnections)
		}
	}
	return max(connected, 0)
}

func measureMySQL(ctx context.Context, conn *sql.Conn, own []*sql.DB, need workload.Demand, extraConns int) ([]limit, error) {
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
	conns := int64(need.Connections) + int64(extraConns) + others(own, status["threads_connected"])
	// Files: a socket per connection, those open now, one per table touched.
	files := conns + status["open_files"] + status["innodb_num_open_files"] + int64(need.Tables) + 64
	tables := int64(need.Connections) * int64(need.Tables)
	return []limit{
		{setting: "max_connections", have: vars["max_connections"], need: conns, live: true},
		{setting: "max_prepared_stmt_count", have: vars["max_prepared_stmt_count"], live: true,
			need: int64(need.Connections)*int64(need.PreparedPerConn) + status["prepared_stmt_count"]},
		{setting: "open_files_limit", have: vars["open_files_limit"], need: files},
		// Every connection keeps its tables open; the cache is capped by
		// what the file limit leaves (MyISAM and Aria tables hold files).
		{setting: "table_open_cache", have: vars["table_open_cache"], need: tables, live: true, soft: true,
			ceiling: max((vars["open_files_limit"]-conns)/2, vars["table_open_cache"])},
	}, nil
}

func measurePostgres(ctx context.Context, conn *sql.Conn, own []*sql.DB, need workload.Demand, extraConns int) ([]limit, error) {
	var maxConns, reserved, connected int64
	var super bool
	err := conn.QueryRowContext(ctx, `SELECT current_setting('max_connections')::bigint,
		current_setting('superuser_reserved_connections')::bigint
		  + coalesce(current_setting('reserved_connections', true), '0')::bigint,
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),
		(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)`).Scan(&maxConns, &reserved, &connected, &super)
	if err != nil {
		return nil, fmt.Errorf("preflight: read connection limits: %w", err)
	}
	if super {
		reserved = 0 // a superuser may use the reserved slots
	}
	conns := int64(need.Connections) + int64(extraConns) + others(own, connected) + reserved
	return []limit{{setting: "max_connections", have: maxConns, need: conns}}, nil
}

// readPairs reads the name/value rows of a SHOW statement, names in lower
// case; values that are not integers are left out.
func readPairs(ctx context.Context, conn *sql.Conn, q string) (map[string]int64, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("preflight: %s: %w", q, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("preflight: %s: %w", q, err)
		}
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[strings.ToLower(name)] = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("preflight: %s: %w", q, err)
	}
	return out, nil
}

// setGlobal sets a global variable (the name is one of measureMySQL's) and
// returns the value the server kept: it may clip a value out of range.
func setGlobal(ctx context.Context, db *sql.DB, name string, v int64) (int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("preflight: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET GLOBAL "+name+" = "+strconv.FormatInt(v, 10)); err != nil {
		return 0, fmt.Errorf("preflight: raise %s to %d: %w", name, v, err)
	}
	var got int64
	if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL."+name).Scan(&got); err != nil {
		return 0, fmt.Errorf("preflight: read %s: %w", name, err)
	}
	return got, nil
}
