package checksum

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// postgresOps is PostgreSQL.
type postgresOps struct{}

func (postgresOps) session(ctx context.Context, c *sql.Conn) error {
	_, err := c.ExecContext(ctx, "SET TIME ZONE 'UTC'")
	return err
}

// tables lists the ordinary tables of every non-system schema of the
// connected database; database must be "" or that database's name.
func (postgresOps) tables(ctx context.Context, c *sql.Conn, database string) ([]Table, error) {
	if database != "" {
		var cur string
		if err := c.QueryRowContext(ctx, "SELECT current_database()").Scan(&cur); err != nil {
			return nil, err
		}
		if cur != database {
			return nil, fmt.Errorf("connected to database %q, not %q (on PostgreSQL, connect to the database to check)", cur, database)
		}
	}
	// Ordinary tables, partitions included (a partitioned table's rows are
	// its partitions'), and materialised views, whose rows a load makes by
	// REFRESH; plain views and foreign tables hold no rows of their own.
	rows, err := c.QueryContext(ctx, `SELECT CASE WHEN n.nspname = 'public' THEN c.relname ELSE n.nspname || '.' || c.relname END,
			COALESCE(am.amname, ''), pg_table_size(c.oid), pg_indexes_size(c.oid), c.relkind = 'm', c.relispopulated
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_am am ON am.oid = c.relam
		WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
			AND n.nspname NOT LIKE 'pg_temp%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Table
	for rows.Next() {
		var t Table
		var mv, populated bool
		if err := rows.Scan(&t.Name, &t.Engine, &t.DataBytes, &t.IndexBytes, &mv, &populated); err != nil {
			return nil, err
		}
		if mv {
			t.Kind = KindMatView
			t.unpopulated = !populated
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// split returns a table name's schema and relation ("public" if bare).
func split(name string) (string, string) {
	if s, r, ok := strings.Cut(name, "."); ok {
		return s, r
	}
	return "public", name
}

func (postgresOps) columns(ctx context.Context, c *sql.Conn, _, table string) ([]column, error) {
	schema, rel := split(table)
	rows, err := c.QueryContext(ctx, `SELECT a.attname, format_type(a.atttypid, NULL), t.typtype
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_type t ON t.oid = a.atttypid
		WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, schema, rel)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var col column
		var kind string
		if err := rows.Scan(&col.name, &col.typ, &kind); err != nil {
			return nil, err
		}
		if kind == "e" {
			col.typ = "enum"
		}
		out = append(out, col)
	}
	return out, rows.Err()
}

func pgQuote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// pgRender is a column's canonical text, matching mysqlRender where the
// types compare (see the package comment).
func pgRender(col column) string {
	c := pgQuote(col.name)
	switch col.typ {
	case "smallint", "integer", "bigint", "numeric", "real", "double precision", "oid":
		return c + "::text"
	case "boolean":
		return "CASE WHEN " + c + " THEN '1' WHEN NOT " + c + " THEN '0' END"
	case "bit", "bit varying":
		return c + "::text"
	case "date":
		return "to_char(" + c + ",'YYYY-MM-DD')"
	case "timestamp without time zone":
		return "to_char(" + c + ",'YYYY-MM-DD HH24:MI:SS.US')"
	case "timestamp with time zone":
		return "to_char(" + c + " AT TIME ZONE 'UTC','YYYY-MM-DD HH24:MI:SS.US')"
	case "time without time zone":
		return "to_char(" + c + "::interval,'HH24:MI:SS.US')"
	case "bytea":
		return "md5(" + c + ")"
	}
	// text, varchar, char (without trailing blanks), enums, uuid, others
	u := c + "::text"
	return fmt.Sprintf("CASE WHEN length(%s) <= %d THEN length(%s)||':'||%s ELSE 'm'||md5(%s) END", u, shortText, u, u, u)
}

func (postgresOps) portable(typ string) bool {
	switch typ {
	case "smallint", "integer", "bigint", "numeric", "boolean", "date",
		"timestamp without time zone", "timestamp with time zone", "time without time zone",
		"bytea", "text", "character varying", "character", "enum", "uuid", "citext":
		return true
	}
	return false
}

// rowText is the SQL of a row's canonical text: the columns' texts joined
// with ',' by concat_ws, nested in groups (a function takes at most 100
// arguments; one call is much faster than a chain of ||).
func (postgresOps) rowText(cols []column) string {
	var groups []string
	for i := 0; i < len(cols); i += pgGroup {
		var b strings.Builder
		b.WriteString("concat_ws(','")
		for _, col := range cols[i:min(i+pgGroup, len(cols))] {
			b.WriteString(",coalesce(")
			b.WriteString(pgRender(col))
			b.WriteString(",'N')")
		}
		b.WriteString(")")
		groups = append(groups, b.String())
	}
	if len(groups) == 1 {
		return groups[0]
	}
	// PostgreSQL tables have at most 1600 columns: at most 18 groups.
	return "concat_ws(','," + strings.Join(groups, ",") + ")"
}

// pgGroup is the number of arguments of one concat_ws call besides the separator.
const pgGroup = 90

func (o postgresOps) sumQuery(_, table string, cols []column) string {
	schema, rel := split(table)
	return "SELECT count(*), sum(('x'||substr(md5(" + o.rowText(cols) + "),1,15))::bit(60)::bigint)::text FROM " +
		pgQuote(schema) + "." + pgQuote(rel)
}
