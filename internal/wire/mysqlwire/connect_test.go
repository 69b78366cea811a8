package mysqlwire

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// interruptedConnect leaves fd as a signal leaves an interrupted blocking
// connect(2): the TCP handshake under way in the kernel, EINTR returned.
func interruptedConnect(fd int, sa syscall.Sockaddr) error {
	if err := syscall.SetNonblock(fd, true); err != nil {
		return err
	}
	err := syscall.Connect(fd, sa)
	if err := syscall.SetNonblock(fd, false); err != nil {
		return err
	}
	if err != nil && err != syscall.EINPROGRESS {
		return err
	}
	return syscall.EINTR
}

// never is a stop function that never stops.
func never() bool { return false }

// tcpSocket returns a blocking TCP socket, closed when the test ends, and
// the address of addr.
func tcpSocket(t *testing.T, addr net.Addr) (int, syscall.Sockaddr) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := rawsock.SetTimeouts(fd, time.Second); err != nil {
		t.Fatal(err)
	}
	a := addr.(*net.TCPAddr)
	sa := &syscall.SockaddrInet4{Port: a.Port}
	copy(sa.Addr[:], a.IP.To4())
	return fd, sa
}

// TestConnectAfterEINTR: an interrupted connect is waited for, not called
// again (which Linux answers with EALREADY), and the connection works.
func TestConnectAfterEINTR(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(io.LimitReader(c, 4))
		got <- string(b)
	}()
	fd, sa := tcpSocket(t, ln.Addr())
	if err := rawsock.Connect(fd, sa, time.Now().Add(10*time.Second), never, interruptedConnect); err != nil {
		t.Fatalf("connect interrupted by a signal = %v", err)
	}
	if _, err := syscall.Write(fd, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "ping" {
		t.Fatalf("server read %q, want ping", s)
	}
}

// TestConnectAfterEINTRRefused: the outcome of the connection under way is
// the error of the connect.
func TestConnectAfterEINTRRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr()
	ln.Close()
	fd, sa := tcpSocket(t, addr)
	err = rawsock.Connect(fd, sa, time.Now().Add(10*time.Second), never, interruptedConnect)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("interrupted connect to a closed port = %v, want ECONNREFUSED", err)
	}
}

// TestConnectAfterEINTRTimeout: a connection that never completes (the
// server's accept queue is full, so its SYNs are dropped) ends at the
// deadline.
func TestConnectAfterEINTRTimeout(t *testing.T) {
	addr := fullBacklog(t)
	fd, sa := tcpSocket(t, addr)
	err := rawsock.Connect(fd, sa, time.Now().Add(300*time.Millisecond), never, interruptedConnect)
	if !errors.Is(err, syscall.ETIMEDOUT) {
		t.Fatalf("connect to a full accept queue = %v, want ETIMEDOUT", err)
	}
}

// fullBacklog returns the address of a 127.0.0.1 server whose accept
// queue is full: a new connection's SYNs are dropped and it never
// completes.
func fullBacklog(t *testing.T) net.Addr {
	t.Helper()
	lfd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(lfd) })
	if err := syscall.Bind(lfd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(lfd, 0); err != nil {
		t.Fatal(err)
	}
	lsa, err := syscall.Getsockname(lfd)
	if err != nil {
		t.Fatal(err)
	}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: lsa.(*syscall.SockaddrInet4).Port}
	// Fill the accept queue, never accepted.
	for range 4 {
		fd, sa := tcpSocket(t, addr)
		_ = rawsock.Connect(fd, sa, time.Now().Add(100*time.Millisecond), never, interruptedConnect)
	}
	return addr
}
