package dialect_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// tlsSandbox starts a --tls sandbox of flavor and returns its target and CA.
func tlsSandbox(t *testing.T, flavor target.Flavor) (sandboxtest.Sandbox, string) {
	t.Helper()
	sb := sandboxtest.StartNamed(t, flavor, func(s *sandbox.Spec) { s.TLS = true })
	v, err := sb.Manager.Get(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	if v.TLSCA == "" {
		t.Fatal("a TLS sandbox shows no CA")
	}
	return *sb, v.TLSCA
}

// otherCA writes a CA certificate that signed nothing the server has.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func withParams(tgt target.Target, kv ...string) target.Target {
	tgt.Params = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		tgt.Params[kv[i]] = kv[i+1]
	}
	return tgt
}

func tlsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// open opens tgt with its dialect, one connection, closed at the end.
func open(t *testing.T, tgt target.Target) *sql.DB {
	t.Helper()
	d, err := For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, OpenOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sessionCipher is the TLS cipher of the session ("" when plain), as the
// server sees it.
func sessionCipher(ctx context.Context, db *sql.DB, family target.Family) (string, error) {
	if family == target.Postgres {
		var cipher sql.NullString
		err := db.QueryRowContext(ctx, "SELECT cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&cipher)
		return cipher.String, err
	}
	var name, cipher string
	err := db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
	return cipher, err
}

// oneLine fails the test if err is nil or spans lines, and returns its text.
func oneLine(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		t.Fatal("connected, want an error")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error spans lines: %q", err)
	}
	return err.Error()
}

// TestTLSVerifyFull: both flavors' database/sql paths, and mysqlwire,
// reach a --tls
// sandbox with the sandbox's CA and verify-full (the session is
// encrypted), and a wrong CA fails with a one-line error.
func TestTLSVerifyFull(t *testing.T) {
	cases := []struct {
		flavor       target.Flavor
		good, wrong  func(ca string) []string
		wrongMessage string
	}{
		{target.FlavorMariaDB,
			func(ca string) []string { return []string{"tls", "true", "tls-ca", ca} },
			func(ca string) []string { return []string{"tls-ca", ca} },
			"certificate signed by unknown authority"},
		{target.FlavorPostgres,
			func(ca string) []string { return []string{"sslmode", "verify-full", "sslrootcert", ca} },
			func(ca string) []string { return []string{"sslmode", "verify-full", "sslrootcert", ca} },
			"certificate signed by unknown authority"},
	}
	for _, c := range cases {
		t.Run(string(c.flavor), func(t *testing.T) {
			sb, ca := tlsSandbox(t, c.flavor)
			ctx := tlsCtx(t)
			db := open(t, withParams(sb.Target, c.good(ca)...))
			cipher, err := sessionCipher(ctx, db, c.flavor.Family())
			if err != nil {
				t.Fatal(err)
			}
			if cipher == "" {
				t.Fatal("verify-full session is not encrypted")
			}
			plain := open(t, sb.Target)
			if cipher, err := sessionCipher(ctx, plain, c.flavor.Family()); err != nil || cipher != "" {
				t.Fatalf("no TLS parameters: cipher %q, %v; want a plain session", cipher, err)
			}
			err = open(t, withParams(sb.Target, c.wrong(otherCA(t))...)).PingContext(ctx)
			if msg := oneLine(t, err); !strings.Contains(msg, c.wrongMessage) {
				t.Fatalf("wrong CA: %q, want %q", msg, c.wrongMessage)
			}
			if c.flavor.Family() == target.MySQL {
				t.Run("wire", func(t *testing.T) { testMySQLWireTLS(t, sb, ca) })
			} else {
				t.Run("wire", func(t *testing.T) { testPostgresWireTLS(t, sb, ca) })
			}
		})
	}
}

// testMySQLWireTLS: the lean wire client speaks TLS to a --tls sandbox
// (verify-full with the sandbox's CA): an account that requires SSL logs
// in, prepared and plain statements and a result over many TLS records
// work; a wrong CA fails with a one-line error.
func testMySQLWireTLS(t *testing.T, sb sandboxtest.Sandbox, ca string) {
	ctx := tlsCtx(t)
	sv, err := sb.Manager.Get(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	admin := open(t, sv.AdminTarget())
	const pw = "tls-only-pw-1"
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS 'tlsonly'@'127.0.0.1' IDENTIFIED BY '" + pw + "' REQUIRE SSL",
		"GRANT SELECT ON *.* TO 'tlsonly'@'127.0.0.1'",
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tgt := withParams(sb.Target, "tls", "true", "tls-ca", ca)
	tgt.User, tgt.Password = "tlsonly", pw
	d := MySQLDialect{}
	if !d.WireSupported(tgt) {
		t.Fatal("TLS parameters send the target to the driver")
	}
	c, err := d.DialWire(ctx, tgt, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.TLS() {
		t.Fatal("wire connection is not encrypted")
	}
	if err := c.Query("SELECT REPEAT('x', 200000), ?", []any{int64(1)}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Prepare("SELECT ? + 1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := st.Query([]any{int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Abort ends a statement waiting under TLS.
	done := make(chan error, 1)
	go func() { done <- c.Query("SELECT SLEEP(120)", nil) }()
	c.Abort()
	if err := <-done; !errors.Is(err, mysqlwire.ErrClosed) {
		t.Fatalf("aborted TLS statement: %v, want ErrClosed", err)
	}
	// Without TLS the account is refused: TLS above was real.
	plain := tgt
	plain.Params = nil
	if _, err := d.DialWire(ctx, plain, OpenOptions{}); err == nil {
		t.Fatal("REQUIRE SSL account logged in without TLS")
	}
	_, err = d.DialWire(ctx, withParams(sb.Target, "tls-ca", otherCA(t)), OpenOptions{})
	if msg := oneLine(t, err); !strings.Contains(msg, "certificate signed by unknown authority") {
		t.Fatalf("wrong CA: %q", msg)
	}
	if k := d.Classify(err).Kind; k != Fatal {
		t.Fatalf("wrong CA classified %v, want fatal (not a lost connection to retry)", k)
	}
}

// TestTLSRequiredPlainServer: tls=true (sslmode=require) against a server
// without TLS fails with a one-line error on every path; tls=preferred
// (sslmode=prefer) connects in plain text.
func TestTLSRequiredPlainServer(t *testing.T) {
	ctx := tlsCtx(t)
	my := sandboxtest.Start(t, target.FlavorMariaDB)
	pg := sandboxtest.Start(t, target.FlavorPostgres)
	err := open(t, withParams(my, "tls", "skip-verify")).PingContext(ctx)
	if msg := oneLine(t, err); !strings.Contains(msg, "TLS") {
		t.Fatalf("driver: %q does not name TLS", msg)
	}
	_, err = MySQLDialect{}.DialWire(ctx, withParams(my, "tls", "true"), OpenOptions{})
	if msg := oneLine(t, err); !strings.Contains(msg, "TLS") {
		t.Fatalf("wire: %q does not name TLS", msg)
	}
	if k := (MySQLDialect{}).Classify(err).Kind; k != Fatal {
		t.Fatalf("wire: no TLS classified %v, want fatal", k)
	}
	err = open(t, withParams(pg, "sslmode", "require")).PingContext(ctx)
	if msg := oneLine(t, err); !strings.Contains(msg, "TLS") {
		t.Fatalf("postgres: %q does not name TLS", msg)
	}

	for _, tgt := range []target.Target{withParams(my, "tls", "preferred"), withParams(pg, "sslmode", "prefer")} {
		db := open(t, tgt)
		if cipher, err := sessionCipher(ctx, db, tgt.Family()); err != nil || cipher != "" {
			t.Fatalf("%s preferred: cipher %q, %v; want a plain session", tgt.Flavor, cipher, err)
		}
	}
	c, err := MySQLDialect{}.DialWire(ctx, withParams(my, "tls", "preferred"), OpenOptions{})
	if err != nil {
		t.Fatalf("wire, tls=preferred: %v", err)
	}
	defer c.Close()
	if c.TLS() {
		t.Fatal("wire, tls=preferred: encrypted against a server without TLS")
	}
}

// TestTLSParams: bad TLS parameters are one-line errors naming them.
func TestTLSParams(t *testing.T) {
	tgt := target.Target{Flavor: target.FlavorMariaDB, Host: "127.0.0.1", Port: 1}
	missing := filepath.Join(t.TempDir(), "nope.pem")
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"tls", "maybe"}, "tls=\"maybe\""},
		{[]string{"tls-ca", missing}, "tls-ca"},
		{[]string{"tls-ca", notPEM}, "no PEM certificate"},
		{[]string{"tls", "true", "tls-cert", notPEM}, "tls-key"},
		{[]string{"tls", "true", "tls-cert", notPEM, "tls-key", notPEM}, "tls-cert/tls-key"},
	} {
		_, _, err := MySQLTLS(withParams(tgt, c.kv...))
		if msg := oneLine(t, err); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want %q", c.kv, msg, c.want)
		}
		if _, err := (MySQLDialect{}).Open(withParams(tgt, c.kv...), OpenOptions{}); err == nil {
			t.Errorf("%v: Open accepted it", c.kv)
		}
	}
	pgt := target.Target{Flavor: target.FlavorPostgres, Host: "127.0.0.1", Port: 1}
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"sslmode", "always"}, "sslmode=\"always\""},
		{[]string{"sslmode", "verify-full", "sslrootcert", missing}, "nope.pem"},
	} {
		_, err := PostgresDialect{}.Config(withParams(pgt, c.kv...), OpenOptions{})
		if msg := oneLine(t, err); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want %q", c.kv, msg, c.want)
		}
	}
	// TLS parameters are not session variables.
	cfg := MySQLDialect{}.Config(withParams(tgt, "tls", "true", "tls-ca", notPEM, "sql_mode", "ANSI"), OpenOptions{})
	if len(cfg.Params) != 1 || cfg.Params["sql_mode"] != "ANSI" {
		t.Errorf("driver session variables %v, want only sql_mode", cfg.Params)
	}
	pc, err := PostgresDialect{}.Config(withParams(pgt, "sslmode", "disable", "application_name", "x"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pc.RuntimeParams["sslmode"]; ok || pc.RuntimeParams["application_name"] != "x" {
		t.Errorf("runtime parameters %v", pc.RuntimeParams)
	}
}

// FuzzMySQLTLS: any tls= value is accepted or refused in one line, never a panic.
func FuzzMySQLTLS(f *testing.F) {
	for _, s := range []string{"true", "false", "skip-verify", "preferred", "", "TRUE", "maybe", "verify-full"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, mode string) {
		tgt := target.Target{Flavor: target.FlavorMariaDB, Host: "h", Params: map[string]string{"tls": mode}}
		cfg, preferred, err := MySQLTLS(tgt)
		if err != nil {
			if cfg != nil || strings.Contains(err.Error(), "\n") && !strings.Contains(mode, "\n") {
				t.Fatalf("%q: %v with a config", mode, err)
			}
			return
		}
		if preferred && cfg == nil {
			t.Fatalf("%q: preferred without a TLS config", mode)
		}
	})
}

