package dumpload

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// parseLoadData reads LOAD DATA's default format back into fields (nil
// for \N), the inverse of toLoadData's Data, for tests.
func parseLoadData(data []byte) [][][]byte {
	var rows [][][]byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		var row [][]byte
		for _, f := range bytes.Split(line, []byte{'\t'}) {
			if string(f) == `\N` {
				row = append(row, nil)
				continue
			}
			v := []byte{}
			for i := 0; i < len(f); i++ {
				if f[i] == '\\' && i+1 < len(f) {
					i++
					switch f[i] {
					case '0':
						v = append(v, 0)
					case 'n':
						v = append(v, '\n')
					case 'r':
						v = append(v, '\r')
					case 't':
						v = append(v, '\t')
					case 'b':
						v = append(v, '\b')
					case 'Z':
						v = append(v, 0x1a)
					default:
						v = append(v, f[i])
					}
					continue
				}
				v = append(v, f[i])
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

func TestToLoadData(t *testing.T) {
	for _, c := range []struct {
		sql, mod, table, cols, data string
		ok                          bool
	}{
		{"INSERT INTO `t` VALUES (1,'a\\tb',NULL),(-2.5e3,'',0x00FF5C)", "", "`t`", "", "1\ta\\tb\t\\N\n-2.5e3\t\t\\0\xff\\\\\n", true},
		{"INSERT IGNORE INTO db.t (`a`, b) VALUES ('it''s \\\\ \\n\\r\\0\\Z\\%\\_\\x', _binary 'x\ty', X'4142')", "IGNORE", "db.t", "(`a`, b)", "it's \\\\ \\n\\r\\0\x1a\\\\%\\\\_x\tx\\ty\tAB\n", true},
		{"REPLACE INTO t VALUES (\"dq\"\"\", 7)", "REPLACE", "t", "", "dq\"\t7\n", true},
		{"insert into t value ('\\N', '\\\\N')", "", "t", "", "N\t\\\\N\n", true},
		{"INSERT INTO t VALUES (1),(2) ON DUPLICATE KEY UPDATE a=1", "", "", "", "", false},
		{"INSERT INTO t VALUES (NOW())", "", "", "", "", false},
		{"INSERT INTO t VALUES (1+1)", "", "", "", "", false},
		{"INSERT INTO t VALUES (b'101')", "", "", "", "", false},
		{"INSERT INTO t VALUES (_utf8mb4 'x')", "", "", "", "", false},
		{"INSERT INTO t VALUES ('a' 'b')", "", "", "", "", false},
		{"INSERT INTO t VALUES ('')", "", "", "", "", false},
		{"INSERT INTO t VALUES (0x1g)", "", "", "", "", false},
		{"INSERT INTO t VALUES ('open", "", "", "", "", false},
		{"INSERT INTO t SELECT * FROM u", "", "", "", "", false},
		{"INSERT INTO t SET a=1", "", "", "", "", false},
		{"INSERT INTO t VALUES (TRUE)", "", "", "", "", false},
		{"INSERT INTO t VALUES (1);", "", "", "", "", false},
		{"INSERT /* c */ INTO t VALUES (1)", "", "", "", "", false},
		{"UPDATE t SET a=1", "", "", "", "", false},
	} {
		r, ok := toLoadData(c.sql)
		if ok != c.ok {
			t.Errorf("%q: ok %v, want %v", c.sql, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if r.Modifier != c.mod || r.Table != c.table || r.Columns != c.cols || string(r.Data) != c.data {
			t.Errorf("%q: got %q %q %q %q, want %q %q %q %q", c.sql, r.Modifier, r.Table, r.Columns, r.Data, c.mod, c.table, c.cols, c.data)
		}
	}
}

// quoteValue writes v as a MySQL literal in one of several forms.
func quoteValue(v []byte, form int) string {
	if v == nil {
		return "NULL"
	}
	switch form % 4 {
	case 1:
		return fmt.Sprintf("0x%X", v)
	case 2:
		return fmt.Sprintf("_binary X'%x'", v)[8:] // X'..' without the introducer
	}
	var b strings.Builder
	if form%4 == 3 {
		b.WriteString("_binary ")
	}
	b.WriteByte('\'')
	for _, c := range v {
		switch c {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// FuzzToLoadData: rows of arbitrary byte strings written as INSERT
// literals convert to LOAD DATA input that reads back as the same values;
// and any statement either converts to well-formed rows or is refused.
func FuzzToLoadData(f *testing.F) {
	f.Add([]byte("a\tb\\c\x00\n'\""), []byte("\\N"), uint8(0), "INSERT INTO t VALUES (1,'x')")
	f.Add([]byte{0xff, 0xfe, '\r', 0x1a}, []byte{}, uint8(5), "INSERT INTO t VALUES ('a\\\\'),(0x41)")
	f.Add([]byte("😀"), []byte(nil), uint8(7), "REPLACE INTO `a``b` (x) VALUES (_binary 'q\\%')")
	f.Fuzz(func(t *testing.T, a, b []byte, form uint8, stmt string) {
		if len(a) == 0 && form%4 != 0 {
			a = []byte{'x'} // an empty hex literal is not a string literal
		}
		if len(b) == 0 {
			b = nil
		}
		sql := fmt.Sprintf("INSERT INTO t VALUES (%s, %s),(%s, -12.5)", quoteValue(a, int(form)), quoteValue(b, 0), quoteValue(b, int(form>>2)))
		r, ok := toLoadData(sql)
		if !ok {
			t.Fatalf("%q refused", sql)
		}
		got := parseLoadData(r.Data)
		want := [][][]byte{{a, b}, {b, []byte("-12.5")}}
		if len(got) != 2 || r.Rows != 2 {
			t.Fatalf("%q: rows %q", sql, r.Data)
		}
		for i := range want {
			for k := range want[i] {
				if (got[i][k] == nil) != (want[i][k] == nil) || !bytes.Equal(got[i][k], want[i][k]) {
					t.Fatalf("%q: row %d field %d = %q, want %q (data %q)", sql, i, k, got[i][k], want[i][k], r.Data)
				}
			}
		}
		if r, ok := toLoadData(stmt); ok {
			if n := bytes.Count(r.Data, []byte{'\n'}); n != r.Rows {
				t.Fatalf("%q: %d lines for %d rows", stmt, n, r.Rows)
			}
		}
	})
}

func TestToLoadDataKinds(t *testing.T) {
	r, ok := toLoadData("INSERT INTO t VALUES (1,'a',0x41,NULL,1e3),(-0,_binary 'b',X'42',NULL,007)")
	want := []uint8{kindNumber | kindOddNum, kindString | kindBytes, kindBytes, 0, kindNumber | kindOddNum}
	if !ok || fmt.Sprint(r.Kinds) != fmt.Sprint(want) {
		t.Fatalf("kinds %v, want %v", r.Kinds, want)
	}
	for n, plain := range map[string]bool{"0": true, "-12.50": true, "007": false, "1.": false, ".5": false, "-0.0": false, "1e3": false} {
		if plainNumberText(n) != plain {
			t.Errorf("plainNumberText(%q) = %v", n, !plain)
		}
	}
	if _, ok := toLoadData("INSERT INTO t VALUES (1,2),(3)"); ok {
		t.Error("rows of different lengths converted")
	}
}
