package dumpload

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain é 😀":     "plain é 😀",
		"a\x1b[31mred":  `a\x1b[31mred`,
		"bell\x07\x9b":  `bell\x07\x9b`,
		"c1 \u009b x":   `c1 \x9b x`,
		"bidi \u202e x": `bidi \u202e x`,
		"nl\nend":       `nl\x0aend`,
		`back\slash`:    `back\slash`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskError(t *testing.T) {
	sql := "CREATE USER 'u'@'%' IDENTIFIED BY 'sekrit99'"
	msg := "Error 1064: syntax error near 'sekrit99'' at line 1"
	if got := maskError(msg, sql); strings.Contains(got, "sekrit99") {
		t.Errorf("maskError: %q", got)
	}
	if got := excerpt(sql); strings.Contains(got, "sekrit99") || !strings.Contains(got, "'***'") {
		t.Errorf("excerpt: %q", got)
	}
	if got := maskError("Table 'u' doesn't exist", "SELECT * FROM u"); got != "Table 'u' doesn't exist" {
		t.Errorf("unmasked statement: %q", got)
	}
}

func TestCheckDatabaseName(t *testing.T) {
	for _, c := range []struct {
		name string
		fam  target.Family
		ok   bool
	}{
		{"shop", target.MySQL, true},
		{"my_shop-1", target.MySQL, true},
		{"MySQL", target.MySQL, false},
		{"information_schema", target.MySQL, false},
		{"performance_schema", target.MySQL, false},
		{"sys", target.MySQL, false},
		{"%", target.MySQL, false},
		{"a%b", target.MySQL, false},
		{`a\b`, target.MySQL, false},
		{"a.b", target.MySQL, false},
		{"a\x1bb", target.MySQL, false},
		{"", target.MySQL, false},
		{strings.Repeat("x", 65), target.MySQL, false},
		{"template1", target.Postgres, false},
		{"template0", target.Postgres, false},
		{"postgres", target.Postgres, false},
		{"mysql", target.Postgres, true},
		{strings.Repeat("x", 64), target.Postgres, false},
	} {
		d, _ := dialect.For(c.fam)
		if err := checkDatabaseName(c.name, d); (err == nil) != c.ok {
			t.Errorf("%q (%v): %v", c.name, c.fam, err)
		}
	}
}