// BenchmarkMySQLWireTLS compares point selects (prepared, one row) of the
// lean wire client over plain TCP and over TLS (verify-full) on a --tls
// sandbox; cpu-ns/op is the client process's user+system CPU per query.
func BenchmarkMySQLWireTLS(b *testing.B) {
	sb := sandboxtest.StartNamed(b, target.FlavorMariaDB, func(s *sandbox.Spec) { s.TLS = true })
	v, err := sb.Manager.Get(sb.Name)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tgt  target.Target
	}{{"plain", sb.Target}, {"tls", withParams(sb.Target, "tls", "true", "tls-ca", v.TLSCA)}} {
		b.Run(c.name, func(b *testing.B) {
			conn, err := MySQLDialect{}.DialWire(context.Background(), c.tgt, OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			st, err := conn.Prepare("SELECT ?, REPEAT('x', 120)")
			if err != nil {
				b.Fatal(err)
			}
			args := []any{int64(0)}
			before := cpuTime()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				args[0] = int64(i)
				if err := st.Query(args); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// FuzzPostgresTLSParams: any host and sslrootcert are quoted for pgx's
// parser: with sslmode=disable the connection stays plain and on the
// target's host, never a panic.
func FuzzPostgresTLSParams(f *testing.F) {
	f.Add("127.0.0.1", "/tmp/ca.pem")
	f.Add("db.example.com", `it's a \ path`)
	f.Add("a,b", "x y")
	f.Fuzz(func(t *testing.T, host, rootcert string) {
		tgt := target.Target{Flavor: target.FlavorPostgres, Host: host, Port: 5432,
			Params: map[string]string{"sslmode": "disable", "sslrootcert": rootcert}}
		cfg, err := PostgresDialect{}.Config(tgt, OpenOptions{})
		if err != nil {
			return
		}
		if cfg.TLSConfig != nil || cfg.Host != host && !strings.ContainsAny(host, ",") {
			t.Fatalf("host %q: TLS %v, host %q", host, cfg.TLSConfig != nil, cfg.Host)
		}
		for _, fb := range cfg.Fallbacks {
			if fb.Host != cfg.Host || fb.TLSConfig != nil {
				t.Fatalf("host %q: fall-back to %q (TLS %v)", host, fb.Host, fb.TLSConfig != nil)
			}
		}
	})
}
