package target

import (
	"strings"
	"testing"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		name, dsn string
		want      Target
		wantErr   string
	}{
		{name: "mysql", dsn: "mysql://u:p%40ss@127.0.0.1:3307/db",
			want: Target{Flavor: FlavorMySQL, Host: "127.0.0.1", Port: 3307, User: "u", Password: "p@ss", Database: "db"}},
		{name: "postgres default port and db", dsn: "postgres://u@localhost",
			want: Target{Flavor: FlavorPostgres, Host: "localhost", Port: 5432, User: "u", Database: "sbtest"}},
		{name: "socket", dsn: "mysql://root@/x?socket=/tmp/m.sock",
			want: Target{Flavor: FlavorMySQL, Port: 3306, User: "root", Database: "x", Socket: "/tmp/m.sock"}},
		{name: "bad scheme", dsn: "oracle://u:secret@h/db", wantErr: "unknown DSN scheme"},
		{name: "not a url", dsn: "just-words", wantErr: "not a DSN"},
		{name: "bad port", dsn: "mysql://u:secret@h:99999/db", wantErr: "bad port"},
		{name: "no host", dsn: "postgres:///db", wantErr: "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDSN(tt.dsn)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Flavor != tt.want.Flavor || got.Host != tt.want.Host || got.Port != tt.want.Port ||
				got.User != tt.want.User || got.Password != tt.want.Password || got.Database != tt.want.Database ||
				got.Socket != tt.want.Socket {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMaskedDSNHidesPassword(t *testing.T) {
	tg := Target{Flavor: FlavorMariaDB, Host: "127.0.0.1", Port: 3306, User: "dbarena", Password: "s3cr3t!", Database: "sbtest"}
	m := tg.MaskedDSN()
	if strings.Contains(m, "s3cr3t") || !strings.Contains(m, "dbarena:***@127.0.0.1:3306/sbtest") {
		t.Fatalf("MaskedDSN = %q", m)
	}
	back, err := ParseDSN(tg.DSN())
	if err != nil || back.Password != "s3cr3t!" {
		t.Fatalf("DSN round trip: %+v, %v", back, err)
	}
	if got := tg.Mask("error near s3cr3t! here"); strings.Contains(got, "s3cr3t") {
		t.Fatalf("Mask = %q", got)
	}
}

// TestPasswordWithControlCharacters: a password holding a newline or
// spaces is never echoed, neither by a refused DSN's error nor escaped in
// a driver's message.
func TestPasswordWithControlCharacters(t *testing.T) {
	for _, dsn := range []string{"mysql://u:pa\nss@127.0.0.1:1/db", "postgres://u:pa\nss word@127.0.0.1:1/db", "mysql://u:pa\tss@h:99999/db"} {
		_, err := ParseDSN(dsn)
		if err == nil {
			t.Fatalf("ParseDSN(%q) accepted it", dsn)
		}
		if msg := err.Error(); strings.Contains(msg, "pa") || !strings.Contains(msg, "u:***@") {
			t.Errorf("ParseDSN(%q): %s", dsn, msg)
		}
	}
	tg, err := ParseDSN("mysql://u:pa%0As%2Fs%20x@127.0.0.1:1/db")
	if err != nil || tg.Password != "pa\ns/s x" {
		t.Fatalf("ParseDSN: %+v, %v", tg, err)
	}
	for _, echo := range []string{"pa\ns/s x", "pa%0As%2Fs%20x", "pa%0As%2Fs+x", "pa%0As%2Fs%20x", tg.DSN()} {
		if got := tg.Mask("driver said: " + echo); strings.Contains(got, "pa") {
			t.Errorf("Mask(%q) = %q", echo, got)
		}
	}
}
