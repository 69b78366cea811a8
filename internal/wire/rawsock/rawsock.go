// Package rawsock is the socket layer under dbarena's lean wire clients
// (mysqlwire, pgwire): blocking sockets driven by raw system calls, so that
// a waiting worker holds its OS thread as a C client does, with every wait
// cut into WaitSlice pieces so that the Go runtime can still preempt it.
// Socket is the one connection type both clients embed: buffered reads,
// writes, deadline, Abort, Close, TLS and the Waiter of a shared thread;
// the clients keep only their protocol.
package rawsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// WaitSlice bounds each blocking read, write or connect wait: the call
// comes back to Go code at least this often, so that a preemption request
// or a stop-the-world waits at most that long.
const WaitSlice = 20 * time.Millisecond

// ErrStopped is returned when the caller's stop function reported true
// while a connect waited; the clients turn it into their ErrClosed.
var ErrStopped = errors.New("rawsock: stopped")

// TCP keep-alive of every connection: a server that vanishes without a
// word (a dead host, a black-holed network) is noticed after about
// KeepAliveIdle + KeepAliveCount*KeepAliveInterval = 25 s, whether the
// connection is idle (keep-alive probes) or waits for the
// acknowledgement of a request (TCP_USER_TIMEOUT, set to the same 25 s).
// A server that is alive but slow (a long statement, a SIGSTOPped
// process, whose kernel still answers) is not cut off: Abort ends those.
const (
	KeepAliveIdle     = 10 * time.Second
	KeepAliveInterval = 5 * time.Second
	KeepAliveCount    = 3
	// UserTimeout bounds how long sent data may stay unacknowledged.
	UserTimeout = KeepAliveIdle + KeepAliveCount*KeepAliveInterval
)

// tcpUserTimeout is TCP_USER_TIMEOUT, which package syscall lacks.
const tcpUserTimeout = 0x12

