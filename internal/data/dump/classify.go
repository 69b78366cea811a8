package dump

import (
	"strconv"
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
	// Txn begins or ends a transaction (TxnOp): BEGIN, START
	// TRANSACTION, COMMIT, ROLLBACK (PostgreSQL also END, ABORT). A
	// loader keeps the dump's transactions on the connections that run
	// their statements.
	Txn
	// DropDatabase drops database Name (DROP DATABASE or, MySQL family,
	// DROP SCHEMA): a loader never runs it (it drops nothing the user
	// did not name).
	DropDatabase
)

var kindNames = [...]string{"schema", "session", "database", "use", "data", "post-data", "skip", "transaction", "drop-database"}

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
	// DatabaseOptions are the options of a Database statement that a
	// loader may pass on, upper-case keys CHARSET and COLLATE (MySQL
	// family), ENCODING, LOCALE, LC_COLLATE and LC_CTYPE (PostgreSQL),
	// values unquoted and not validated.
	DatabaseOptions map[string]string
	// Meta is a psql meta-command other than \connect and \restrict
	// (SQL without the backslash): a loader cannot run it.
	Meta bool
	// Account marks an account or privilege statement (GRANT, REVOKE,
	// CREATE/ALTER/DROP USER or ROLE, SET PASSWORD, SET ROLE...): Kind
	// is Skip, and a loader counts it.
	Account bool
	// Admin marks a server administration statement (FLUSH, RESET, PURGE
	// BINARY LOGS, CHANGE MASTER, START/STOP SLAVE or REPLICA, KILL,
	// SHUTDOWN, INSTALL/UNINSTALL PLUGIN): Kind is Skip, and a loader
	// counts it. The employees sample's `FLUSH BINARY LOGS` is one.
	Admin bool
	// Creates is set for CREATE TABLE (Table is the table; TableRef the
	// name as written, quotes and qualifier kept; empty for a TEMPORARY
	// table).
	Creates  bool
	TableRef string
	// IndexBuild marks post-data that builds an index of one table
	// (ENABLE KEYS, CREATE INDEX, ADD PRIMARY KEY / UNIQUE): such
	// statements of different tables may run in parallel, before the
	// rest of the post-data.
	IndexBuild bool
	// Trigger marks a MySQL-family CREATE TRIGGER (Kind Schema, Table
	// the table it is on).
	Trigger bool
	// TxnOp is "begin", "commit" or "rollback" for a Txn statement.
	TxnOp string
	// ForeignKey marks a CREATE TABLE or ALTER TABLE that declares a
	// foreign key (REFERENCES).
	ForeignKey bool
	// Include is the file a client command reads (mysql `source FILE`
	// or `\. FILE`, psql `\i FILE` or `\ir FILE`), as written; Kind is
	// Skip. Reader follows it or refuses it (Dump.FollowIncludes).
	Include string
	// File and Line locate the statement's first line.
	File string
	Line int
}

// Where is "file:line".
func (s *Statement) Where() string {
	return s.File + ":" + itoa(s.Line)
}

func strconvQuote(s string) string { return strconv.Quote(s) }

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

// Classify turns a raw statement into a classified one, reading version
// comments as srv would (see Server). A MySQL statement whose account or
// CREATE DATABASE reading depends on how its version comments are read
// is refused with a BadInputError naming file:line: dbarena never guesses
// about what may change accounts or need the administrator.
func Classify(r Raw, syntax Syntax, file string, srv Server) (Statement, error) {
	st := Statement{SQL: r.SQL, Copy: r.Copy, File: file, Line: r.Line}
	if r.Meta {
		classifyMeta(&st)
		return st, nil
	}
	if r.Copy != nil {
		st.Kind = Data
		st.Table = copyTable(r.SQL)
		return st, nil
	}
	text, versioned := effectiveText(r.SQL, syntax, srv, readAsServer)
	classifyText(&st, text, syntax)
	if !versioned {
		return st, nil
	}
	// The same statement with every version comment read as code, and
	// with none: where either reading is an account statement or a
	// CREATE DATABASE, all readings must agree.
	for _, mode := range []reading{readAllCode, readNoCode} {
		alt := Statement{SQL: r.SQL}
		t, _ := effectiveText(r.SQL, syntax, srv, mode)
		if len(words(t, 1)) == 0 {
			continue // wholly inside version comments: nothing to compare
		}
		classifyText(&alt, t, syntax)
		if (sensitive(&st) || sensitive(&alt)) && !sameReading(&st, &alt) {
			return st, &BadInputError{Msg: st.Where() + ": statement reads as " + describe(&st) + " or as " + describe(&alt) +
				" depending on its version comments (/*!...*/, /*M!...*/): refused; remove the version comments or the statement"}
		}
	}
	return st, nil
}

