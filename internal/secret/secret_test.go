package secret

import (
	"slices"
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
