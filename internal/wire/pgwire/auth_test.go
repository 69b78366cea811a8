package pgwire_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	. "github.com/dbarena/dbarena/internal/wire/pgwire"
)

// admin connects to the shared sandbox as the superuser through its Unix
// socket, with the sandbox's admin password (no sandbox trusts a socket).
func admin(t *testing.T) *Conn {
	t.Helper()
	server(t)
	sb, err := sandboxtest.Manager(t).Get("shared-postgres")
	if err != nil {
		t.Fatal(err)
	}
	at := sb.AdminTarget()
	sock := at.Socket
	if !strings.Contains(sock, "/.s.PGSQL.") {
		sock += "/.s.PGSQL." + strconv.Itoa(at.Port)
	}
	return dial(t, Config{Socket: sock, User: at.User, Password: at.Password, Database: at.Database})
}

// TestAuthMethods logs in with every method the client speaks: SCRAM-SHA-256
// (the sandbox's default, socket and TCP), trust, md5 and password (roles
// given those methods in pg_hba.conf for the test).
func TestAuthMethods(t *testing.T) {
	cfg, _, _ := server(t)
	a := admin(t)
	if m := AuthMethod(a); m != "scram-sha-256" {
		t.Errorf("socket: %s, want scram-sha-256", m)
	}
	c := dial(t, cfg)
	if m := AuthMethod(c); m != "scram-sha-256" {
		t.Errorf("TCP: %s, want scram-sha-256", m)
	}
	var hba string
	if err := a.QueryFunc("SHOW hba_file", nil, func(r *Row) error { hba = string(r.Bytes(0)); return nil }); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"DROP ROLE IF EXISTS pw_md5", "DROP ROLE IF EXISTS pw_clear", "DROP ROLE IF EXISTS pw_trust",
		"SET password_encryption = 'md5'",
		"CREATE ROLE pw_md5 LOGIN PASSWORD 'md5-secret'", "CREATE ROLE pw_clear LOGIN PASSWORD 'clear-secret'",
		"CREATE ROLE pw_trust LOGIN",
		"GRANT ALL ON DATABASE " + cfg.Database + " TO pw_md5, pw_clear, pw_trust",
	} {
		if _, err := a.Exec(q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	lines := "host all pw_md5 127.0.0.1/32 md5\nhost all pw_clear 127.0.0.1/32 password\nhost all pw_trust 127.0.0.1/32 trust\n"
	if err := os.WriteFile(hba, append([]byte(lines), orig...), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(hba, orig, 0o600)
		_, _ = a.Exec("SELECT pg_reload_conf()", nil)
	})
	if _, err := a.Exec("SELECT pg_reload_conf()", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ user, password, method string }{
		{"pw_md5", "md5-secret", "md5"}, {"pw_clear", "clear-secret", "password"}, {"pw_trust", "", "trust"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			u := cfg
			u.User, u.Password = tc.user, tc.password
			// The postmaster reloads pg_hba.conf when it gets to the signal.
			deadline := time.Now().Add(30 * time.Second)
			for {
				c, err := Dial(context.Background(), u)
				if err == nil {
					m := AuthMethod(c)
					_, qerr := c.Exec("SELECT 1", nil)
					c.Close()
					if qerr != nil {
						t.Fatal(qerr)
					}
					if m == tc.method {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("no %s login within 30 s: %v", tc.method, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if tc.method == "trust" {
				return
			}
			u.Password = "wrong"
			_, err := Dial(context.Background(), u)
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != "28P01" {
				t.Fatalf("wrong password: %v, want 28P01", err)
			}
			if cl := (dialect.PostgresDialect{}).Classify(err); cl.Kind != dialect.Fatal {
				t.Errorf("wrong password classified %+v, want fatal", cl)
			}
		})
	}
	// SCRAM with a wrong password: the server's refusal, not a lost
	// connection.
	u := cfg
	u.Password = "wrong"
	_, err = Dial(context.Background(), u)
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != "28P01" {
		t.Fatalf("SCRAM, wrong password: %v, want 28P01", err)
	}
}

// TestDialCanceled: Dial gives up with the context's error.
func TestDialCanceled(t *testing.T) {
	cfg, _, _ := server(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dial(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled dial: %v", err)
	}
}

// TestSCRAMSaltedOnce: the process derives a user's salted password once
// and reuses it for later connections (each with its own nonces and
// proof); a wrong password is derived apart and still refused.
func TestSCRAMSaltedOnce(t *testing.T) {
	cfg, _, _ := server(t)
	SaltedCached(true)
	for i := range 2 {
		c := dial(t, cfg)
		if err := c.Query("SELECT 1", nil); err != nil {
			t.Fatal(err)
		}
		if n := SaltedCached(false); n != 1 {
			t.Fatalf("connection %d: %d salted passwords cached, want 1", i+1, n)
		}
	}
	bad := cfg
	bad.Password += "-wrong"
	if c, err := Dial(context.Background(), bad); err == nil {
		c.Close()
		t.Fatal("wrong password: connected")
	}
	if n := SaltedCached(false); n != 2 {
		t.Fatalf("%d salted passwords cached, want 2", n)
	}
}
