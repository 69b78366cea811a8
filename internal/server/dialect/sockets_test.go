package dialect_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	. "github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// listen returns a 127.0.0.1 listener whose accepted connections are kept
// open (and read until closed) until the test ends.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln
}

// TestSocketsForgetClosed: a connection leaves the set when it is closed,
// so the set never grows past the connections open at once.
func TestSocketsForgetClosed(t *testing.T) {
	ln := listen(t)
	s := NewSockets()
	for round := range 3 {
		var conns []net.Conn
		for range 20 {
			c, err := s.Dial(context.Background(), "tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		if n := s.Len(); n != 20 {
			t.Fatalf("round %d: %d connections recorded, want 20", round, n)
		}
		for _, c := range conns {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.Len(); n != 0 {
			t.Fatalf("round %d: %d connections recorded after closing all, want 0", round, n)
		}
	}

	// CloseAll closes what is open, and empties the set.
	c, err := s.Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s.CloseAll()
	if n := s.Len(); n != 0 {
		t.Fatalf("%d connections recorded after CloseAll", n)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after CloseAll = %v, want net.ErrClosed", err)
	}
	_ = c.Close()

	// Track's forget does the same for connections dialled elsewhere.
	forget := s.Track(io.NopCloser(nil))
	if s.Len() != 1 {
		t.Fatal("Track recorded nothing")
	}
	forget()
	if s.Len() != 0 {
		t.Fatal("forget left the connection recorded")
	}
}

// TestSocketsKeepAlive: Dial's connections probe a silent peer like
// mysqlwire's, and still hand the drivers their descriptor.
func TestSocketsKeepAlive(t *testing.T) {
	ln := listen(t)
	c, err := NewSockets().Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ level, opt, v int }{
		"SO_KEEPALIVE":  {syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		"TCP_KEEPIDLE":  {syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, int(mysqlwire.KeepAliveIdle.Seconds())},
		"TCP_KEEPINTVL": {syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, int(mysqlwire.KeepAliveInterval.Seconds())},
		"TCP_KEEPCNT":   {syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, mysqlwire.KeepAliveCount},
	}
	for name, w := range want {
		var got int
		var gerr error
		if err := rc.Control(func(fd uintptr) { got, gerr = syscall.GetsockoptInt(int(fd), w.level, w.opt) }); err != nil {
			t.Fatal(err)
		}
		if gerr != nil || got != w.v {
			t.Errorf("%s = %d (%v), want %d", name, got, gerr, w.v)
		}
	}
}

// TestSocketsTrackWire: CloseAll aborts a wire connection; a closed wire
// connection is forgotten.
func TestSocketsTrackWire(t *testing.T) {
	tgt := sandboxtest.Start(t, target.FlavorMariaDB)
	s := NewSockets()
	d := MySQLDialect{}
	for range 3 {
		c, err := d.DialWire(context.Background(), tgt, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.TrackWire(c)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("%d closed wire connections recorded, want 0", n)
	}
	c, err := d.DialWire(context.Background(), tgt, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s.TrackWire(c)
	s.CloseAll()
	if err := c.Query("SELECT 1", nil); err == nil {
		t.Fatal("statement after CloseAll succeeded")
	}
}
