package dump

import (
	"strings"
)

// Kind says what a statement is for and when a loader runs it.
type Kind int

// The kinds.
const (
	// Schema runs in dump order on one connection before any later data:
	// CREATE TABLE, DROP TABLE, sequences, COMMENT, setval...
	Schema Kind = iota
	// Session changes a session setting (SET ..., set_config): every
	// loader connection replays them, in dump order, before the
	// statements that follow them.
	Session
	// Database creates a database (Name).
	Database
	// Use switches to database Name (USE, psql \connect).
	Use
	// Data loads rows into Table (INSERT, REPLACE, a COPY chunk); data
	// statements may run in parallel with each other.
	Data
	// PostData runs after all data, in dump order: triggers, views,
	// routines, events, ENABLE KEYS, and pg_dump's indexes and
	// constraints.
	PostData
	// Skip is not run: LOCK/UNLOCK TABLES (the loader is parallel),
	// ownership and privilege statements (the loading account owns what
	// it creates, as pg_restore --no-owner --no-privileges), psql's
	// \restrict.
	Skip
)

var kindNames = [...]string{"schema", "session", "database", "use", "data", "post-data", "skip"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Statement is one classified statement of a dump.
type Statement struct {
	Kind Kind
	// SQL is the statement text without its delimiter (for a COPY chunk,
	// the COPY command).
	SQL string
	// Copy is COPY data (see Raw.Copy).
	Copy []byte
	// Table is the table a Data or CREATE TABLE statement is about,
	// unquoted ("schema.table" where the dump qualifies it).
	Table string
	// Name is the database of Database and Use statements.
	Name string
	// Meta is a psql meta-command other than \connect and \restrict
	// (SQL without the backslash): a loader cannot run it.
	Meta bool
	// Creates is set for CREATE TABLE (Table is the table).
	Creates bool
	// IndexBuild marks post-data that builds an index of one table
	// (ENABLE KEYS, CREATE INDEX, ADD PRIMARY KEY / UNIQUE): such
	// statements of different tables may run in parallel, before the
	// rest of the post-data.
	IndexBuild bool
	// File and Line locate the statement's first line.
	File string
	Line int
}

// Where is "file:line".
func (s *Statement) Where() string {
	return s.File + ":" + itoa(s.Line)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Classify turns a raw statement into a classified one.
func Classify(r Raw, syntax Syntax, file string) Statement {
	st := Statement{SQL: r.SQL, Copy: r.Copy, File: file, Line: r.Line}
	if r.Meta {
		classifyMeta(&st)
		return st
	}
	if r.Copy != nil {
		st.Kind = Data
		st.Table = copyTable(r.SQL)
		return st
	}
	if syntax == Postgres {
		classifyPostgres(&st)
	} else {
		classifyMySQL(&st)
	}
	return st
}

func classifyMeta(st *Statement) {
	f := strings.Fields(st.SQL)
	st.Kind = Skip
	if len(f) == 0 {
		return
	}
	switch f[0] {
	case "connect", "c":
		if len(f) > 1 {
			st.Kind, st.Name = Use, unquoteIdent(f[1])
		}
	case "restrict", "unrestrict":
	default:
		st.Kind, st.Meta = Schema, true // the loader rejects other meta-commands
	}
}

func classifyMySQL(st *Statement) {
	w := words(st.SQL, 12)
	if len(w) == 0 {
		st.Kind = Skip // only version-comment markers or nothing
		return
	}
	switch w[0] {
	case "SET":
		st.Kind = Session
	case "USE":
		st.Kind, st.Name = Use, unquoteIdent(firstIdentAfter(st.SQL, "USE"))
	case "INSERT", "REPLACE":
		st.Kind, st.Table = Data, unquoteName(identAfterKeywords(st.SQL, w[0], "INTO", "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE"))
	case "LOCK", "UNLOCK":
		st.Kind = Skip
	case "ALTER", "TRUNCATE":
		st.Kind = Schema
		if len(w) >= 2 && w[1] == "TABLE" {
			st.Table = unquoteName(identAfterKeywords(st.SQL, "TABLE", "IGNORE", "ONLINE"))
		}
		if len(w) >= 4 && w[1] == "TABLE" && w[len(w)-2] == "ENABLE" && w[len(w)-1] == "KEYS" {
			st.Kind, st.IndexBuild = PostData, true
		}
	case "CREATE", "DROP":
		obj := objectWord(w[1:])
		switch obj {
		case "DATABASE", "SCHEMA":
			if w[0] == "CREATE" {
				st.Kind, st.Name = Database, unquoteIdent(identAfterKeywords(st.SQL, obj, "IF", "NOT", "EXISTS"))
			} else {
				st.Kind = Schema
			}
		case "TRIGGER", "VIEW", "PROCEDURE", "FUNCTION", "EVENT":
			st.Kind = PostData
		default:
			st.Kind = Schema
			if obj == "TABLE" {
				st.Table = unquoteName(identAfterKeywords(st.SQL, "TABLE", "IF", "NOT", "EXISTS", "TEMPORARY"))
				st.Creates = w[0] == "CREATE"
			}
		}
	default:
		st.Kind = Schema
	}
}

// objectWord finds what CREATE/DROP makes: the first word that names an
// object kind, past modifiers (OR REPLACE, ALGORITHM=..., DEFINER=...,
// SQL SECURITY ..., TEMPORARY, UNIQUE...).
func objectWord(w []string) string {
	for _, x := range w {
		switch x {
		case "TABLE", "DATABASE", "SCHEMA", "TRIGGER", "VIEW", "PROCEDURE", "FUNCTION", "EVENT",
			"INDEX", "SEQUENCE", "TYPE", "EXTENSION", "RULE", "POLICY", "AGGREGATE", "DOMAIN":
			return x
		}
	}
	return ""
}

func classifyPostgres(st *Statement) {
	w := words(st.SQL, 8)
	if len(w) == 0 {
		st.Kind = Skip
		return
	}
	switch w[0] {
	case "SET", "RESET":
		st.Kind = Session
	case "SELECT":
		st.Kind = Schema
		if strings.Contains(st.SQL, "set_config(") {
			st.Kind = Session
		}
	case "INSERT":
		st.Kind, st.Table = Data, unquoteName(identAfterKeywords(st.SQL, "INSERT", "INTO"))
	case "GRANT", "REVOKE":
		st.Kind = Skip
	case "ALTER":
		st.Kind = Schema
		up := strings.ToUpper(st.SQL)
		switch {
		case strings.Contains(up, " OWNER TO "):
			st.Kind = Skip
			return
		}
		if len(w) > 1 && w[1] == "TABLE" {
			st.Table = unquoteName(identAfterKeywords(st.SQL, "TABLE", "ONLY", "IF", "EXISTS"))
		}
		switch {
		case len(w) > 1 && w[1] == "TABLE" && strings.Contains(up, " ADD CONSTRAINT "):
			st.Kind = PostData
			st.IndexBuild = strings.Contains(up, " PRIMARY KEY ") || strings.Contains(up, " UNIQUE ")
		case len(w) > 1 && w[1] == "TABLE" && (strings.Contains(up, " CLUSTER ON ") || strings.Contains(up, " REPLICA IDENTITY ")):
			st.Kind = PostData
		}
	case "CREATE":
		obj := objectWord(w[1:])
		switch obj {
		case "DATABASE":
			st.Kind, st.Name = Database, unquoteIdent(identAfterKeywords(st.SQL, "DATABASE"))
		case "INDEX", "TRIGGER", "RULE", "POLICY":
			st.Kind = PostData
			st.IndexBuild = obj == "INDEX" && !strings.Contains(strings.ToUpper(st.SQL), " ONLY ")
		default:
			st.Kind = Schema
			if obj == "TABLE" {
				st.Table = unquoteName(identAfterKeywords(st.SQL, "TABLE", "IF", "NOT", "EXISTS", "UNLOGGED", "TEMPORARY", "TEMP"))
				st.Creates = true
			}
		}
	case "TRUNCATE":
		st.Kind = Schema
		st.Table = unquoteName(identAfterKeywords(st.SQL, "TRUNCATE", "TABLE", "ONLY"))
	default:
		st.Kind = Schema
	}
}

func containsWord(w []string, x string) bool {
	for _, y := range w {
		if y == x {
			return true
		}
	}
	return false
}

// copyTable is the table of "COPY table (cols) FROM stdin".
func copyTable(sql string) string {
	return unquoteName(identAfterKeywords(sql, "COPY"))
}

// words returns up to n leading words of sql, upper-cased, skipping
// comments and MySQL version-comment markers; a word ends at anything
// but a letter, digit or underscore (so "ENGINE=InnoDB" is two words and
// the '=' is dropped). Quoted strings and names are skipped.
func words(sql string, n int) []string {
	var out []string
	i := 0
	for i < len(sql) && len(out) < n {
		c := sql[i]
		switch {
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := i + 2
			if j < len(sql) && (sql[j] == '!' || (sql[j] == 'M' && j+1 < len(sql) && sql[j+1] == '!')) {
				// version comment: skip the marker and its digits
				for j < len(sql) && (sql[j] == '!' || sql[j] == 'M') {
					j++
				}
				for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
					j++
				}
				i = j
				continue
			}
			k := strings.Index(sql[j:], "*/")
			if k < 0 {
				return out
			}
			i = j + k + 2
		case c == '*' && i+1 < len(sql) && sql[i+1] == '/':
			i += 2
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-', c == '#':
			k := strings.IndexByte(sql[i:], '\n')
			if k < 0 {
				return out
			}
			i += k + 1
		case c == '\'' || c == '"' || c == '`':
			// skip a quoted string or name
			j := i + 1
			for j < len(sql) && sql[j] != c {
				if sql[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j + 1
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			out = append(out, strings.ToUpper(sql[i:j]))
			i = j
		default:
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// identAfterKeywords returns the (possibly qualified, still quoted) name
// after keyword kw and any of the optional words that follow it.
func identAfterKeywords(sql, kw string, optional ...string) string {
	t := newTokenizer(sql)
	found := false
	for {
		tok, ok := t.next()
		if !ok {
			return ""
		}
		if tok.kind != tWord && tok.kind != tQuoted {
			continue
		}
		if !found {
			if tok.kind == tWord && strings.EqualFold(tok.text, kw) {
				found = true
			}
			continue
		}
		if tok.kind == tWord && isOneOf(tok.text, optional) {
			continue
		}
		name := tok.text
		// qualified name: a.b
		for {
			save := t.pos
			dot, ok := t.next()
			if !ok || dot.kind != tPunct || dot.text != "." {
				t.pos = save
				break
			}
			part, ok := t.next()
			if !ok || (part.kind != tWord && part.kind != tQuoted) {
				t.pos = save
				break
			}
			name += "." + part.text
		}
		return name
	}
}

func firstIdentAfter(sql, kw string) string { return identAfterKeywords(sql, kw) }

func isOneOf(w string, xs []string) bool {
	for _, x := range xs {
		if strings.EqualFold(w, x) {
			return true
		}
	}
	return false
}

// unquoteName unquotes each part of a possibly qualified name.
func unquoteName(s string) string {
	if s == "" {
		return ""
	}
	var parts []string
	t := newTokenizer(s)
	for {
		tok, ok := t.next()
		if !ok {
			break
		}
		if tok.kind == tWord || tok.kind == tQuoted {
			parts = append(parts, unquoteIdent(tok.text))
		}
	}
	return strings.Join(parts, ".")
}

// unquoteIdent removes `...` or "..." quoting (doubled quotes inside).
func unquoteIdent(s string) string {
	s = strings.TrimRight(s, ";")
	if len(s) >= 2 && (s[0] == '`' || s[0] == '"') && s[len(s)-1] == s[0] {
		q := s[:1]
		return strings.ReplaceAll(s[1:len(s)-1], q+q, q)
	}
	return s
}
