package dumpload

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// LOAD DATA fast path (MySQL family): a data statement that toLoadData
// converts exactly is sent as LOAD DATA LOCAL INFILE from memory, in the
// session's client character set. Differences from the INSERT it
// replaces: LOCAL makes the server report bad values and duplicate keys
// as warnings instead of errors, so the loader reads the warnings after
// each LOAD DATA and reports the first one the INSERT would have failed
// with as the statement's error (the rows are then loaded as IGNORE would
// have: a dump made by the server's own tool has no such rows).

// loadDataMode resolves Options.LoadData for target t: whether to try
// the fast path, or a bad-input error.
func loadDataMode(o Options, t target.Target) (bool, error) {
	switch o.LoadData {
	case "", "off":
		return false, nil
	case "auto":
		return SyntaxOf(t) == dump.MySQL, nil
	case "on":
		if SyntaxOf(t) != dump.MySQL {
			return false, &dump.BadInputError{Msg: "--load-data on: LOAD DATA is the MySQL family's; the target is " + string(t.Flavor)}
		}
		return true, nil
	}
	return false, &dump.BadInputError{Msg: fmt.Sprintf("--load-data %q: want on, off or auto", o.LoadData)}
}

// checkLocalInfile turns the fast path off, with a note, when the server
// does not allow LOAD DATA LOCAL.
func (l *loader) checkLocalInfile(ctx context.Context) {
	c, err := l.dl.dial(ctx, "")
	if err != nil {
		return // the load itself reports it
	}
	defer c.close()
	var on int
	if err := c.(*myConn).queryRow(ctx, "SELECT @@local_infile").Scan(&on); err != nil || on == 0 {
		l.disableLoadData("the server has local_infile off")
	}
}

// disableLoadData stops the fast path and notes why, once.
func (l *loader) disableLoadData(why string) {
	if l.loadData.CompareAndSwap(true, false) {
		l.mu.Lock()
		l.res.Notes = append(l.res.Notes, "LOAD DATA LOCAL not used ("+why+"): data loaded as INSERT statements")
		l.mu.Unlock()
	}
}

// sessionCharset reads the client character set of s and whether its
// sql_mode keeps string literals as toLoadData reads them; cached until
// s replays more session statements.
func (s *session) sessionCharset(ctx context.Context) (string, bool) {
	if s.ldApplied == s.applied+1 {
		return s.ldCharset, s.ldOK
	}
	mc, ok := s.c.(*myConn)
	if !ok {
		return "", false
	}
	var cs, mode string
	s.ldApplied, s.ldOK = s.applied+1, false
	if err := mc.queryRow(ctx, "SELECT @@character_set_client, @@sql_mode").Scan(&cs, &mode); err != nil {
		return "", false
	}
	mode = strings.ToUpper(mode)
	s.ldCharset = cs
	s.ldStrict = strings.Contains(mode, "STRICT_TRANS_TABLES") || strings.Contains(mode, "STRICT_ALL_TABLES")
	s.ldOK = isWordName(cs) && !strings.Contains(mode, "NO_BACKSLASH_ESCAPES") && !strings.Contains(mode, "ANSI_QUOTES")
	return s.ldCharset, s.ldOK
}

func isWordName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

// tryLoadData runs j's INSERT as LOAD DATA when it can; done reports
// that it did (n rows, or err from the server).
func (l *loader) tryLoadData(ctx context.Context, s *session, j *job) (n int64, done bool, err error) {
	if !l.loadData.Load() || j.st.Kind != dump.Data || j.st.Copy != nil {
		return 0, false, nil
	}
	mc, ok := s.c.(*myConn)
	if !ok {
		return 0, false, nil
	}
	cs, ok := s.sessionCharset(ctx)
	if !ok {
		return 0, false, nil
	}
	ld, ok := toLoadData(j.st.SQL)
	// A one-row INSERT stays one: LOAD DATA LOCAL costs more round trips
	// than it saves (the world dump's 5,302 one-row INSERTs).
	if !ok || ld.Rows < 2 || !mc.loadDataFits(ctx, j.st.Table, ld, l.schemaGen.Load()) {
		return 0, false, nil
	}
	n, err = mc.loadData(ctx, ld, cs, s.ldStrict)
	if err != nil && l.flavor().RefusesBulk(err) {
		l.disableLoadData(oneLine(err.Error()))
		return 0, false, nil
	}
	if err == nil {
		l.loadDataStatements.Add(1)
	}
	return n, true, err
}

