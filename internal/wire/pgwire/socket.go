package pgwire

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"time"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// waitSlice bounds each blocking read and write on a raw socket, as in
// package mysqlwire (its waitSlice explains the choice): the system calls
// are raw, so a waiting worker keeps its goroutine's P like a C client
// keeps its thread, and every waitSlice the call comes back to Go code so
// that a preemption request or a stop-the-world waits at most that long.
const waitSlice = rawsock.WaitSlice

// address resolves cfg's address.
func address(ctx context.Context, cfg Config) (int, syscall.Sockaddr, error) {
	return rawsock.Address(ctx, cfg.Socket, cfg.Addr)
}

// dialRaw opens a blocking socket to cfg's address, connected by deadline
// or until stop reports true.
func dialRaw(ctx context.Context, cfg Config, deadline time.Time, stop func() bool) (int, error) {
	domain, sa, err := address(ctx, cfg)
	if err != nil {
		return -1, err
	}
	fd, err := syscall.Socket(domain, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := setTimeouts(fd, waitSlice); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if err := connectSocket(fd, sa, deadline, stop); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if domain != syscall.AF_UNIX {
		if err := setTCPOptions(fd); err != nil {
			syscall.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// connectSocket connects fd to sa (rawsock.Connect), by deadline or until
// stop reports true (ErrClosed).
func connectSocket(fd int, sa syscall.Sockaddr, deadline time.Time, stop func() bool) error {
	err := rawsock.Connect(fd, sa, deadline, stop, syscall.Connect)
	if err == rawsock.ErrStopped {
		return ErrClosed
	}
	return err
}

// setTCPOptions sets TCP_NODELAY and the keep-alive.
func setTCPOptions(fd int) error { return rawsock.SetTCPOptions(fd) }

// setTimeouts bounds each read and write of fd.
func setTimeouts(fd int, d time.Duration) error { return rawsock.SetTimeouts(fd, d) }

// waited filters the error of a raw read or write: nil for a signal or an
// elapsed waitSlice (or, on a non-blocking socket, nothing to do yet)
// before the deadline (the caller waits and tries again),
// ErrClosed after Abort, ETIMEDOUT at the deadline (which aborts).
func (c *Conn) waited(err error) error {
	switch {
	case err == nil:
		return nil
	case c.stopped():
		return ErrClosed
	case err == syscall.EINTR:
		return nil
	case err == syscall.EAGAIN:
		if c.deadline.IsZero() || time.Now().Before(c.deadline) {
			return nil
		}
		c.Abort()
		return syscall.ETIMEDOUT
	}
	return err
}

// sysWrite sends all of b on the socket.
func (c *Conn) sysWrite(b []byte) error {
	if c.nc != nil {
		if !c.deadline.IsZero() {
			_ = c.nc.SetWriteDeadline(c.deadline)
		}
		_, err := c.nc.Write(b)
		if err != nil {
			return c.ioError("write", err)
		}
		return nil
	}
	for len(b) > 0 {
		n, err := rawsock.Send(c.fd, b)
		if n > 0 {
			b = b[n:]
		}
		again := err == syscall.EAGAIN
		if err = c.waited(err); err != nil {
			return c.ioError("write", err)
		}
		if again && c.wait != nil {
			rawsock.AwaitWritable(c.fd)
		}
	}
	return nil
}

// sysRead reads at least one byte from the socket into b.
func (c *Conn) sysRead(b []byte) (int, error) {
	if c.nc != nil {
		if !c.deadline.IsZero() {
			_ = c.nc.SetReadDeadline(c.deadline)
		}
		n, err := c.nc.Read(b)
		if n > 0 {
			return n, nil
		}
		if err == nil {
			err = syscall.ECONNRESET
		}
		return 0, c.ioError("read", err)
	}
	if c.wait != nil && c.drained {
		c.wait.Wait(c.fd)
	}
	for {
		if c.stopped() {
			return 0, ErrClosed
		}
		n, err := rawsock.Recv(c.fd, b)
		if err == nil && n == 0 {
			err = syscall.ECONNRESET // end of stream
		}
		again := err == syscall.EAGAIN
		if err = c.waited(err); err != nil {
			return 0, c.ioError("read", err)
		}
		if n > 0 {
			c.drained = n < len(b)
			return n, nil
		}
		if again && c.wait != nil {
			c.wait.Wait(c.fd)
		}
	}
}

// ioError wraps a socket error as a *net.OpError, the way callers recognise
// a lost connection; an aborted connection reports ErrClosed, except for
// the timeout that aborted it.
func (c *Conn) ioError(op string, err error) error {
	if c.stopped() && err != syscall.ETIMEDOUT {
		return ErrClosed
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() && c.nc != nil {
		c.Abort()
		return &net.OpError{Op: op, Net: "postgres", Err: syscall.ETIMEDOUT}
	}
	return &net.OpError{Op: op, Net: "postgres", Err: err}
}

// shutdown ends the socket's traffic in both directions, waking a
// blocked read or write (Abort).
func (c *Conn) shutdown() {
	if c.nc != nil {
		if hc, ok := c.nc.(interface{ CloseRead() error }); ok {
			_ = hc.CloseRead()
		}
		if hc, ok := c.nc.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		}
		_ = c.nc.SetDeadline(time.Unix(1, 0))
		return
	}
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
}

// release gives the socket back to the system (Close).
func (c *Conn) release() error {
	if c.nc != nil {
		return c.nc.Close()
	}
	return syscall.Close(c.fd)
}

// waitAbort yields while Abort is between its compare-and-swap and its
// shutdown.
func waitAbort() { runtime.Gosched() }