// Address resolves a Unix socket path (when socket is set) or a
// host:port address to a socket domain and address.
func Address(ctx context.Context, socket, addr string) (int, syscall.Sockaddr, error) {
	if socket != "" {
		return syscall.AF_UNIX, &syscall.SockaddrUnix{Name: socket}, nil
	}
	host, port, err := net.SplitHostPort(addr)
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

// Connect connects the blocking socket fd, whose SO_SNDTIMEO is short
// (WaitSlice), to sa with connect (syscall.Connect; tests pass another),
// by deadline (ETIMEDOUT) or until stop reports true (ErrStopped).
//
// TCP: the handshake goes on in the kernel while connect(2) waits. A signal
// (EINTR: the Go runtime's preemption signals interrupt it, as the socket
// has a timeout) or SO_SNDTIMEO (EINPROGRESS) ends the wait, not the
// handshake, and calling connect again would answer EALREADY: it polls for
// the outcome instead. Unix sockets connect at once or wait for room in
// the server's backlog (EAGAIN at SO_SNDTIMEO), and an interrupted connect
// leaves nothing in progress: it is called again.
func Connect(fd int, sa syscall.Sockaddr, deadline time.Time, stop func() bool, connect func(int, syscall.Sockaddr) error) error {
	if _, unix := sa.(*syscall.SockaddrUnix); unix {
		for {
			err := connect(fd, sa)
			if err != syscall.EINTR && err != syscall.EAGAIN {
				return err
			}
			if stop() {
				return ErrStopped
			}
			if !time.Now().Before(deadline) {
				return syscall.ETIMEDOUT
			}
		}
	}
	switch err := connect(fd, sa); err {
	case syscall.EINTR, syscall.EINPROGRESS:
		return awaitConnect(fd, deadline, stop)
	default:
		return err
	}
}

// awaitConnect waits until the TCP connection under way on fd is made
// (nil) or fails (its error), until deadline (ETIMEDOUT), or until stop
// reports true (ErrStopped), a WaitSlice at a time.
func awaitConnect(fd int, deadline time.Time, stop func() bool) error {
	for {
		if stop() {
			return ErrStopped
		}
		wait := min(time.Until(deadline), WaitSlice)
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
		if stop() { // Abort's shutdown(2) also makes fd "writable"
			return ErrStopped
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

// pollWritable waits up to d for fd to become writable, or to fail
// (ppoll(2); select(2) cannot watch descriptors above 1023).
func pollWritable(fd int, d time.Duration) (bool, error) {
	const pollOut = 0x4
	return poll(fd, pollOut, d)
}

// poll waits up to d for one of events (poll(2)'s mask) on fd, or for it
// to fail.
func poll(fd int, events int16, d time.Duration) (bool, error) {
	pfd := struct {
		fd      int32
		events  int16
		revents int16
	}{fd: int32(fd), events: events}
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	n, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1,
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 {
		return false, e
	}
	return n > 0, nil
}

// SetTCPOptions sets TCP_NODELAY (like libmysqlclient, libpq and Go's net
// package: small packets go out at once) and the keep-alive.
func SetTCPOptions(fd int) error {
	opts := [...]struct {
		name       string
		level, opt int
		v          int
	}{
		{"TCP_NODELAY", syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{"SO_KEEPALIVE", syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, int(KeepAliveIdle / time.Second)},
		{"TCP_KEEPINTVL", syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, int(KeepAliveInterval / time.Second)},
		{"TCP_KEEPCNT", syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, KeepAliveCount},
		{"TCP_USER_TIMEOUT", syscall.IPPROTO_TCP, tcpUserTimeout, int(UserTimeout / time.Millisecond)},
	}
	for _, o := range opts {
		if err := syscall.SetsockoptInt(fd, o.level, o.opt, o.v); err != nil {
			return fmt.Errorf("set %s: %w", o.name, err)
		}
	}
	return nil
}

// SetTimeouts bounds each read and write of fd; 0 removes the bound.
func SetTimeouts(fd int, d time.Duration) error {
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("set receive timeout: %w", err)
	}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return fmt.Errorf("set send timeout: %w", err)
	}
	return nil
}

// IO is one read or write system call (trap SYS_READ or SYS_WRITE) that
// the scheduler does not see. Not inlined, so that its caller's loop passes
// a function prologue, where a pending preemption takes effect, on every
// turn.
//
//go:noinline
func IO(trap uintptr, fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Send is one send(2) of b on the socket fd (MSG_NOSIGNAL: a closed peer
// is EPIPE, not a signal), and Recv one recv(2) into b, raw system calls
// like IO. On a socket they do what write and read do through a shorter
// path in the kernel (no file-layer checks), as libpq and libmysqlclient
// call them.
//
//go:noinline
func Send(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		syscall.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Recv is one recv(2) into b; see Send.
//
//go:noinline
func Recv(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// NetConn is the net.Conn a TLS layer (crypto/tls.Client) reads and writes
// through: a client's raw socket, read and written by its own functions,
// which keep its deadlines and Abort. Close does nothing: the client owns
// the socket.
type NetConn struct {
	ReadFunc  func(b []byte) (int, error)
	WriteFunc func(b []byte) error
	// Name names the client in the addresses (net.Addr) it reports.
	Name string
}

var _ net.Conn = NetConn{}

// Read implements net.Conn.
func (n NetConn) Read(b []byte) (int, error) { return n.ReadFunc(b) }

// Write implements net.Conn: all of b is written, or an error returned.
func (n NetConn) Write(b []byte) (int, error) {
	if err := n.WriteFunc(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close does nothing: the client owns the socket.
func (NetConn) Close() error                     { return nil }
func (n NetConn) LocalAddr() net.Addr            { return addr(n.Name) }
func (n NetConn) RemoteAddr() net.Addr           { return addr(n.Name) }
func (NetConn) SetDeadline(time.Time) error      { return nil }
func (NetConn) SetReadDeadline(time.Time) error  { return nil }
func (NetConn) SetWriteDeadline(time.Time) error { return nil }

// addr is the net.Addr of a NetConn: the client's name, for messages.
type addr string

func (a addr) Network() string { return string(a) }
func (a addr) String() string  { return string(a) }
