package dump

import (
	"fmt"
	"sort"
	"strings"
)

// Rewrite changes MySQL-family statements as they are loaded. The engine
// rewrite touches only the table options of CREATE TABLE statements (the
// words after the column list, outside strings and comments), never data.
type Rewrite struct {
	// Engine, if set, becomes the engine of every table.
	Engine string
	// EngineMap maps an engine found in the dump (any case) to another,
	// for tables Engine does not cover.
	EngineMap map[string]string
	// TableOptions are table options added to every CREATE TABLE after its
	// engine, e.g. "TRANSACTIONAL=1 PAGE_CHECKSUM=1" for Aria.
	TableOptions string
	// KeepDefiners keeps DEFINER= clauses of triggers, views and routines;
	// by default they are removed so that the loading account (which may
	// lack SUPER / SET USER) becomes the definer.
	KeepDefiners bool
}

// EngineError is a table the target engine cannot hold.
type EngineError struct {
	Where  string
	Table  string
	Engine string
	What   string
}

func (e *EngineError) Error() string {
	return fmt.Sprintf("%s: table %s: engine %s cannot hold %s", e.Where, e.Table, e.Engine, e.What)
}

// ParseEngineMap parses "MyISAM=Aria,MEMORY=InnoDB".
func ParseEngineMap(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		from, to, ok := strings.Cut(kv, "=")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
		if !ok || !isEngineName(from) || !isEngineName(to) {
			return nil, fmt.Errorf("%q: want FROM=TO engine names, e.g. MyISAM=Aria", kv)
		}
		m[strings.ToUpper(from)] = to
	}
	return m, nil
}

// Engines lists the engines a rewrite may produce.
func (rw *Rewrite) Engines() []string {
	set := map[string]bool{}
	if rw.Engine != "" {
		set[rw.Engine] = true
	}
	for _, e := range rw.EngineMap {
		set[e] = true
	}
	out := make([]string, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// isEngineName accepts an engine identifier (letters, digits, _).
func isEngineName(s string) bool {
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

// Active reports whether the rewrite changes anything.
func (rw *Rewrite) Active() bool {
	return rw != nil && (rw.Engine != "" || len(rw.EngineMap) > 0 || rw.TableOptions != "" || !rw.KeepDefiners)
}

// Apply rewrites st in place (MySQL syntax only).
func (rw *Rewrite) Apply(st *Statement) error {
	if rw == nil {
		return nil
	}
	switch st.Kind {
	case Schema:
		if st.Creates && (rw.Engine != "" || len(rw.EngineMap) > 0 || rw.TableOptions != "") {
			sql, err := rw.createTable(st)
			if err != nil {
				return err
			}
			st.SQL = sql
		}
		if st.Trigger && !rw.KeepDefiners {
			st.SQL = StripDefiner(st.SQL)
		}
	case PostData:
		if !rw.KeepDefiners {
			st.SQL = StripDefiner(st.SQL)
		}
	}
	return nil
}

// createTable rewrites the engine and options of a CREATE TABLE.
func (rw *Rewrite) createTable(st *Statement) (string, error) {
	sql := st.SQL
	toks := tokens(sql)
	// The column list: the first '(' group.
	open := -1
	for i, t := range toks {
		if t.kind == tPunct && t.text == "(" {
			open = i
			break
		}
		if t.kind == tWord && (strings.EqualFold(t.text, "LIKE") || strings.EqualFold(t.text, "AS") || strings.EqualFold(t.text, "SELECT")) {
			return sql, nil
		}
	}
	if open < 0 {
		return sql, nil
	}
	depth, closeAt := 0, -1
	for i := open; i < len(toks); i++ {
		if toks[i].kind != tPunct {
			continue
		}
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
		}
		if depth == 0 {
			closeAt = i
			break
		}
	}
	if closeAt < 0 {
		return sql, nil
	}
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	final := ""
	found := false
	for i := closeAt + 1; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tWord || !strings.EqualFold(t.text, "ENGINE") {
			continue
		}
		j := i + 1
		if j < len(toks) && toks[j].kind == tPunct && toks[j].text == "=" {
			j++
		}
		if j >= len(toks) || !(toks[j].kind == tWord || toks[j].kind == tQuoted && toks[j].text[0] == '`') {
			continue
		}
		old := unquoteIdent(toks[j].text)
		to := rw.Engine
		if to == "" {
			to = rw.EngineMap[strings.ToUpper(old)]
		}
		if to == "" {
			to = old
		} else {
			edits = append(edits, edit{toks[j].start, toks[j].end, to})
		}
		if !found {
			found = true
			final = to
			if rw.TableOptions != "" {
				edits = append(edits, edit{toks[j].end, toks[j].end, " " + rw.TableOptions})
			}
		}
	}
	if !found {
		add := ""
		if rw.Engine != "" {
			add = " ENGINE=" + rw.Engine
			final = rw.Engine
		}
		if rw.TableOptions != "" {
			add += " " + rw.TableOptions
		}
		if add != "" {
			if e := toks[closeAt].end; e < len(sql) && sql[e] > ' ' {
				add += " "
			}
			edits = append(edits, edit{toks[closeAt].end, toks[closeAt].end, add})
		}
	}
	if err := checkEngine(final, st, toks[open:closeAt+1]); err != nil {
		return "", err
	}
	if len(edits) == 0 {
		return sql, nil
	}
	sort.SliceStable(edits, func(a, b int) bool { return edits[a].start < edits[b].start })
	var b strings.Builder
	b.Grow(len(sql) + 64)
	last := 0
	for _, e := range edits {
		b.WriteString(sql[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(sql[last:])
	return b.String(), nil
}

// checkEngine rejects what an engine cannot hold: MEMORY has no BLOB/TEXT
// columns and no FULLTEXT or SPATIAL indexes.
func checkEngine(engine string, st *Statement, cols []token) error {
	switch strings.ToUpper(engine) {
	case "MEMORY", "HEAP":
	default:
		return nil
	}
	for _, t := range cols {
		if t.kind != tWord {
			continue
		}
		switch w := strings.ToUpper(t.text); w {
		case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "JSON", "GEOMETRY":
			return &EngineError{st.Where(), st.Table, engine, "a " + w + " column (use --engine-map to pick another engine for this table)"}
		case "FULLTEXT", "SPATIAL":
			return &EngineError{st.Where(), st.Table, engine, "a " + w + " index"}
		}
	}
	return nil
}

// StripDefiner removes DEFINER=user@host clauses (outside strings).
func StripDefiner(sql string) string {
	toks := tokens(sql)
	var b strings.Builder
	last := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tWord || !strings.EqualFold(t.text, "DEFINER") || i+2 >= len(toks) || toks[i+1].text != "=" {
			continue
		}
		j := i + 2
		end := -1
		switch {
		case toks[j].kind == tWord && strings.EqualFold(toks[j].text, "CURRENT_USER"):
			end = toks[j].end
			if j+2 < len(toks) && toks[j+1].text == "(" && toks[j+2].text == ")" {
				end = toks[j+2].end
			}
		case (toks[j].kind == tQuoted || toks[j].kind == tWord) && j+2 < len(toks) && toks[j+1].text == "@" &&
			(toks[j+2].kind == tQuoted || toks[j+2].kind == tWord):
			end = toks[j+2].end
		case toks[j].kind == tQuoted || toks[j].kind == tWord: // a role
			end = toks[j].end
		}
		if end < 0 {
			continue
		}
		b.WriteString(sql[last:t.start])
		last = end
	}
	if last == 0 {
		return sql
	}
	b.WriteString(sql[last:])
	return b.String()
}