// numericTypes are the DATA_TYPEs whose columns read a hex or _binary
// literal as a number in an INSERT, but its bytes as text in LOAD DATA.
var numericTypes = map[string]bool{"tinyint": true, "smallint": true, "mediumint": true, "int": true, "bigint": true,
	"decimal": true, "float": true, "double": true, "year": true}

// loadDataFits checks ld's values against the target columns' types
// where LOAD DATA would store something else than the INSERT: any value
// but NULL into a BIT column, a number into an ENUM or SET column, a hex
// or _binary literal into a numeric column, a number whose text is not
// kept (1e3, 007) into any other column.
func (m *myConn) loadDataFits(ctx context.Context, table string, ld *loadDataInsert, gen int64) bool {
	ct, ok := m.columnTypes(ctx, table, gen)
	if !ok {
		return false
	}
	types, order := ct.types, ct.order
	if ld.Columns != "" {
		order = make([]string, 0, len(order))
		for _, c := range strings.Split(strings.Trim(ld.Columns, "()"), ",") {
			c = strings.TrimSpace(c)
			if strings.HasPrefix(c, "`") {
				c = strings.ReplaceAll(strings.Trim(c, "`"), "``", "`")
			}
			t, ok := types[strings.ToLower(c)]
			if !ok {
				return false
			}
			order = append(order, t)
		}
	}
	if len(order) != len(ld.Kinds) {
		return false
	}
	for i, k := range ld.Kinds {
		switch t := order[i]; {
		case t == "bit" && k != 0:
			return false
		case (t == "enum" || t == "set") && k&kindNumber != 0:
			return false // a number is an index in an INSERT, text in LOAD DATA
		case numericTypes[t] && k&kindBytes != 0:
			return false
		case !numericTypes[t] && k&kindOddNum != 0:
			return false
		}
	}
	return true
}

// loadData sends ld's rows as LOAD DATA LOCAL INFILE in character set cs.
// The warnings the INSERT would have failed with become its error: a
// duplicate key (unless IGNORE or REPLACE) and, in a strict sql_mode, any
// warning.
func (m *myConn) loadData(ctx context.Context, ld *loadDataInsert, cs string, strict bool) (int64, error) {
	n, err := dialect.MySQLDialect{}.LoadText(ctx, m.c, dialect.BulkTable{Table: ld.Table,
		Columns: strings.TrimSuffix(strings.TrimPrefix(ld.Columns, "("), ")"), Modifier: ld.Modifier, Charset: cs},
		bytes.NewReader(ld.Data))
	if err != nil {
		return n, err
	}
	if ld.Modifier != "IGNORE" {
		if err := m.loadWarning(ctx, ld.Modifier == "", strict); err != nil {
			return n, err
		}
	}
	return n, nil
}

// loadWarning returns the first warning of the last statement that an
// INSERT would have failed with, as a server error.
func (m *myConn) loadWarning(ctx context.Context, dupKey, strict bool) error {
	rows, err := m.c.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var level, msg string
		var code uint16
		if err := rows.Scan(&level, &code, &msg); err != nil {
			return err
		}
		if (dupKey && code == 1062) || (strict && !strings.EqualFold(level, "Note")) {
			return &mysql.MySQLError{Number: code, Message: "LOAD DATA LOCAL: " + level + ": " + msg}
		}
	}
	return rows.Err()
}

// colTypes are a table's columns' DATA_TYPEs, lower case: by name, and in
// order; gen is the loader's schema generation they were read at.
type colTypes struct {
	types map[string]string
	order []string
	gen   int64
}

// columnTypes reads table's column types from information_schema,
// cached per connection and database until the loader's schema
// generation (gen) moves on.
func (m *myConn) columnTypes(ctx context.Context, table string, gen int64) (colTypes, bool) {
	key := m.db + "\x00" + table
	if ct, ok := m.colCache[key]; ok && ct.gen == gen {
		return ct, true
	}
	schema, name, qualified := strings.Cut(table, ".")
	if !qualified {
		schema, name = "", table
	}
	rows, err := m.c.QueryContext(ctx, "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "+
		"WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", schema, name)
	if err != nil {
		return colTypes{}, false
	}
	defer rows.Close()
	ct := colTypes{types: map[string]string{}, gen: gen}
	for rows.Next() {
		var c, t string
		if rows.Scan(&c, &t) != nil {
			return colTypes{}, false
		}
		ct.types[strings.ToLower(c)] = strings.ToLower(t)
		ct.order = append(ct.order, strings.ToLower(t))
	}
	if rows.Err() != nil || len(ct.order) == 0 {
		return colTypes{}, false
	}
	if m.colCache == nil {
		m.colCache = map[string]colTypes{}
	}
	m.colCache[key] = ct
	return ct, true
}
