package checksum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// mysqlOps is the MySQL family (MariaDB, MySQL, Percona).
type mysqlOps struct{}

// session reads TIMESTAMP values in UTC, so zoned times compare.
func (mysqlOps) session(ctx context.Context, c *sql.Conn) error {
	_, err := c.ExecContext(ctx, "SET time_zone = '+00:00'")
	return err
}

// tables lists the base tables (and system-versioned tables) of database,
// or of the current one; views and sequences hold no rows of their own.
// A database that does not exist, or that the account cannot see, is a
// *NoDatabaseError, not an empty list.
func (mysqlOps) tables(ctx context.Context, c *sql.Conn, database string) ([]Table, error) {
	var schema string
	err := c.QueryRowContext(ctx, `SELECT SCHEMA_NAME FROM information_schema.SCHEMATA
		WHERE SCHEMA_NAME = COALESCE(NULLIF(?, ''), DATABASE())`, database).Scan(&schema)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NoDatabaseError{Database: database}
	}
	if err != nil {
		return nil, err
	}
	rows, err := c.QueryContext(ctx, `SELECT TABLE_NAME, COALESCE(ENGINE,''), COALESCE(DATA_LENGTH,0), COALESCE(INDEX_LENGTH,0)
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')`, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Table
	for rows.Next() {
		var t Table
		if err := rows.Scan(&t.Name, &t.Engine, &t.DataBytes, &t.IndexBytes); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (mysqlOps) columns(ctx context.Context, c *sql.Conn, database, table string) ([]column, error) {
	rows, err := c.QueryContext(ctx, `SELECT COLUMN_NAME, LOWER(DATA_TYPE) FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, database, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var col column
		if err := rows.Scan(&col.name, &col.typ); err != nil {
			return nil, err
		}
		out = append(out, col)
	}
	return out, rows.Err()
}

func mysqlQuote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// mysqlRender is a column's canonical text (see the package comment).
func mysqlRender(col column) string {
	c := mysqlQuote(col.name)
	switch col.typ {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "decimal", "numeric",
		"float", "double", "real":
		return "CAST(" + c + " AS CHAR)"
	case "bit":
		return "CAST(" + c + "+0 AS CHAR)"
	case "date":
		return "DATE_FORMAT(" + c + ",'%Y-%m-%d')"
	case "datetime", "timestamp":
		return "DATE_FORMAT(" + c + ",'%Y-%m-%d %H:%i:%s.%f')"
	case "time":
		return "TIME_FORMAT(" + c + ",'%H:%i:%s.%f')"
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		u := "CONVERT(" + c + " USING utf8mb4)"
		return fmt.Sprintf("CASE WHEN CHAR_LENGTH(%s) <= %d THEN CONCAT(CHAR_LENGTH(%s), ':', %s) ELSE CONCAT('m', MD5(%s)) END", u, shortText, u, u, u)
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return "MD5(" + c + ")"
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
		"geometrycollection", "geomcollection":
		// The stored bytes (SRID and WKB): as text they are not valid
		// UTF-8, and a conversion could make different values equal.
		return "MD5(" + c + ")"
	}
	return "MD5(CAST(" + c + " AS CHAR))"
}

func (mysqlOps) portable(typ string) bool {
	switch typ {
	case "float", "double", "real", "bit", "json", "binary":
		return false
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "decimal", "numeric",
		"date", "datetime", "timestamp", "time",
		"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set",
		"varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return true
	}
	return false
}

// rowText is the SQL of a row's canonical text.
func (mysqlOps) rowText(cols []column) string {
	var b strings.Builder
	b.WriteString("CONCAT_WS(','")
	for _, col := range cols {
		b.WriteString(", IFNULL(")
		b.WriteString(mysqlRender(col))
		b.WriteString(", 'N')")
	}
	b.WriteString(")")
	return b.String()
}

func (o mysqlOps) sumQuery(database, table string, cols []column) string {
	from := mysqlQuote(table)
	if database != "" {
		from = mysqlQuote(database) + "." + from
	}
	return "SELECT COUNT(*), SUM(CAST(CONV(SUBSTR(MD5(" + o.rowText(cols) + "),1,15),16,10) AS UNSIGNED)) FROM " + from
}