// classifyText classifies st from its effective text.
func classifyText(st *Statement, text string, syntax Syntax) {
	if syntax == Postgres {
		classifyPostgres(st, text)
	} else {
		classifyMySQL(st, text)
	}
}

// sensitive: statements whose reading decides what the administrator
// does or whether an account changes.
func sensitive(st *Statement) bool {
	return st.Kind == Database || st.Kind == DropDatabase || st.Account
}

func sameReading(a, b *Statement) bool {
	return a.Kind == b.Kind && a.Account == b.Account && a.Name == b.Name && a.Table == b.Table
}

func describe(st *Statement) string {
	switch {
	case st.Account:
		return "an account statement"
	case st.Kind == Database:
		return "CREATE DATABASE " + strconvQuote(st.Name)
	case st.Kind == DropDatabase:
		return "DROP DATABASE " + strconvQuote(st.Name)
	}
	return "a " + st.Kind.String() + " statement"
}

func classifyMeta(st *Statement) {
	f := strings.Fields(st.SQL)
	st.Kind = Skip
	if len(f) == 0 {
		return
	}
	switch f[0] {
	case "i", "include", "ir", "include_relative", "source", ".":
		st.Include = strings.TrimSpace(strings.TrimPrefix(st.SQL, f[0]))
		if st.Include == "" {
			st.Kind, st.Meta = Schema, true
		}
		return
	case "connect", "c":
		if len(f) > 1 {
			st.Kind, st.Name = Use, unquoteIdent(f[1])
		}
	case "restrict", "unrestrict":
	default:
		st.Kind, st.Meta = Schema, true // the loader rejects other meta-commands
	}
}

func classifyMySQL(st *Statement, text string) {
	w := words(text, 12)
	if len(w) == 0 {
		st.Kind = Skip // only version-comment markers or nothing
		return
	}
	if isAccountMySQL(w, text) {
		st.Kind, st.Account = Skip, true
		return
	}
	if isAdminMySQL(w) {
		st.Kind, st.Admin = Skip, true
		return
	}
	switch w[0] {
	case "SET":
		st.Kind = Session
		if len(w) > 1 && w[1] == "STATEMENT" {
			st.Kind = Schema // SET STATEMENT ... FOR stmt: one statement, not a setting
		}
	case "USE":
		st.Kind, st.Name = Use, unquoteIdent(firstIdentAfter(text, "USE"))
	case "INSERT", "REPLACE":
		st.Kind, st.Table = Data, unquoteName(identAfterKeywords(text, w[0], "INTO", "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE"))
	case "LOCK", "UNLOCK":
		st.Kind = Skip
	case "BEGIN", "START", "COMMIT", "ROLLBACK":
		classifyTxn(st, w)
	case "ALTER", "TRUNCATE":
		st.Kind = Schema
		if len(w) >= 2 && w[1] == "TABLE" {
			st.Table = unquoteName(identAfterKeywords(text, "TABLE", "IGNORE", "ONLINE"))
			st.ForeignKey = hasReferences(text)
		}
		if len(w) >= 4 && w[1] == "TABLE" && w[len(w)-2] == "ENABLE" && w[len(w)-1] == "KEYS" {
			st.Kind, st.IndexBuild = PostData, true
		}
	case "CREATE", "DROP":
		obj := objectWord(w[1:])
		switch obj {
		case "DATABASE", "SCHEMA":
			if w[0] == "CREATE" {
				st.Kind, st.Name = Database, unquoteIdent(identAfterKeywords(text, obj, "IF", "NOT", "EXISTS"))
				st.DatabaseOptions = databaseOptions(text)
			} else {
				st.Kind, st.Name = DropDatabase, unquoteIdent(identAfterKeywords(text, obj, "IF", "EXISTS"))
			}
		case "TRIGGER":
			// In dump order, as the client runs it: a trigger created
			// before a table's data fills other tables from it (Sakila's
			// ins_film fills film_text); mysqldump writes triggers after
			// their table's data, which then does not fire them.
			st.Kind = Schema
			if w[0] == "CREATE" {
				st.Table, st.Trigger = unquoteName(identAfterKeywords(text, "ON")), true
			}
		case "VIEW", "PROCEDURE", "FUNCTION", "EVENT":
			st.Kind = PostData
		default:
			st.Kind = Schema
			if obj == "TABLE" {
				ref := identAfterKeywords(text, "TABLE", "IF", "NOT", "EXISTS", "TEMPORARY")
				st.Table = unquoteName(ref)
				st.Creates = w[0] == "CREATE"
				if st.Creates && !containsWord(w, "TEMPORARY") {
					st.TableRef = ref
				}
				st.ForeignKey = st.Creates && hasReferences(text)
			}
		}
	default:
		st.Kind = Schema
	}
}

