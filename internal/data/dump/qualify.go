package dump

import "strings"

// ForeignQualifierError is a MySQL-family statement that names an object
// of a database other than the dump's own (see Requalify).
type ForeignQualifierError struct {
	// Database is the qualifier, unquoted; Name the qualified name as
	// written.
	Database, Name string
}

func (e *ForeignQualifierError) Error() string {
	return "names " + strconvQuote(e.Name) + " in database " + strconvQuote(e.Database)
}

// qualifierKeywords are the words after which a two-part name a.b is an
// object (a is a database), not a column of a table or alias: the object
// a statement creates, alters, drops or calls, and the tables it reads or
// writes.
var qualifierKeywords = map[string]bool{
	"TABLE": true, "INTO": true, "FROM": true, "JOIN": true, "UPDATE": true, "TRIGGER": true,
	"VIEW": true, "PROCEDURE": true, "FUNCTION": true, "EVENT": true, "CALL": true,
	"REFERENCES": true, "TRUNCATE": true, "EXISTS": true, "INSERT": true, "REPLACE": true, "TO": true,
	"STRAIGHT_JOIN": true, "IGNORE": true,
}

// fromFunctions take FROM inside their parentheses as an operator
// (EXTRACT(YEAR FROM t.d)): a name there is a column.
var fromFunctions = map[string]bool{"EXTRACT": true, "TRIM": true, "SUBSTRING": true, "SUBSTR": true, "POSITION": true, "OVERLAY": true}

// Requalify rewrites the database qualifiers of a MySQL-family
// statement's object names for a load into database target: a qualifier
// that own reports as the dump's own database becomes target (quoted), a
// qualifier equal to target stays, and any other is refused with a
// *ForeignQualifierError (nothing of the statement runs). A qualifier is
// the first part of a three-part name (db.table.column), or of a
// two-part name where an object name stands: after CREATE TRIGGER /
// TABLE / VIEW / PROCEDURE / FUNCTION / EVENT, INSERT INTO, FROM, JOIN,
// UPDATE, CALL, REFERENCES, TRUNCATE, TO, and the ON of CREATE TRIGGER
// and CREATE INDEX; version comments (/*!50003 ... */) are read through.
// Elsewhere a.b is a column of a table or alias and is left alone. The
// statement comes back unchanged when it names no database.
func Requalify(sql string, own func(string) bool, target string) (string, error) {
	if !strings.Contains(sql, ".") {
		return sql, nil
	}
	toks := tokens(sql)
	type edit struct{ start, end int }
	var edits []edit
	var prev string   // the previous word, upper case ("" after punctuation)
	var parens []bool // per open parenthesis: a FROM-taking function's
	first := ""       // the statement's first word
	object := ""      // what a CREATE makes
	onDone := false
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		switch {
		case tk.kind == tMarker:
			continue
		case tk.kind == tPunct:
			switch tk.text {
			case "(":
				parens = append(parens, fromFunctions[prev])
			case ")":
				if len(parens) > 0 {
					parens = parens[:len(parens)-1]
				}
			}
			if tk.text != "." {
				prev = ""
			}
			continue
		}
		if !isIdentToken(tk) {
			prev = ""
			continue
		}
		// A qualified name: ident . ident [. ident]
		n := 1
		for j := i; j+2 < len(toks) && toks[j+1].kind == tPunct && toks[j+1].text == "." && isIdentToken(toks[j+2]) && toks[j+1].start == toks[j].end && toks[j+2].start == toks[j+1].end; j += 2 {
			n++
		}
		if n == 1 {
			w := ""
			if tk.kind == tWord {
				w = strings.ToUpper(tk.text)
			}
			if first == "" {
				first = w
			} else if first == "CREATE" && object == "" && (w == "TRIGGER" || w == "INDEX" || w == "TABLE" || w == "VIEW" || w == "PROCEDURE" || w == "FUNCTION" || w == "EVENT") {
				object = w
			}
			prev = w
			continue
		}
		isObject := n >= 3
		switch {
		case prev == "ON":
			if (object == "TRIGGER" || object == "INDEX") && !onDone {
				isObject, onDone = true, true
			}
		case prev == "FROM":
			isObject = isObject || len(parens) == 0 || !parens[len(parens)-1]
		case qualifierKeywords[prev]:
			isObject = true
		}
		if isObject {
			q := unquoteIdent(tk.text)
			switch {
			case own(q):
				edits = append(edits, edit{tk.start, tk.end})
			case q == target:
			default:
				return sql, &ForeignQualifierError{Database: q, Name: sql[tk.start:toks[i+2*(n-1)].end]}
			}
		}
		i += 2 * (n - 1)
		prev = ""
	}
	if len(edits) == 0 {
		return sql, nil
	}
	quoted := "`" + strings.ReplaceAll(target, "`", "``") + "`"
	var b strings.Builder
	b.Grow(len(sql) + len(edits)*len(quoted))
	at := 0
	for _, e := range edits {
		b.WriteString(sql[at:e.start])
		b.WriteString(quoted)
		at = e.end
	}
	b.WriteString(sql[at:])
	return b.String(), nil
}

// isIdentToken: a bare word or a `quoted` identifier (in MySQL "..." is
// a string).
func isIdentToken(t token) bool {
	return t.kind == tWord || t.kind == tQuoted && t.text[0] == '`'
}

// SplitQualified splits a MySQL-family table name as Statement.Table
// holds it ("db.table") into its database and table; db is "" when the
// name is not qualified.
func SplitQualified(name string) (db, table string) {
	if i := strings.IndexByte(name, '.'); i > 0 && i < len(name)-1 && !strings.Contains(name[i+1:], ".") {
		return name[:i], name[i+1:]
	}
	return "", name
}

// RequalifyData is Requalify for a data statement (INSERT, REPLACE): of
// a VALUES list only the head before it is read (a dump's values hold no
// names, and reading them whole would slow the load), unless the values
// hold the word SELECT somewhere (a subquery), when all is read.
func RequalifyData(sql string, own func(string) bool, target string) (string, error) {
	t := newTokenizer(sql)
	depth := 0
	for {
		tok, ok := t.next()
		if !ok {
			return Requalify(sql, own, target)
		}
		switch {
		case tok.kind == tPunct && tok.text == "(":
			depth++
		case tok.kind == tPunct && tok.text == ")":
			depth--
		case tok.kind == tWord && depth == 0 && (strings.EqualFold(tok.text, "VALUES") || strings.EqualFold(tok.text, "VALUE")):
			if containsFold(sql[tok.end:], "select") {
				return Requalify(sql, own, target)
			}
			head, err := Requalify(sql[:tok.start], own, target)
			if err != nil {
				return sql, err
			}
			return head + sql[tok.start:], nil
		}
	}
}

// containsFold reports whether s holds lower-case ASCII word w in any case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
