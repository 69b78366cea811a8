package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// timeLayout formats load dates for both families.
const timeLayout = "2006-01-02 15:04:05"

// meta is what the first prepare records in dbarena_tpcc_meta, so that a
// resumed or split load writes the same data and a run knows the load's C
// constants and warehouse count.
type meta struct {
	seed       uint64
	warehouses int
	schema     string
	loadTime   string
	c          Constants
}

func (m *meta) pairs() [][2]string {
	return [][2]string{
		{"seed", strconv.FormatUint(m.seed, 10)},
		{"warehouses", strconv.Itoa(m.warehouses)},
		{"schema", m.schema},
		{"load_time", m.loadTime},
		{"c_last", strconv.Itoa(m.c.CLast)},
		{"c_id", strconv.Itoa(m.c.CID)},
		{"ol_i_id", strconv.Itoa(m.c.OLIID)},
	}
}

func metaDDL() []string {
	return []string{
		"CREATE TABLE IF NOT EXISTS " + metaTable + " (k varchar(32) not null, v varchar(64) not null, PRIMARY KEY (k))",
		"CREATE TABLE IF NOT EXISTS " + unitsTable + " (part varchar(16) not null, w_id int not null, PRIMARY KEY (part, w_id))",
	}
}

// querier is a *sql.DB or a *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readMeta returns the recorded meta, or nil when there is none.
func readMeta(ctx context.Context, env workload.Env, q querier) (*meta, error) {
	if ok, err := tableExists(ctx, env, q, metaTable); err != nil || !ok {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, "SELECT k, v FROM "+metaTable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	kv := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		kv[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(kv) == 0 {
		return nil, nil
	}
	var m meta
	var errs []error
	num := func(k string) int {
		n, err := strconv.Atoi(kv[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: bad %s %q", metaTable, k, kv[k]))
		}
		return n
	}
	seed, err := strconv.ParseUint(kv["seed"], 10, 64)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: bad seed %q", metaTable, kv["seed"]))
	}
	m.seed = seed
	m.warehouses = num("warehouses")
	m.schema = kv["schema"]
	m.loadTime = kv["load_time"]
	m.c = Constants{CLast: num("c_last"), CID: num("c_id"), OLIID: num("ol_i_id")}
	return &m, errors.Join(errs...)
}

// writeMeta records m unless another loader already did; it returns what
// is recorded.
func writeMeta(ctx context.Context, env workload.Env, m *meta) (*meta, error) {
	tx, err := env.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	q := env.Dialect.Rebind("INSERT INTO " + metaTable + " (k, v) VALUES (?, ?)")
	for _, kv := range m.pairs() {
		if _, err := tx.ExecContext(ctx, q, kv[0], kv[1]); err != nil {
			// A concurrent loader (another client machine) was first.
			_ = tx.Rollback()
			got, rerr := readMeta(ctx, env, env.DB)
			if rerr == nil && got != nil {
				return got, nil
			}
			return nil, fmt.Errorf("record load parameters: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return m, nil
}

// tableExists reports whether name is a table of the current database.
func tableExists(ctx context.Context, env workload.Env, db querier, name string) (bool, error) {
	q := env.Dialect.Rebind("SELECT COUNT(*) FROM information_schema.tables WHERE " + schemaPredicate(env) + " AND table_name = ?")
	var n int
	err := db.QueryRowContext(ctx, q, name).Scan(&n)
	return n > 0, err
}

// prepareMeta reads the recorded meta or records the configuration's, and
// checks that this prepare agrees with it.
func (wl *Workload) prepareMeta(ctx context.Context, env workload.Env) (*meta, error) {
	c := &wl.cfg
	m, err := readMeta(ctx, env, env.DB)
	if err != nil {
		return nil, err
	}
	if m == nil {
		lt := c.LoadTime
		if lt.IsZero() {
			lt = time.Now()
		}
		m, err = writeMeta(ctx, env, &meta{seed: c.Seed, warehouses: c.Warehouses, schema: c.Schema,
			loadTime: lt.UTC().Format(timeLayout), c: loadConstants(c.Seed)})
		if err != nil {
			return nil, err
		}
	}
	var errs []error
	if m.seed != c.Seed {
		errs = append(errs, fmt.Errorf("--seed %d: the tables were prepared with --seed %d (cleanup first, or resume with the same seed)", c.Seed, m.seed))
	}
	if m.warehouses != c.Warehouses {
		errs = append(errs, fmt.Errorf("--warehouses %d: the tables were prepared for %d warehouses (cleanup first)", c.Warehouses, m.warehouses))
	}
	if m.schema != c.Schema {
		errs = append(errs, fmt.Errorf("--schema %s: the tables were prepared with --schema %s (cleanup first)", c.Schema, m.schema))
	}
	return m, errors.Join(errs...)
}

// doneUnits returns the completed load units as part -> warehouse set.
func doneUnits(ctx context.Context, db *sql.DB) (map[unit]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT part, w_id FROM "+unitsTable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[unit]bool{}
	for rows.Next() {
		var u unit
		if err := rows.Scan(&u.part, &u.w); err != nil {
			return nil, err
		}
		out[u] = true
	}
	return out, rows.Err()
}

// hasForeignKeys reports whether a table of the current schema has a
// foreign key (tpcc-mysql's add_fkey_idx.sql, or prepare --fk).
func hasForeignKeys(ctx context.Context, env workload.Env, q querier) (bool, error) {
	query := "SELECT COUNT(*) FROM information_schema.table_constraints WHERE constraint_schema = " +
		env.Dialect.CurrentDatabase() + " AND constraint_type = 'FOREIGN KEY'"
	var n int
	err := q.QueryRowContext(ctx, query).Scan(&n)
	return n > 0, err
}
