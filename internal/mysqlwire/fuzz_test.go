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

// replay returns a Conn that reads data and then the end of the stream, and
// whose writes go to /dev/null.
func replay(t *testing.T, data []byte) *Conn {
	t.Helper()
	fd, err := syscall.Open("/dev/null", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	c := &Conn{fd: fd, rbuf: make([]byte, max(len(data), 16)), wbuf: make([]byte, 4, 64)}
	c.rend = copy(c.rbuf, data)
	return c
}

// FuzzReadPacket: the packet reader splits any stream into packets no
// longer than the stream, and ends with an error.
func FuzzReadPacket(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c := replay(t, data)
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
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cfg := range []Config{
			{User: "u", Password: "secret", Database: "d"},
			{User: "u"},
		} {
			_ = replay(t, data).handshake(cfg)
		}
	})
}

// FuzzReply: the reply to a statement (OK, ERR, result sets, several of
// them) and to COM_STMT_PREPARE.
func FuzzReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = replay(t, data).result()
		if s, err := replay(t, data).Prepare("SELECT ?"); err == nil && s.NumParams() < 0 {
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
