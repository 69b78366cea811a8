package dialect_test

import (
	"path/filepath"
	"strings"
	"testing"

	. "github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

// TestPostgresVersionsWire: on the oldest and newest catalogued
// PostgreSQL majors (a --tls sandbox each), database/sql and the lean
// wire client connect as the workload account (SCRAM) over TCP and the
// socket and as the superuser (md5 before PostgreSQL 14, SCRAM after),
// sslmode verify-full encrypts with the sandbox's CA and a wrong CA is
// refused, and the wire client's TLS checks pass.
func TestPostgresVersionsWire(t *testing.T) {
	for _, name := range sandboxtest.PostgresVersions {
		t.Run(name, func(t *testing.T) {
			sb := sandboxtest.StartCatalogued(t, name, func(s *sandbox.Spec) { s.TLS = true })
			v, err := sb.Manager.Get(sb.Name)
			if err != nil {
				t.Fatal(err)
			}
			major := strings.TrimPrefix(name, "postgres-")
			ctx := tlsCtx(t)
			d := PostgresDialect{}
			version := func(c *pgwire.Conn) string {
				t.Helper()
				var s string
				if err := c.QueryFunc("SELECT current_setting('server_version') || ' ' || current_user", nil, func(r *pgwire.Row) error {
					s = string(r.Bytes(0))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return s
			}
			sock := sb.Target
			sock.Host, sock.Socket = "", v.Socket
			admin := v.AdminTarget()
			for _, c := range []struct {
				what string
				user string
				dial func() (*pgwire.Conn, error)
			}{
				{"tcp", sb.Target.User, func() (*pgwire.Conn, error) { return d.DialWire(ctx, sb.Target, OpenOptions{}) }},
				{"socket directory", sb.Target.User, func() (*pgwire.Conn, error) {
					dir := sock
					dir.Socket = filepath.Dir(v.Socket)
					return d.DialWire(ctx, dir, OpenOptions{})
				}},
				{"admin", admin.User, func() (*pgwire.Conn, error) { return d.DialWire(ctx, admin, OpenOptions{}) }},
			} {
				conn, err := c.dial()
				if err != nil {
					t.Fatalf("%s: %v", c.what, err)
				}
				if got := version(conn); !strings.HasPrefix(got, major+".") || !strings.HasSuffix(got, " "+c.user) {
					t.Errorf("%s: %q, want PostgreSQL %s as %s", c.what, got, major, c.user)
				}
				conn.Close()
			}
			db := open(t, admin)
			var who string
			if err := db.QueryRowContext(ctx, "SELECT current_user").Scan(&who); err != nil || who != admin.User {
				t.Fatalf("database/sql as the superuser: %q %v", who, err)
			}
			// The superuser's password is an md5 hash before PostgreSQL 14
			// (initdb's password_encryption), so the wire client's md5
			// exchange was the one tested above.
			var method string
			if err := db.QueryRowContext(ctx, "SELECT left(rolpassword, 3) FROM pg_authid WHERE rolname = current_user").Scan(&method); err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"10": "md5", "18": "SCR"}[major]; method != want {
				t.Errorf("superuser password stored as %q..., want %q...", method, want)
			}
			testPostgresWireTLS(t, *sb, v.TLSCA)
		})
	}
}
