package credentials

import (
	"strings"
	"testing"
)

func FuzzParsePgpass(f *testing.F) {
	for _, s := range []string{
		"localhost:5432:db:user:pw\n",
		"*:*:*:*:pw\n# c\n",
		"h\\:x:1:d\\\\:u:p\\:w:rest\n",
		"\\*:*:d:u:p\r\n",
		"a:b:c\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := ParsePgpass(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Line < 1 {
				t.Fatalf("entry without a line: %+v", e)
			}
			// An entry matches its own literal key fields.
			if _, ok := LookupPgpass([]PgpassEntry{e}, e.Host, e.Port, e.Database, e.User); !ok {
				t.Fatalf("entry does not match itself: %+v", e)
			}
		}
	})
}

func FuzzParseOptionFile(f *testing.F) {
	for _, s := range []string{
		"[client]\npassword=pw\n",
		"[client]\npassword = \"a # b\" # c\nuser=u\n",
		"; c\n!include x\n[dbarena]\npassword='x\\sy\\\\'\n",
		"password=early\n",
		"[client\n",
		"[client]\nskip_ssl\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		of, err := ParseOptionFile(strings.NewReader(text), "f.cnf")
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "f.cnf:") || strings.Contains(msg, "\n") {
				t.Fatalf("error not one line naming f.cnf:LINE: %q", msg)
			}
			return
		}
		if v, ok := of.Password(); ok && v.Line < 1 {
			t.Fatalf("password without a line: %+v", v)
		}
	})
}
