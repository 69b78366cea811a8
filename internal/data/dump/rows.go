package dump

import "bytes"

// SentRows counts the rows a data statement sends: the lines of a COPY
// chunk, the tuples of INSERT/REPLACE ... VALUES, 1 for INSERT ... SET
// or DEFAULT VALUES. It is -1 where the statement does not say how many
// rows it adds (INSERT ... SELECT, INSERT IGNORE, ON DUPLICATE KEY
// UPDATE, ON CONFLICT): a loader compares the rows a table got with the
// rows sent only where both are known.
func SentRows(st *Statement, syn Syntax) int64 {
	if st.Copy != nil {
		n := int64(bytes.Count(st.Copy, []byte{'\n'}))
		if len(st.Copy) > 0 && st.Copy[len(st.Copy)-1] != '\n' {
			n++
		}
		return n
	}
	if st.Kind != Data {
		return -1
	}
	return countTuples(st.SQL, syn)
}

// countTuples scans an INSERT or REPLACE for its VALUES list.
func countTuples(sql string, syn Syntax) int64 {
	const (
		head  = iota // before VALUES
		want         // expecting a tuple
		after        // after a tuple: ',' or the end
	)
	state := head
	depth := 0
	var n int64
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`' && syn == MySQL:
			if state != head && depth == 0 {
				return -1
			}
			i = endQuoted(sql, i, syn)
			continue
		case c == '$' && syn == Postgres && (i == 0 || !isIdentByte(sql[i-1])):
			if j, ok := endDollar(sql, i); ok {
				i = j
				continue
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			if syn == MySQL && depth == 0 && (i+2 < len(sql) && sql[i+2] == '!' || i+3 < len(sql) && sql[i+2] == 'M' && sql[i+3] == '!') {
				return -1 // a version comment between the tuples: not counted
			}
			i = endComment(sql, i, syn)
			continue
		case c == '#' && syn == MySQL, c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			k := bytes.IndexByte([]byte(sql[i:]), '\n')
			if k < 0 {
				i = len(sql)
			} else {
				i += k
			}
			continue
		case c == '(':
			if depth == 0 {
				switch state {
				case want:
					n++
					state = after
				case after:
					return -1
				}
			}
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0 && state == after:
			state = want
		case depth == 0 && isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			w := sql[i:j]
			i = j
			switch state {
			case head:
				switch {
				case eqFold(w, "VALUES"), eqFold(w, "VALUE"):
					state = want
				case eqFold(w, "SELECT"), eqFold(w, "IGNORE"), eqFold(w, "WITH"), eqFold(w, "TABLE"):
					return -1
				case eqFold(w, "SET"), eqFold(w, "DEFAULT"):
					return scanTail(sql[i:], 1)
				}
			default:
				// ON DUPLICATE KEY UPDATE, ON CONFLICT, RETURNING ...
				if eqFold(w, "RETURNING") && state == after {
					return n
				}
				return -1
			}
			continue
		case depth == 0 && state == want && c > ' ' && c != '(':
			return -1
		}
		i++
	}
	if state == after && depth == 0 {
		return n
	}
	return -1
}

// scanTail returns n unless the rest of an INSERT ... SET / DEFAULT
// VALUES has ON DUPLICATE KEY or ON CONFLICT.
func scanTail(rest string, n int64) int64 {
	for _, w := range words(rest, 1<<16) {
		if w == "ON" || w == "SELECT" {
			return -1
		}
	}
	return n
}

func eqFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != b[i]|0x20 {
			return false
		}
	}
	return true
}

// SessionValue returns the value the last assignment of setting name
// (upper case, e.g. AUTOCOMMIT, FOREIGN_KEY_CHECKS) in a session log
// gives, upper-cased ("0", "1", "OFF", "@OLD_X"...), or "" if none does.
// User variables (@name) and system-variable reads (@@name) are not
// assignments of the setting.
func SessionValue(log []string, name string) string {
	for k := len(log) - 1; k >= 0; k-- {
		text, _ := effectiveText(log[k], MySQL, Server{}, readAllCode)
		toks := tokens(text)
		val := ""
		for i := 0; i+2 < len(toks); i++ {
			t := toks[i]
			if t.kind != tWord || !eqFold(t.text, name) {
				continue
			}
			if i > 0 && toks[i-1].kind == tPunct && toks[i-1].text == "@" && (i < 2 || toks[i-2].text != "@") {
				continue // a user variable
			}
			if toks[i+1].kind != tPunct || toks[i+1].text != "=" {
				continue
			}
			v := toks[i+2]
			val = upper(v.text)
			if v.kind == tPunct && v.text == "@" && i+3 < len(toks) {
				val = "@" + upper(toks[i+3].text)
			}
		}
		if val != "" {
			return val
		}
	}
	return ""
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
