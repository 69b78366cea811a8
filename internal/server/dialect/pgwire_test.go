package dialect_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

// testPostgresWireTLS: pgwire follows sslmode on a --tls sandbox:
// verify-full with the sandbox's CA is encrypted (the server says so),
// prepared and plain statements and a result over many TLS records work,
// Abort ends a statement waiting under TLS; disable stays plain, prefer
// encrypts; a wrong CA fails with a one-line fatal error.
func testPostgresWireTLS(t *testing.T, sb sandboxtest.Sandbox, ca string) {
	ctx := tlsCtx(t)
	d := PostgresDialect{}
	ssl := func(c *pgwire.Conn) string {
		t.Helper()
		var on string
		if err := c.QueryFunc("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", nil, func(r *pgwire.Row) error {
			on = string(r.Bytes(0))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return on
	}
	for _, tc := range []struct {
		kv   []string
		want string
	}{
		{[]string{"sslmode", "verify-full", "sslrootcert", ca}, "t"},
		{[]string{"sslmode", "prefer"}, "t"},
		{[]string{"sslmode", "disable"}, "f"},
		{nil, "f"},
	} {
		c, err := d.DialWire(ctx, withParams(sb.Target, tc.kv...), OpenOptions{})
		if err != nil {
			t.Fatalf("%v: %v", tc.kv, err)
		}
		if got := ssl(c); got != tc.want || c.TLS() != (tc.want == "t") {
			t.Errorf("%v: server ssl %q, client TLS %v; want %q", tc.kv, got, c.TLS(), tc.want)
		}
		c.Close()
	}
	c, err := d.DialWire(ctx, withParams(sb.Target, "sslmode", "verify-full", "sslrootcert", ca), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	if err := c.QueryFunc("SELECT repeat('x', 200000), $1::int", []any{1}, func(r *pgwire.Row) error {
		n = len(r.Bytes(0))
		return nil
	}); err != nil || n != 200000 {
		t.Fatalf("long value under TLS: %d bytes, %v", n, err)
	}
	st, err := c.Prepare("SELECT $1::int + 1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := st.Query([]any{i}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- c.Query("SELECT pg_sleep(120)", nil) }()
	c.Abort()
	if err := <-done; !errors.Is(err, pgwire.ErrClosed) {
		t.Fatalf("aborted TLS statement: %v, want ErrClosed", err)
	}
	_, err = d.DialWire(ctx, withParams(sb.Target, "sslmode", "verify-full", "sslrootcert", otherCA(t)), OpenOptions{})
	if msg := oneLine(t, err); !strings.Contains(msg, "certificate signed by unknown authority") {
		t.Fatalf("wrong CA: %q", msg)
	}
	if k := d.Classify(err).Kind; k != Fatal {
		t.Fatalf("wrong CA classified %v, want fatal (not a lost connection to retry)", k)
	}
}

// TestPostgresDialWire: pgwire reaches the sandbox over TCP (SCRAM) and
// over its Unix socket, named by its file or, as libpq's host, by its
// directory; Sockets' CloseAll aborts a statement in flight, and Close
// forgets the connection.
func TestPostgresDialWire(t *testing.T) {
	tgt := sandboxtest.Start(t, target.FlavorPostgres)
	sb, err := sandboxtest.Manager(t).Get("shared-postgres")
	if err != nil {
		t.Fatal(err)
	}
	d := PostgresDialect{}
	ctx := tlsCtx(t)
	sock := tgt
	sock.Host, sock.Socket = "", sb.Socket
	dir := sock
	dir.Socket = filepath.Dir(sb.Socket)
	for name, tt := range map[string]target.Target{"tcp": tgt, "socket file": sock, "socket directory": dir} {
		c, err := d.DialWire(ctx, tt, OpenOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.Exec("SELECT 1", nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.Close()
	}
	s := NewSockets()
	c, err := d.DialWire(ctx, tgt, OpenOptions{Sockets: s})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Query("SELECT pg_sleep(120)", nil) }()
	s.CloseAll()
	if err := <-done; d.Classify(err).Kind != ConnLost {
		t.Fatalf("statement after CloseAll: %v, classified %v", err, d.Classify(err))
	}
	c.Close()
	c, err = d.DialWire(ctx, tgt, OpenOptions{Sockets: s})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 {
		t.Fatalf("%d connections recorded, want 1", s.Len())
	}
	c.Close()
	if s.Len() != 0 {
		t.Fatalf("%d connections recorded after Close, want 0", s.Len())
	}
}
