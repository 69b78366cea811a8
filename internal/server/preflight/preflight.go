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

	flv "github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
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
type limit = flv.Limit

func limitErr(l limit, fix string) *LimitError {
	return &LimitError{Setting: l.Setting, Have: l.Have, Need: l.Need, Fix: fix}
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
		if !l.Soft && l.Need > l.Have {
			errs = append(errs, limitErr(l, fixFor(flavor, l)))
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
		if l.Need <= l.Have {
			continue
		}
		if !l.Live {
			if !l.Soft {
				errs = append(errs, limitErr(l, fmt.Sprintf("restart the sandbox with --set %s=%d", l.Setting, l.Need)))
			}
			continue
		}
		if largest == nil {
			if largest, err = maxima(ctx, admin); err != nil {
				return nil, err
			}
		}
		if top, ok := largest[l.Setting]; ok && l.Need > top && !l.Soft {
			errs = append(errs, limitErr(l, fmt.Sprintf("the server's largest value is %d", top)))
			continue
		}
		raise = append(raise, l)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, l := range raise {
		to := l.Need
		if l.Ceiling > 0 && to > l.Ceiling {
			to = l.Ceiling
		}
		if to <= l.Have {
			continue
		}
		got, err := setGlobal(ctx, admin, l.Setting, to)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got > l.Have {
			notes = append(notes, fmt.Sprintf("raised %s from %d to %d for this run", l.Setting, l.Have, got))
		}
		if got < l.Need && !l.Soft {
			l.Have = got
			errs = append(errs, limitErr(l, fmt.Sprintf("the server's largest value is %d", got)))
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
	case l.Live:
		return fmt.Sprintf("SET GLOBAL %s = %d", l.Setting, l.Need)
	}
	return dialect.MustFor(flavor).RaiseLimit(l.Setting, l.Need)
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
	d, err := dialect.ForFlavor(flavor)
	if err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	limits, err := d.Limits(ctx, conn, flv.Demand{Connections: need.Connections, PreparedPerConn: need.PreparedPerConn,
		Tables: need.Tables, Extra: extraConns}, func(connected int64) int64 { return others(own, connected) })
	if err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	return limits, nil
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
