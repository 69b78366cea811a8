package pgwire

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// waitSlice bounds each blocking read and write on a raw socket, as in
// package mysqlwire (its waitSlice explains the choice): the system calls
// are raw, so a waiting worker keeps its goroutine's P like a C client
// keeps its thread, and every waitSlice the call comes back to Go code so
// that a preemption request or a stop-the-world waits at most that long.
const waitSlice = 20 * time.Millisecond

// TCP keep-alive of every connection, the same as mysqlwire's: a vanished
// server is noticed after about 25 s.
const (
	keepAliveIdle     = 10 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 3
	userTimeout       = keepAliveIdle + keepAliveCount*keepAliveInterval
	tcpUserTimeout    = 0x12 // TCP_USER_TIMEOUT, which package syscall lacks
)

// address resolves cfg's address.
func address(ctx context.Context, cfg Config) (int, syscall.Sockaddr, error) {
	if cfg.Socket != "" {
		return syscall.AF_UNIX, &syscall.SockaddrUnix{Name: cfg.Socket}, nil
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return 0, nil, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0, nil, fmt.Errorf("port %q: %w", port, err)
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil {
		return 0, nil, err
	}
	if len(ips) == 0 {
		return 0, nil, fmt.Errorf("%s: no address", host)
	}
	if ip4 := ips[0].To4(); ip4 != nil {
		a := &syscall.SockaddrInet4{Port: p}
		copy(a.Addr[:], ip4)
		return syscall.AF_INET, a, nil
	}
	a := &syscall.SockaddrInet6{Port: p}
	copy(a.Addr[:], ips[0].To16())
	return syscall.AF_INET6, a, nil
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

// connectSocket connects fd to sa (see mysqlwire's connectSocket: an
// interrupted TCP connect is polled for its outcome, a Unix one retried).
func connectSocket(fd int, sa syscall.Sockaddr, deadline time.Time, stop func() bool) error {
	if _, unix := sa.(*syscall.SockaddrUnix); unix {
		for {
			err := syscall.Connect(fd, sa)
			if err != syscall.EINTR && err != syscall.EAGAIN {
				return err
			}
			if stop() {
				return ErrClosed
			}
			if !time.Now().Before(deadline) {
				return syscall.ETIMEDOUT
			}
		}
	}
	switch err := syscall.Connect(fd, sa); err {
	case syscall.EINTR, syscall.EINPROGRESS:
		return awaitConnect(fd, deadline, stop)
	default:
		return err
	}
}

// awaitConnect waits for the TCP connection under way on fd.
func awaitConnect(fd int, deadline time.Time, stop func() bool) error {
	for {
		if stop() {
			return ErrClosed
		}
		wait := min(time.Until(deadline), waitSlice)
		if wait <= 0 {
			return syscall.ETIMEDOUT
		}
		ready, err := pollWritable(fd, wait)
		if err == syscall.EINTR || (err == nil && !ready) {
			continue
		}
		if err != nil {
			return err
		}
		if stop() {
			return ErrClosed
		}
		soErr, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err != nil {
			return err
		}
		if soErr != 0 {
			return syscall.Errno(soErr)
		}
		return nil
	}
}

// pollWritable waits up to d for fd to become writable, or to fail.
func pollWritable(fd int, d time.Duration) (bool, error) {
	const pollOut = 0x4
	pfd := struct {
		fd      int32
		events  int16
		revents int16
	}{fd: int32(fd), events: pollOut}
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	n, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1,
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 {
		return false, e
	}
	return n > 0, nil
}

// setTCPOptions sets TCP_NODELAY and the keep-alive.
func setTCPOptions(fd int) error {
	opts := [...]struct {
		name       string
		level, opt int
		v          int
	}{
		{"TCP_NODELAY", syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{"SO_KEEPALIVE", syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, int(keepAliveIdle / time.Second)},
		{"TCP_KEEPINTVL", syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, int(keepAliveInterval / time.Second)},
		{"TCP_KEEPCNT", syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, keepAliveCount},
		{"TCP_USER_TIMEOUT", syscall.IPPROTO_TCP, tcpUserTimeout, int(userTimeout / time.Millisecond)},
	}
	for _, o := range opts {
		if err := syscall.SetsockoptInt(fd, o.level, o.opt, o.v); err != nil {
			return fmt.Errorf("set %s: %w", o.name, err)
		}
	}
	return nil
}

// setTimeouts bounds each read and write of fd.
func setTimeouts(fd int, d time.Duration) error {
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("set receive timeout: %w", err)
	}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return fmt.Errorf("set send timeout: %w", err)
	}
	return nil
}

// rawIO is one read or write system call that the scheduler does not see.
// Not inlined, so that its caller's loop passes a function prologue, where
// a pending preemption takes effect, on every turn.
//
//go:noinline
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// waited filters the error of a raw read or write: nil for a signal or an
// elapsed waitSlice before the deadline (the caller tries again),
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
		n, err := rawIO(syscall.SYS_WRITE, c.fd, b)
		if n > 0 {
			b = b[n:]
		}
		if err = c.waited(err); err != nil {
			return c.ioError("write", err)
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
	for {
		if c.stopped() {
			return 0, ErrClosed
		}
		n, err := rawIO(syscall.SYS_READ, c.fd, b)
		if err == nil && n == 0 {
			err = syscall.ECONNRESET // end of stream
		}
		if err = c.waited(err); err != nil {
			return 0, c.ioError("read", err)
		}
		if n > 0 {
			return n, nil
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
