package mysqlwire

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// frozen returns a Conn to a 127.0.0.1 server that accepts, reads the first
// n bytes it is sent, closes got, and then neither reads nor answers, as a
// stopped (SIGSTOP) server. No handshake: the Conn is as after Dial.
func frozen(t *testing.T, n int) (*Conn, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got, stop := make(chan struct{}), make(chan struct{})
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		if _, err := io.ReadFull(s, make([]byte, n)); err == nil {
			close(got)
		}
		<-stop
	}()
	t.Cleanup(func() { close(stop); ln.Close() })
	_, sa, err := address(context.Background(), Config{Addr: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	fd, err := rawsock.NewSocket(syscall.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(fd)
	t.Cleanup(func() { c.Close() })
	if err := rawsock.Connect(fd, sa, time.Now().Add(10*time.Second), c.stopped, syscall.Connect); err != nil {
		t.Fatal(err)
	}
	return c, got
}

// wait returns the outcome of a call, failing the test if it does not end:
// bounded, though not by a speed the test asserts.
func wait(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after 30 s", what)
		return nil
	}
}

// A frozen server never answers; Abort ends the read that waits for it.
func TestAbortWakesBlockedRead(t *testing.T) {
	const q = "SELECT 1"
	c, got := frozen(t, 4+1+len(q))
	done := make(chan error, 1)
	go func() { done <- c.Query(q, nil) }()
	<-got
	time.Sleep(100 * time.Millisecond) // most likely in read(2) by now; either way the outcome is the same
	c.Abort()
	if err := wait(t, done, "read after Abort"); !errors.Is(err, ErrClosed) {
		t.Fatalf("read aborted = %v, want ErrClosed", err)
	}
}

// A frozen server stops reading; Abort ends the write that waits for room.
func TestAbortWakesBlockedWrite(t *testing.T) {
	c, got := frozen(t, 4)
	done := make(chan error, 1)
	big := strings.Repeat("x", 20<<20) // more than the sockets' buffers hold
	go func() { done <- c.Query("SELECT ?", []any{big}) }()
	<-got
	time.Sleep(100 * time.Millisecond)
	c.Abort()
	if err := wait(t, done, "write after Abort"); !errors.Is(err, ErrClosed) {
		t.Fatalf("write aborted = %v, want ErrClosed", err)
	}
}

// SetDeadline ends a read or a write that a frozen server leaves waiting,
// with a timeout, and leaves the Conn aborted.
func TestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name string
		arg  string
	}{
		{"read", "1"},
		{"write", strings.Repeat("x", 20<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := frozen(t, 4)
			c.SetDeadline(time.Now().Add(200 * time.Millisecond))
			done := make(chan error, 1)
			go func() { done <- c.Query("SELECT ?", []any{tc.arg}) }()
			err := wait(t, done, "call past its deadline")
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, syscall.ETIMEDOUT) {
				t.Fatalf("call past its deadline = %v, want a timeout", err)
			}
			if err := c.Query("SELECT 1", nil); !errors.Is(err, ErrClosed) {
				t.Fatalf("call after a timeout = %v, want ErrClosed", err)
			}
		})
	}
}

// DialContext gives up when its context ends, while connecting (the
// server's accept queue is full, so its SYNs are dropped) and during the
// handshake (the server accepts and never greets).
func TestDialContextCancel(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, tc := range []struct {
		name string
		addr net.Addr
	}{
		{"connect", fullBacklog(t)},
		{"handshake", silent.Addr()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				c, err := DialContext(ctx, Config{Addr: tc.addr.String(), User: "x", Timeout: time.Hour})
				if err == nil {
					c.Close()
				}
				done <- err
			}()
			time.Sleep(200 * time.Millisecond) // most likely waiting by now; either way the outcome is the same
			cancel()
			if err := wait(t, done, "DialContext after cancel"); !errors.Is(err, context.Canceled) {
				t.Fatalf("DialContext cancelled = %v, want context.Canceled", err)
			}
		})
	}
}
