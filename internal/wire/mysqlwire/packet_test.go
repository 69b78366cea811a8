package mysqlwire

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// TestLongPacket feeds a payload split over maxPayload-sized packets
// through a socket pair: the reader reassembles it.
func TestLongPacket(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[1])
	// Both ends wait a waitSlice at a time, as connected Conns do: a
	// garbage collection that stops the world while one end waits for the
	// other must not deadlock.
	for _, fd := range fds {
		if err := rawsock.SetTimeouts(fd, waitSlice); err != nil {
			t.Fatal(err)
		}
	}
	c := newConn(fds[0])
	defer c.Close()
	want := bytes.Repeat([]byte("0123456789abcdef"), (maxPayload+1000)/16)
	go func() {
		w := newConn(fds[1])
		w.wbuf = append(w.wbuf[:4], want...)
		_ = w.writePacket()
		w.wbuf = append(w.wbuf[:4], "next"...)
		_ = w.writePacket()
	}()
	got, err := c.readPacket()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("reassembled %d bytes, want %d", len(got), len(want))
	}
	got, err = c.readPacket()
	if err != nil || string(got) != "next" {
		t.Fatalf("packet after the long one = %q, %v", got, err)
	}
}

func TestLenenc(t *testing.T) {
	for _, n := range []uint64{0, 250, 251, 1<<16 - 1, 1 << 16, 1<<24 - 1, 1 << 24, 1 << 40} {
		r := reader{b: appendLenenc(nil, n)}
		if got := r.lenenc(); got != n || r.err || len(r.b) != 0 {
			t.Errorf("lenenc %d round trip = %d (err %v, %d left)", n, got, r.err, len(r.b))
		}
	}
	r := reader{b: []byte{0xfc, 1}}
	if r.lenenc(); !r.err {
		t.Error("short lenenc not detected")
	}
}
