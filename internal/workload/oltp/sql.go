package oltp

import (
	"strconv"

	"github.com/dbarena/dbarena/internal/server/dialect"
)

// Templates of the c and pad columns (oltp_common.lua, c_value_template and
// pad_value_template): 11-digit groups separated by dashes.
const (
	cTemplate = "###########-###########-###########-" +
		"###########-###########-###########-" +
		"###########-###########-###########-" +
		"###########"
	padTemplate = "###########-###########-###########-" +
		"###########-###########"
)

// stmtKind is one of oltp_common.lua's stmt_defs.
type stmtKind int

// The statements of oltp_common.lua, stmt_defs, in their order.
const (
	pointSelects stmtKind = iota
	simpleRanges
	sumRanges
	orderRanges
	distinctRanges
	indexUpdates
	nonIndexUpdates
	deletes
	inserts
	numStmtKinds
)

// stmtDef is the SQL of a statement kind around the table number, and
// whether it returns rows.
type stmtDef struct {
	prefix, suffix string
	read           bool
}

// stmtDefs are oltp_common.lua's stmt_defs; the text is sysbench's to the
// byte so that server-side statement digests match.
var stmtDefs = [numStmtKinds]stmtDef{
	pointSelects:    {"SELECT c FROM sbtest", " WHERE id=?", true},
	simpleRanges:    {"SELECT c FROM sbtest", " WHERE id BETWEEN ? AND ?", true},
	sumRanges:       {"SELECT SUM(k) FROM sbtest", " WHERE id BETWEEN ? AND ?", true},
	orderRanges:     {"SELECT c FROM sbtest", " WHERE id BETWEEN ? AND ? ORDER BY c", true},
	distinctRanges:  {"SELECT DISTINCT c FROM sbtest", " WHERE id BETWEEN ? AND ? ORDER BY c", true},
	indexUpdates:    {"UPDATE sbtest", " SET k=k+1 WHERE id=?", false},
	nonIndexUpdates: {"UPDATE sbtest", " SET c=? WHERE id=?", false},
	deletes:         {"DELETE FROM sbtest", " WHERE id=?", false},
	inserts:         {"INSERT INTO sbtest", " (id, k, c, pad) VALUES (?, ?, ?, ?)", false},
}

// text is the statement for table n with '?' placeholders.
func (d stmtDef) text(n int) string {
	return d.prefix + strconv.Itoa(n) + d.suffix
}

// tableName is sbtestN.
func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// createTableSQL is oltp_common.lua's create_table() DDL for table n, byte
// for byte, for the given protocol family.
func createTableSQL(d dialect.Dialect, c *Config, n int) string {
	idIndexDef := "PRIMARY KEY"
	if c.Secondary {
		idIndexDef = "KEY xid"
	}
	idDef, engineDef := "INTEGER NOT NULL", d.TableOptions(c.MySQLStorageEngine)
	if c.AutoInc {
		idDef = d.AutoIncrement("INTEGER")
	}
	// string.format("CREATE TABLE sbtest%d(\n  id %s,\n ... %s (id)\n) %s %s", ...)
	// with extra_table_options = mysql_table_options or "" (empty by default).
	return "CREATE TABLE sbtest" + strconv.Itoa(n) + "(\n" +
		"  id " + idDef + ",\n" +
		"  k INTEGER DEFAULT '0' NOT NULL,\n" +
		"  c CHAR(120) DEFAULT '' NOT NULL,\n" +
		"  pad CHAR(60) DEFAULT '' NOT NULL,\n" +
		"  " + idIndexDef + " (id)\n" +
		") " + engineDef + " "
}

// createIndexSQL is the secondary index of create_table().
func createIndexSQL(n int) string {
	s := strconv.Itoa(n)
	return "CREATE INDEX k_" + s + " ON sbtest" + s + "(k)"
}

// dropTableSQL is cleanup()'s statement.
func dropTableSQL(n int) string { return "DROP TABLE IF EXISTS sbtest" + strconv.Itoa(n) }

// bulkInsertHead starts create_table()'s multi-row INSERT with verb
// ("INSERT", or "INSERT IGNORE" where rows may be there already); with
// explicit ids the id column is listed.
func bulkInsertHead(dst []byte, verb string, n int, withID bool) []byte {
	dst = append(dst, verb...)
	dst = append(dst, " INTO sbtest"...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	if withID {
		return append(dst, "(id, k, c, pad) VALUES"...)
	}
	return append(dst, "(k, c, pad) VALUES"...)
}

// appendRow appends one VALUES tuple as create_table() formats it:
// "(%d, %d, '%s', '%s')" or "(%d, '%s', '%s')" without the id. c and pad
// hold only digits and dashes, so inlining them is safe.
func appendRow(dst []byte, id int64, withID bool, k int64, c, pad []byte) []byte {
	dst = append(dst, '(')
	if withID {
		dst = strconv.AppendInt(dst, id, 10)
		dst = append(dst, ", "...)
	}
	dst = strconv.AppendInt(dst, k, 10)
	dst = append(dst, ", '"...)
	dst = append(dst, c...)
	dst = append(dst, "', '"...)
	dst = append(dst, pad...)
	return append(dst, "')"...)
}

// bulkPacketSize is sysbench's limit on a multi-row INSERT (db_driver.c,
// BULK_PACKET_SIZE): a row that would push the statement past it starts a
// new statement.
const bulkPacketSize = 512 * 1024
