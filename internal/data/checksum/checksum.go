// Package checksum computes an order-independent content checksum of every
// table of a database, on the server, so two servers (or two storage engines
// of one server) can be shown to hold the same data.
//
// Each row is turned into a canonical text: its columns in ordinal order,
// each rendered by type and joined with ','; NULL is "N", which no rendered
// value can be. Numbers render as text, dates as YYYY-MM-DD, datetimes as
// YYYY-MM-DD HH:MM:SS.ffffff (zoned ones in UTC), times as HH:MM:SS.ffffff,
// booleans as 1/0; a string of up to 64 characters as LENGTH:TEXT, a longer
// one as "m" and the MD5 of its UTF-8 bytes; binary data as the MD5 of its
// bytes. Knowing the columns' types, the text can be read back unambiguously. The table's sum is the sum over its rows
// of the first 60 bits of the MD5 of that text, an exact decimal on the
// server (MySQL SUM over CAST(CONV(SUBSTR(MD5(..),1,15),16,10) AS UNSIGNED),
// PostgreSQL sum(('x'||substr(md5(..),1,15))::bit(60)::bigint)), so row
// order, storage engine and physical layout do not matter.
//
// Which types compare where:
//   - Within a family (MariaDB/MySQL/Percona across servers and engines, or
//     PostgreSQL across servers): every type.
//   - Across MySQL and PostgreSQL (Table.Portable): integers of any width
//     (and MySQL BOOL/TINYINT(1) with PostgreSQL boolean, as 1/0), decimals
//     with the same declared scale (DECIMAL(10,2) with numeric(10,2)), text
//     of any kind (CHAR, VARCHAR, TEXT, ENUM, SET with char, varchar, text,
//     enums, uuid; compared as UTF-8, CHAR without its trailing blanks),
//     binary data (BLOB/VARBINARY with bytea), DATE with date, DATETIME and
//     TIMESTAMP with timestamp and timestamptz (to the microsecond, zoned
//     values read in UTC), TIME with time.
//   - Never across the families: floating point (FLOAT, DOUBLE, real,
//     double precision print differently), BIT, JSON, geometry, arrays,
//     intervals, and MySQL BINARY(n), whose values are padded with zero
//     bytes. A table holding one of them has Portable false.
package checksum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
)

// Table is the checksum of one table.
type Table struct {
	// Name is the table name (schema-qualified on PostgreSQL outside public).
	Name string `json:"name"`
	// Engine is the storage engine (MySQL ENGINE, PostgreSQL access method).
	Engine string `json:"engine,omitempty"`
	// Rows is the exact row count.
	Rows int64 `json:"rows"`
	// Sum is the content checksum in hexadecimal.
	Sum string `json:"sum"`
	// DataBytes and IndexBytes are the server's sizes (MySQL
	// DATA_LENGTH/INDEX_LENGTH, PostgreSQL pg_table_size/pg_indexes_size).
	DataBytes  int64 `json:"data_bytes"`
	IndexBytes int64 `json:"index_bytes"`
	// Columns is the number of columns.
	Columns int `json:"columns"`
	// Portable is true when every column's type renders the same on MySQL
	// and PostgreSQL, so Sum compares across the families.
	Portable bool `json:"portable"`
	// Kind is "" for a table, KindMatView for a PostgreSQL materialised view.
	Kind string `json:"kind,omitempty"`

	// unpopulated is a materialised view never refreshed (WITH NO DATA):
	// it cannot be read; Rows is 0 and Sum Unpopulated.
	unpopulated bool
}

// KindMatView is Table.Kind of a PostgreSQL materialised view.
const KindMatView = "materialized view"

// Unpopulated is the Sum of a materialised view that was never refreshed.
const Unpopulated = "unpopulated"

// Options narrow and report a checksum run.
type Options struct {
	// Tables, if not empty, limits the run to these tables (an unknown
	// name is an error).
	Tables []string
	// Progress, if set, is called before each table.
	Progress func(done, total int, table string)
}

// NoDatabaseError is a database that does not exist or that the account
// cannot see (MySQL lists only the databases an account has a privilege
// on), or, with Database "", a connection without a current database.
type NoDatabaseError struct {
	// Database is the database asked for ("" when none was selected).
	Database string
}

func (e *NoDatabaseError) Error() string {
	if e.Database == "" {
		return "no database selected"
	}
	return fmt.Sprintf("no database %q (it does not exist, or this account cannot read it)", e.Database)
}

// shortText is the longest string (in characters) rendered as itself.
const shortText = 64

// column is one column as the catalog describes it.
type column struct {
	name, typ string
}

// flavorOps are a family's catalog and SQL.
type flavorOps interface {
	session(ctx context.Context, c *sql.Conn) error
	tables(ctx context.Context, c *sql.Conn, database string) ([]Table, error)
	columns(ctx context.Context, c *sql.Conn, database, table string) ([]column, error)
	rowText(cols []column) string
	sumQuery(database, table string, cols []column) string
	portable(typ string) bool
}

