package dump

import (
	"strings"
)

// SplitIndexes takes the plain secondary indexes (KEY / INDEX, not
// PRIMARY, UNIQUE, FULLTEXT or SPATIAL) out of a MySQL CREATE TABLE and
// returns the ALTER TABLE that adds them back, to run after the data ("" if
// there are none). Tables with foreign keys are left alone: InnoDB would
// make its own index for them.
func SplitIndexes(st *Statement) string {
	if !st.Creates {
		return ""
	}
	sql := st.SQL
	toks := tokens(sql)
	open := -1
	for i, t := range toks {
		if t.kind == tPunct && t.text == "(" {
			open = i
			break
		}
	}
	if open < 0 {
		return ""
	}
	// The items of the column list: [start token, end token) at depth 1.
	type item struct{ first, last int }
	var items []item
	depth, begin := 0, open+1
	closeAt := -1
	for i := open; i < len(toks) && closeAt < 0; i++ {
		t := toks[i]
		if t.kind != tPunct {
			continue
		}
		switch t.text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				items = append(items, item{begin, i})
				closeAt = i
			}
		case ",":
			if depth == 1 {
				items = append(items, item{begin, i})
				begin = i + 1
			}
		}
	}
	if closeAt < 0 {
		return ""
	}
	var keep, moved []item
	for _, it := range items {
		if it.first >= it.last {
			keep = append(keep, it)
			continue
		}
		switch strings.ToUpper(toks[it.first].text) {
		case "KEY", "INDEX":
			if toks[it.first].kind == tWord {
				moved = append(moved, it)
				continue
			}
		case "CONSTRAINT", "FOREIGN":
			if toks[it.first].kind == tWord {
				return ""
			}
		}
		keep = append(keep, it)
	}
	if len(moved) == 0 || len(keep) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(sql[:toks[open].end])
	for i, it := range keep {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(sql[toks[it.first].start:toks[it.last-1].end])
	}
	b.WriteString("\n")
	b.WriteString(sql[toks[closeAt].start:])
	var alter strings.Builder
	alter.WriteString("ALTER TABLE " + quoteTable(st.Table))
	for i, it := range moved {
		if i > 0 {
			alter.WriteString(",")
		}
		alter.WriteString(" ADD ")
		alter.WriteString(sql[toks[it.first].start:toks[it.last-1].end])
	}
	st.SQL = b.String()
	return alter.String()
}

// quoteTable backquotes a possibly qualified MySQL table name.
func quoteTable(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = "`" + strings.ReplaceAll(p, "`", "``") + "`"
	}
	return strings.Join(parts, ".")
}
