package secret

import (
	"slices"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mysql://user:secret@127.0.0.1:3306/db", "mysql://user:***@127.0.0.1:3306/db"},
		{"postgres://u:p%40ss@host/db?sslmode=disable", "postgres://u:***@host/db?sslmode=disable"},
		{"mysql://user:***@h/db", "mysql://user:***@h/db"},
		{"mysql://user@h/db", "mysql://user@h/db"},
		{"mysql://h:3306/db", "mysql://h:3306/db"},
		{"user:secret@tcp(h:3306)/db", "user:***@tcp(h:3306)/db"},
		{"user:p@ss:w/rd@tcp(h:3306)/db", "user:***@tcp(h:3306)/db"},
		{"mysql://u:/slash@h/db", "mysql://u:***@h/db"},
		{"mysql://:onlypass@h/db", "mysql://:***@h/db"},
		{"--target=mysql://u:secret@h/db", "--target=mysql://u:***@h/db"},
		{"dial mysql://u:secret@h/db: refused", "dial mysql://u:***@h/db: refused"},
		{"host=h user=u password=secret dbname=d", "host=h user=u password=*** dbname=d"},
		{"host=h password='se cret' dbname=d", "host=h password=*** dbname=d"},
		{"postgres://h/db?user=u&password=secret&sslmode=require", "postgres://h/db?user=u&password=***&sslmode=require"},
		{"--password=secret", "--password=***"},
		{"PASSWORD = secret", "PASSWORD = ***"},
		{"bypass=1", "bypass=1"},
		{"sandbox:main", "sandbox:main"},
		{"", ""},
		{"127.0.0.1:3306", "127.0.0.1:3306"},
		{"Access denied for user 'u'@'localhost' (using password: YES)", "Access denied for user 'u'@'localhost' (using password: YES)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Mask(tt.in)
			if got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Mask(got); again != got {
				t.Errorf("mask is not idempotent: %q -> %q", got, again)
			}
		})
	}

	t.Run("command", func(t *testing.T) {
		got := MaskCommand([]string{"dbarena", "run", "--target", "mysql://u:secret@h/db", "--password", "secret", "--threads", "4"})
		want := []string{"dbarena", "run", "--target", "mysql://u:***@h/db", "--password", "***", "--threads", "4"}
		if !slices.Equal(got, want) {
			t.Errorf("MaskCommand = %q, want %q", got, want)
		}
	})
}

func TestMaskURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"mysql://u:pa\nss@127.0.0.1:1/db", "mysql://u:***@127.0.0.1:1/db"},
		{"postgres://u:pa\nss word@h/db", "postgres://u:***@h/db"},
		{`mysql://u:a"b'c@d@h/db?x=1`, "mysql://u:***@h/db?x=1"},
		{"mysql://root@/sbtest?socket=/run/a@b.sock", "mysql://root@/sbtest?socket=/run/a@b.sock"},
		{"postgres://h/db?password=s3cret", "postgres://h/db?password=***"},
		{"http://u:p/q@h/path", "http://u:***@h/path"},
		{"not a url p@ss", "not a url p@ss"},
	} {
		if got := MaskURL(tc.in); got != tc.want {
			t.Errorf("MaskURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := MaskURL(MaskURL(tc.in)); got != tc.want {
			t.Errorf("MaskURL twice (%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzMaskURL: whatever a DSN's password holds, MaskURL leaves none of it.
func FuzzMaskURL(f *testing.F) {
	f.Add("u", "pa\nss", "127.0.0.1:1")
	f.Add("root", `a"b'c@d`, "h")
	f.Add("x", "sp ace/slash", "host:5432")
	f.Fuzz(func(t *testing.T, user, password, host string) {
		if strings.ContainsAny(user, ":@/?#") || strings.ContainsAny(host, "@/?#") || len(password) < 4 ||
			strings.ContainsAny(password, "?#") || strings.Contains("mysql://"+user+":***@"+host+"/db", password) {
			t.Skip()
		}
		got := MaskURL("mysql://" + user + ":" + password + "@" + host + "/db")
		if strings.Contains(got, password) {
			t.Errorf("MaskURL kept the password %q: %q", password, got)
		}
	})
}