// classifyTxn classifies BEGIN, START TRANSACTION, COMMIT, ROLLBACK
// (END and ABORT in PostgreSQL); other forms (ROLLBACK TO SAVEPOINT,
// MariaDB's BEGIN NOT ATOMIC, START SLAVE...) are Schema statements.
func classifyTxn(st *Statement, w []string) {
	st.Kind = Schema
	next := ""
	if len(w) > 1 {
		next = w[1]
	}
	switch w[0] {
	case "BEGIN":
		if next == "" || next == "WORK" || next == "TRANSACTION" || next == "ISOLATION" || next == "READ" {
			st.Kind, st.TxnOp = Txn, "begin"
		}
	case "START":
		if next == "TRANSACTION" {
			st.Kind, st.TxnOp = Txn, "begin"
		}
	case "COMMIT", "END":
		if next == "" || next == "WORK" || next == "TRANSACTION" || next == "AND" {
			st.Kind, st.TxnOp = Txn, "commit"
		}
	case "ROLLBACK", "ABORT":
		if !containsWord(w, "TO") && !containsWord(w, "PREPARED") {
			st.Kind, st.TxnOp = Txn, "rollback"
		}
	}
}

// hasReferences reports a REFERENCES word outside strings and comments.
func hasReferences(text string) bool {
	return containsWord(words(text, 1<<20), "REFERENCES")
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

func classifyPostgres(st *Statement, text string) {
	w := words(text, 8)
	if len(w) == 0 {
		st.Kind = Skip
		return
	}
	if isAccountPostgres(w) {
		st.Kind, st.Account = Skip, true
		return
	}
	switch w[0] {
	case "SET", "RESET":
		st.Kind = Session
	case "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT":
		classifyTxn(st, w)
	case "DROP":
		st.Kind = Schema
		if len(w) > 1 && w[1] == "DATABASE" {
			st.Kind, st.Name = DropDatabase, unquoteIdent(identAfterKeywords(text, "DATABASE", "IF", "EXISTS"))
		}
	case "SELECT":
		st.Kind = Schema
		if strings.Contains(text, "set_config(") {
			st.Kind = Session
		}
	case "INSERT":
		st.Kind, st.Table = Data, unquoteName(identAfterKeywords(text, "INSERT", "INTO"))
	case "ALTER":
		st.Kind = Schema
		up := strings.ToUpper(text)
		switch {
		case strings.Contains(up, " OWNER TO "):
			st.Kind = Skip
			return
		}
		if len(w) > 1 && w[1] == "TABLE" {
			st.Table = unquoteName(identAfterKeywords(text, "TABLE", "ONLY", "IF", "EXISTS"))
			st.ForeignKey = hasReferences(text)
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
			st.Kind, st.Name = Database, unquoteIdent(identAfterKeywords(text, "DATABASE"))
			st.DatabaseOptions = databaseOptions(text)
		case "INDEX", "TRIGGER", "RULE", "POLICY":
			st.Kind = PostData
			st.IndexBuild = obj == "INDEX" && !strings.Contains(strings.ToUpper(text), " ONLY ")
		default:
			st.Kind = Schema
			if obj == "TABLE" {
				ref := identAfterKeywords(text, "TABLE", "IF", "NOT", "EXISTS", "UNLOGGED", "TEMPORARY", "TEMP")
				st.Table = unquoteName(ref)
				st.Creates = true
				if !containsWord(w, "TEMPORARY") && !containsWord(w, "TEMP") {
					st.TableRef = ref
				}
				st.ForeignKey = hasReferences(text)
			}
		}
	case "TRUNCATE":
		st.Kind = Schema
		st.Table = unquoteName(identAfterKeywords(text, "TRUNCATE", "TABLE", "ONLY"))
	default:
		st.Kind = Schema
	}
}

// databaseOptions reads the character set, collation, encoding and
// locale options of a CREATE DATABASE statement's effective text.
func databaseOptions(text string) map[string]string {
	toks := tokens(text)
	var out map[string]string
	for i := 0; i < len(toks); i++ {
		if toks[i].kind != tWord {
			continue
		}
		key := strings.ToUpper(toks[i].text)
		switch key {
		case "CHARACTER":
			if i+1 >= len(toks) || !strings.EqualFold(toks[i+1].text, "SET") {
				continue
			}
			i++
			key = "CHARSET"
		case "CHARSET", "COLLATE", "ENCODING", "LOCALE", "LC_COLLATE", "LC_CTYPE":
		default:
			continue
		}
		j := i + 1
		if j < len(toks) && toks[j].kind == tPunct && toks[j].text == "=" {
			j++
		}
		if j < len(toks) && (toks[j].kind == tWord || toks[j].kind == tQuoted) {
			v := toks[j].text
			if toks[j].kind == tQuoted {
				v = strings.ReplaceAll(v[1:len(v)-1], v[:1]+v[:1], v[:1])
			}
			if out == nil {
				out = map[string]string{}
			}
			out[key] = v
			i = j
		}
	}
	return out
}

// isAdminMySQL: statements that administer the server, not its data
// (Statement.Admin). w is the statement's first words, upper case.
func isAdminMySQL(w []string) bool {
	switch w[0] {
	case "FLUSH", "RESET", "PURGE", "KILL", "SHUTDOWN", "INSTALL", "UNINSTALL":
		return true
	case "CHANGE":
		return len(w) > 1 && (w[1] == "MASTER" || w[1] == "REPLICATION")
	case "START", "STOP":
		return len(w) > 1 && (w[1] == "SLAVE" || w[1] == "REPLICA" || w[1] == "ALL")
	}
	return false
}

// isAccountMySQL: GRANT, REVOKE, CREATE/ALTER/DROP/RENAME USER or ROLE,
// SET PASSWORD, SET [DEFAULT] ROLE, and any of them behind MariaDB's SET
// STATEMENT ... FOR.
func isAccountMySQL(w []string, text string) bool {
	switch w[0] {
	case "GRANT", "REVOKE":
		return true
	case "CREATE", "ALTER", "DROP", "RENAME":
		i := 1
		if len(w) > 2 && w[1] == "OR" && w[2] == "REPLACE" {
			i = 3
		}
		return len(w) > i && (w[i] == "USER" || w[i] == "ROLE")
	case "SET":
		if len(w) > 1 && (w[1] == "PASSWORD" || w[1] == "ROLE") || len(w) > 2 && w[1] == "DEFAULT" && w[2] == "ROLE" {
			return true
		}
		if len(w) > 1 && w[1] == "STATEMENT" {
			all := words(text, 1<<10)
			for i, x := range all {
				if x == "FOR" && i+1 < len(all) {
					return isAccountMySQL(all[i+1:], "")
				}
			}
		}
	}
	return false
}

// isAccountPostgres: GRANT, REVOKE, CREATE/ALTER/DROP ROLE, USER or GROUP,
// SET/RESET ROLE or SESSION AUTHORIZATION, ALTER DEFAULT PRIVILEGES,
// REASSIGN OWNED, DROP OWNED.
func isAccountPostgres(w []string) bool {
	at := func(i int, x string) bool { return len(w) > i && w[i] == x }
	switch w[0] {
	case "GRANT", "REVOKE", "REASSIGN":
		return true
	case "CREATE", "ALTER", "DROP":
		return at(1, "ROLE") || at(1, "USER") || at(1, "GROUP") || at(1, "DEFAULT") && at(2, "PRIVILEGES") || at(1, "OWNED")
	case "SET", "RESET":
		i := 1
		if at(1, "SESSION") || at(1, "LOCAL") {
			i = 2
		}
		return at(i, "ROLE") || at(i, "AUTHORIZATION") || at(1, "SESSION") && at(2, "AUTHORIZATION")
	}
	return false
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