// Tables returns the checksum of every base table of database (on
// PostgreSQL, the connected database, with its partitions and materialised
// views; database may be "" or its name). A database that does not exist,
// or that the account cannot see, is a *NoDatabaseError.
// flavor is a flavor or family name: mariadb, mysql, percona, postgres.
func Tables(ctx context.Context, db *sql.DB, flavor, database string) ([]Table, error) {
	return Run(ctx, db, flavor, database, Options{})
}

// Run is Tables with options.
func Run(ctx context.Context, db *sql.DB, flavor, database string, o Options) ([]Table, error) {
	ops, err := opsFor(flavor)
	if err != nil {
		return nil, err
	}
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("checksum: connect: %w", err)
	}
	defer c.Close()
	if err := ops.session(ctx, c); err != nil {
		return nil, fmt.Errorf("checksum: %w", err)
	}
	all, err := ops.tables(ctx, c, database)
	var nd *NoDatabaseError
	if errors.As(err, &nd) {
		return nil, fmt.Errorf("checksum: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("checksum: list tables: %w", err)
	}
	list, err := pick(all, o.Tables)
	if err != nil {
		return nil, err
	}
	for i := range list {
		t := &list[i]
		if o.Progress != nil {
			o.Progress(i, len(list), t.Name)
		}
		if err := one(ctx, c, ops, database, t); err != nil {
			return nil, fmt.Errorf("checksum: table %s: %w", t.Name, err)
		}
	}
	if o.Progress != nil {
		o.Progress(len(list), len(list), "")
	}
	return list, nil
}

func opsFor(flavor string) (flavorOps, error) {
	switch strings.ToLower(flavor) {
	case "mysql", "mariadb", "percona":
		return mysqlOps{}, nil
	case "postgres", "postgresql":
		return postgresOps{}, nil
	}
	return nil, fmt.Errorf("checksum: unknown flavor %q (want mariadb, mysql, percona or postgres)", flavor)
}

// pick keeps the named tables, in the order of all (sorted by name).
func pick(all []Table, names []string) ([]Table, error) {
	slices.SortFunc(all, func(a, b Table) int { return strings.Compare(a.Name, b.Name) })
	if len(names) == 0 {
		return all, nil
	}
	var out []Table
	for _, n := range names {
		i := slices.IndexFunc(all, func(t Table) bool { return t.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("checksum: no table %q", n)
		}
		out = append(out, all[i])
	}
	slices.SortFunc(out, func(a, b Table) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b Table) bool { return a.Name == b.Name }), nil
}

// one fills t's Rows, Sum, Columns and Portable.
func one(ctx context.Context, c *sql.Conn, ops flavorOps, database string, t *Table) error {
	cols, err := ops.columns(ctx, c, database, t.Name)
	if err != nil {
		return fmt.Errorf("columns: %w", err)
	}
	if len(cols) == 0 {
		return fmt.Errorf("no columns found")
	}
	t.Columns, t.Portable = len(cols), true
	for _, col := range cols {
		if !ops.portable(col.typ) {
			t.Portable = false
		}
	}
	if t.unpopulated {
		t.Sum = Unpopulated
		return nil
	}
	var sum sql.NullString
	if err := c.QueryRowContext(ctx, ops.sumQuery(database, t.Name, cols)).Scan(&t.Rows, &sum); err != nil {
		return err
	}
	t.Sum, err = hexSum(sum.String)
	return err
}

// hexSum renders the server's decimal sum ("" for an empty table) in hex.
func hexSum(dec string) (string, error) {
	if dec == "" {
		return "0", nil
	}
	if i := strings.IndexByte(dec, '.'); i >= 0 { // a DECIMAL rendered with a scale
		dec = dec[:i]
	}
	n, ok := new(big.Int).SetString(dec, 10)
	if !ok {
		return "", fmt.Errorf("unexpected sum %q", dec)
	}
	return n.Text(16), nil
}

// Diff lists the tables whose rows or sums differ between a and b, and the
// tables present on one side only, as one line each; nil if they match.
func Diff(a, b []Table) []string {
	var out []string
	bm := map[string]Table{}
	for _, t := range b {
		bm[t.Name] = t
	}
	for _, t := range a {
		u, ok := bm[t.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: only on the first side", t.Name))
		case t.Rows != u.Rows:
			out = append(out, fmt.Sprintf("%s: %d rows vs %d", t.Name, t.Rows, u.Rows))
		case t.Sum != u.Sum:
			out = append(out, fmt.Sprintf("%s: sum %s vs %s", t.Name, t.Sum, u.Sum))
		}
		delete(bm, t.Name)
	}
	for _, n := range slices.Sorted(maps.Keys(bm)) {
		out = append(out, fmt.Sprintf("%s: only on the second side", n))
	}
	return out
}
