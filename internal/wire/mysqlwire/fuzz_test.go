package mysqlwire

import (
	"syscall"
	"testing"
)

// The fuzz targets feed what a server might send through the client's
// readers and parsers: whatever the bytes, they return (an error when the
// bytes are wrong), never panic and never wait. Seeds: testdata/fuzz, packets
// captured from a MariaDB sandbox (TestCaptureSeeds writes them again) and
// edge cases.

// devNull returns a socket that stands in for /dev/null in the fuzz
// targets' replays (the client talks with send(2) and recv(2), which want a
// socket): reading it gives the end of the stream at once, writing it
// succeeds (a goroutine drains the other end).
func devNull(tb testing.TB) int {
	tb.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Shutdown(fds[1], syscall.SHUT_WR); err != nil {
		tb.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		b := make([]byte, 64<<10)
		for {
			n, err := syscall.Read(fds[1], b)
			if n <= 0 && err != syscall.EINTR {
				return // fds[0] closed
			}
		}
	}()
	tb.Cleanup(func() {
		syscall.Close(fds[0])
		<-drained
		syscall.Close(fds[1])
	})
	return fds[0]
}

// replay returns a Conn on null (devNull) that reads data and then the
// end of the stream, and whose writes are lost. It is never closed.
func replay(null int, data []byte) *Conn {
	c := &Conn{wbuf: make([]byte, 4, 64)}
	c.s.Open(null, nil, max(len(data), 16), "mysqlwire", "mysql", ErrClosed)
	c.s.End = copy(c.s.Buf, data)
	return c
}

// FuzzReadPacket: the packet reader splits any stream into packets no
// longer than the stream, and ends with an error.
func FuzzReadPacket(f *testing.F) {
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := replay(null, data)
		total := 0
		for {
			p, err := c.readPacket()
			if err != nil {
				break
			}
			total += 4 + len(p)
			if total > len(data) {
				t.Fatalf("read %d bytes from a %d-byte stream", total, len(data))
			}
		}
	})
}

// FuzzHandshake: the greeting and the authentication replies.
func FuzzHandshake(f *testing.F) {
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cfg := range []Config{
			{User: "u", Password: "secret", Database: "d"},
			{User: "u"},
		} {
			_ = replay(null, data).handshake(cfg)
		}
	})
}

// FuzzReply: the reply to a statement (OK, ERR, result sets, several of
// them) and to COM_STMT_PREPARE.
func FuzzReply(f *testing.F) {
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = replay(null, data).result()
		if s, err := replay(null, data).Prepare("SELECT ?"); err == nil && s.NumParams() < 0 {
			t.Fatalf("%d parameters", s.NumParams())
		}
	})
}

// FuzzPacket: one OK, ERR or EOF payload.
func FuzzPacket(f *testing.F) {
	f.Fuzz(func(t *testing.T, p []byte) {
		c := &Conn{}
		c.readOK(p)
		err := parseError(p).(*Error)
		if n := len(err.SQLState); n != 0 && n != 5 {
			t.Fatalf("SQL state %q", err.SQLState)
		}
		if isEOF(p) {
			_ = eofStatus(p)
		}
	})
}

// FuzzRows: result sets read row by row in the binary and the text
// protocol, with and without metadata caching, every value read in every
// way.
func FuzzRows(f *testing.F) {
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		read := func(r *Row) error {
			for i := range r.Len() {
				_ = r.IsNull(i)
				if b := r.Bytes(i); len(b) > len(data) {
					t.Fatalf("a %d-byte value from a %d-byte stream", len(b), len(data))
				}
				_, _ = r.Int64(i)
				_, _ = r.Float64(i)
			}
			return nil
		}
		_ = replay(null, data).QueryFunc("SELECT 1", nil, read)
		_ = (&Stmt{c: replay(null, data)}).QueryFunc(nil, read)
		// MariaDB's metadata caching: column counts carry a flag, and
		// result sets may leave out the definitions the statement kept.
		mc := replay(null, data)
		mc.cacheMeta = true
		_ = (&Stmt{c: mc, cols: []column{{typ: 0xfd}}}).QueryFunc(nil, read)
		mc = replay(null, data)
		mc.cacheMeta = true
		_ = mc.QueryFunc("SELECT 1", nil, read)
	})
}
