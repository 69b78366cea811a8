package rawsock

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

var errTestClosed = errors.New("test: closed")

// pair returns a Socket on one end of a Unix socket pair, whose reads and
// writes wait a WaitSlice at a time as a dialled Socket's do, and the
// other end's descriptor, both closed when the test ends.
func pair(t *testing.T) (*Socket, int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if err := SetTimeouts(fd, WaitSlice); err != nil {
			t.Fatal(err)
		}
	}
	s := &Socket{}
	s.Open(fds[0], nil, 8, "testwire", "test", errTestClosed)
	t.Cleanup(func() { s.Close(); syscall.Close(fds[1]) })
	return s, fds[1]
}

// outcome waits for a call that runs in the background, bounded (not a
// speed the test asserts).
func outcome(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end")
		return nil
	}
}

// TestSocketFillGrows: Fill keeps the unread bytes, moves them to the
// start of Buf and doubles Buf when they fill it; Write sends all.
func TestSocketFillGrows(t *testing.T) {
	s, peer := pair(t)
	if _, err := syscall.Write(peer, []byte("0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	for s.End-s.Pos < 16 {
		if err := s.Fill(); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(s.Buf[s.Pos:s.End]); got != "0123456789abcdef" || len(s.Buf) < 16 {
		t.Fatalf("buffered %q in %d bytes", got, len(s.Buf))
	}
	s.Pos += 10
	if _, err := syscall.Write(peer, []byte("XY")); err != nil {
		t.Fatal(err)
	}
	if err := s.Fill(); err != nil {
		t.Fatal(err)
	}
	if got := string(s.Buf[s.Pos:s.End]); s.Pos != 0 || got != "abcdefXY" {
		t.Fatalf("after consuming 10: Pos %d, unread %q", s.Pos, got)
	}
	if err := s.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	if n, err := syscall.Read(peer, b); err != nil || string(b[:n]) != "hello" {
		t.Fatalf("peer read %q, %v", b[:n], err)
	}
}

// TestSocketAbortWakesRead: Abort from another goroutine ends a read that
// waits for the server with the client's closed error, runs OnAbort once,
// and later calls fail at once; Close after Abort runs OnClose once.
func TestSocketAbortWakesRead(t *testing.T) {
	s, _ := pair(t)
	aborts, closes := 0, 0
	s.OnAbort(func() { aborts++ })
	s.OnClose(func() { closes++ })
	done := make(chan error, 1)
	go func() { done <- s.Fill() }()
	time.Sleep(3 * WaitSlice) // the read waits, a slice at a time
	if !s.Abort() {
		t.Fatal("the first Abort did not abort")
	}
	if s.Abort() {
		t.Fatal("a second Abort aborted again")
	}
	if err := outcome(t, done); !errors.Is(err, errTestClosed) {
		t.Fatalf("aborted read = %v, want the client's closed error", err)
	}
	if err := s.Write([]byte("x")); !errors.Is(err, errTestClosed) {
		t.Fatalf("write after Abort = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if aborts != 1 || closes != 1 {
		t.Fatalf("OnAbort ran %d times, OnClose %d, want 1 and 1", aborts, closes)
	}
	if s.Abort() {
		t.Fatal("Abort after Close aborted")
	}
}

// TestSocketDeadline: a read still waiting at the deadline fails with a
// timeout (*net.OpError naming the client's network, ETIMEDOUT) and
// aborts the Socket.
func TestSocketDeadline(t *testing.T) {
	s, _ := pair(t)
	aborted := false
	s.OnAbort(func() { aborted = true })
	s.Deadline = time.Now().Add(2 * WaitSlice)
	done := make(chan error, 1)
	go func() { done <- s.Fill() }()
	err := outcome(t, done)
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Net != "test" || oe.Op != "read" || !errors.Is(err, syscall.ETIMEDOUT) || !oe.Timeout() {
		t.Fatalf("read past the deadline = %#v, want a read timeout", err)
	}
	if !aborted || !s.Stopped() {
		t.Fatal("the timeout did not abort the Socket")
	}
}

// TestSocketEndOfStream: the server closing the connection is a lost
// connection (ECONNRESET), not a closed Socket.
func TestSocketEndOfStream(t *testing.T) {
	s, peer := pair(t)
	if err := syscall.Shutdown(peer, syscall.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	err := s.Fill()
	var oe *net.OpError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read at end of stream = %v, want ECONNRESET", err)
	}
}

// TestSocketFillNow: FillNow on a non-blocking socket reads what is there
// and reports false, without waiting, when nothing is.
func TestSocketFillNow(t *testing.T) {
	s, peer := pair(t)
	if err := syscall.SetNonblock(s.Fd(), true); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.FillNow(); ok || err != nil {
		t.Fatalf("FillNow on an empty socket = %v, %v", ok, err)
	}
	if _, err := syscall.Write(peer, []byte("ab")); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.FillNow(); !ok || err != nil || string(s.Buf[s.Pos:s.End]) != "ab" {
		t.Fatalf("FillNow = %v, %v, buffered %q", ok, err, s.Buf[s.Pos:s.End])
	}
}
