package rawsock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// Socket states (Socket.state). Abort moves an open Socket to aborting,
// shuts it down and leaves it aborted; Close moves it to closed before it
// releases the descriptor, waiting out an Abort in progress, so that Abort
// never touches a file descriptor that Close gave back to the system (and
// that another connection may have been given since).
const (
	stateOpen int32 = iota
	stateAborting
	stateAborted
	stateClosed
)

// Socket is the connection under a lean wire client (mysqlwire, pgwire): a
// blocking socket read and written with raw system calls a WaitSlice at a
// time (or, when the client asks for it, a net.Conn on Go's netpoller),
// its read buffer, its deadline, Abort from any goroutine, TLS carried over
// its own reads and writes, and the Waiter of a connection that shares its
// thread. A client embeds one by value and parses its protocol out of
// Buf[Pos:End].
//
// A Socket is used by one goroutine at a time, except Abort, which any
// goroutine may call.
type Socket struct {
	// Buf is the read buffer; Buf[Pos:End] is read and not yet consumed.
	Buf      []byte
	Pos, End int
	// Deadline ends reads and writes: a call still waiting at Deadline
	// fails with a timeout (a *net.OpError wrapping syscall.ETIMEDOUT) and
	// aborts the Socket. Zero: they wait until Abort.
	Deadline time.Time

	fd      int
	nc      net.Conn
	state   atomic.Int32
	tls     *tls.Conn
	onClose func()
	onAbort func()
	// wait, when set, waits for the non-blocking socket where a read
	// would block (Waiter: the connection shares its thread).
	wait Waiter
	// drained: the last read left the socket empty, so that the next
	// reply is announced to wait (edge-triggered): a read waits first
	// instead of trying a recv(2) bound to find nothing.
	drained bool
	// client names the client in its own errors ("mysqlwire"), network
	// in the *net.OpError of a socket error ("mysql").
	client, network string
	// errClosed is the client's error for an aborted or closed Socket.
	errClosed error
	// peer is peerLocal when the socket talks over TCP to a server on
	// this machine, whose CPU the reading thread follows (Follow),
	// peerOther when not, 0 until followPeer first looks; reads counts
	// the reads.
	peer  int8
	reads uint32
}

// Open makes s a Socket on the connected descriptor fd (-1 with nc, a
// net.Conn that replaces it), with a read buffer of size bytes. Its errors
// name client (its own) and network (a *net.OpError's), and it answers
// errClosed once aborted or closed.
func (s *Socket) Open(fd int, nc net.Conn, size int, client, network string, errClosed error) {
	s.fd, s.nc, s.client, s.network, s.errClosed = fd, nc, client, network, errClosed
	s.Buf = make([]byte, size)
	s.peer, s.reads = 0, 0
	if nc != nil {
		s.peer = peerOther
	}
}

// DialDeadline is when connecting and the handshake give up: timeout
// from now (10 s if not positive), or ctx's deadline if sooner.
func DialDeadline(ctx context.Context, timeout time.Duration) time.Time {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline
}

// NewSocket returns a blocking stream socket of domain (AF_INET,
// AF_INET6, AF_UNIX) whose reads and writes wait a WaitSlice at a time.
func NewSocket(domain int) (int, error) {
	fd, err := syscall.Socket(domain, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := SetTimeouts(fd, WaitSlice); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Establish connects the socket fd (NewSocket) to sa by deadline or until
// stop reports true (Connect), then sets TCP_NODELAY and the keep-alive
// on a TCP connection.
func Establish(fd int, sa syscall.Sockaddr, deadline time.Time, stop func() bool) error {
	if err := Connect(fd, sa, deadline, stop, syscall.Connect); err != nil {
		return err
	}
	if _, unix := sa.(*syscall.SockaddrUnix); !unix {
		return SetTCPOptions(fd)
	}
	return nil
}

// Fd is the socket's descriptor (-1 on a net.Conn).
func (s *Socket) Fd() int { return s.fd }

// Netpoll reports whether the Socket is a net.Conn on Go's netpoller.
func (s *Socket) Netpoll() bool { return s.nc != nil }

// Shared reports whether the Socket shares its thread (a Waiter adopted it).
func (s *Socket) Shared() bool { return s.wait != nil }

// Adopt attaches the Socket, connected and past its handshake, to the
// Waiter ctx carries, if any (WithWaiter): it becomes non-blocking and
// waits through the Waiter.
func (s *Socket) Adopt(ctx context.Context) error {
	w := WaiterFrom(ctx)
	if w == nil || s.nc != nil {
		return nil
	}
	if err := Adopt(w, s.fd); err != nil {
		return err
	}
	s.wait = w
	return nil
}

// Stopped reports that the Socket was aborted or closed: no more system
// calls on its descriptor.
func (s *Socket) Stopped() bool { return s.state.Load() != stateOpen }

// Abort shuts the socket down, waking a blocked read or write, so that it
// and every later call fail with the client's closed error. Safe to call
// from any goroutine, more than once, and after Close (when it does
// nothing). It reports whether this call aborted the Socket. The OnAbort
// function, if any, runs first.
func (s *Socket) Abort() bool {
	if !s.state.CompareAndSwap(stateOpen, stateAborting) {
		return false
	}
	if s.onAbort != nil {
		s.onAbort()
	}
	if s.nc != nil {
		if hc, ok := s.nc.(interface{ CloseRead() error }); ok {
			_ = hc.CloseRead()
		}
		if hc, ok := s.nc.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		}
		_ = s.nc.SetDeadline(time.Unix(1, 0))
	} else {
		_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
	}
	s.state.Store(stateAborted)
	return true
}

// OnAbort sets f to run once, in the Abort that aborts the Socket (a
// caller's or a deadline's), just before the shutdown wakes the call in
// flight. Set it before the Socket is shared.
func (s *Socket) OnAbort(f func()) { s.onAbort = f }

// OnClose sets f to run once, when Close releases the socket (replacing any
// earlier f). Set it before the Socket is shared.
func (s *Socket) OnClose(f func()) { s.onClose = f }

// Close releases the socket, once: later calls do nothing and return nil.
// It waits out an Abort in progress (the descriptor stays the Socket's
// until its shutdown is done). The client says goodbye to its server
// before.
func (s *Socket) Close() error {
	for {
		switch st := s.state.Load(); st {
		case stateClosed:
			return nil
		case stateAborting:
			runtime.Gosched()
		default:
			if s.state.CompareAndSwap(st, stateClosed) {
				var err error
				if s.nc != nil {
					err = s.nc.Close()
				} else {
					err = syscall.Close(s.fd)
				}
				if s.onClose != nil {
					s.onClose()
				}
				return err
			}
		}
	}
}

// Write sends all of b, through TLS when it is on.
func (s *Socket) Write(b []byte) error {
	if s.tls != nil {
		_, err := s.tls.Write(b)
		return s.tlsError("write", err)
	}
	return s.sysWrite(b)
}

// Fill reads more bytes into Buf, keeping Buf[Pos:End] (moved to the
// start of Buf, which doubles when they fill it).
func (s *Socket) Fill() error {
	s.room()
	var n int
	var err error
	if s.tls != nil {
		for n == 0 && err == nil {
			n, err = s.tls.Read(s.Buf[s.End:])
		}
		err = s.tlsError("read", err)
	} else {
		n, err = s.sysRead(s.Buf[s.End:])
	}
	s.End += n
	return err
}

// FillNow reads what the non-blocking socket holds into Buf, as Fill,
// without waiting: false when it held nothing.
func (s *Socket) FillNow() (bool, error) {
	s.room()
	b := s.Buf[s.End:]
	for {
		if s.Stopped() {
			return false, s.errClosed
		}
		n, err := Recv(s.fd, b)
		if err == nil && n == 0 {
			err = syscall.ECONNRESET // end of stream
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			if err == syscall.EAGAIN {
				if err = s.waited(err); err == nil { // before the deadline
					return false, nil
				}
			}
			return false, s.ioError("read", err)
		}
		s.End += n
		s.drained = n < len(b)
		return true, nil
	}
}

// room moves Buf's unread bytes to its start, and doubles Buf when they
// fill it, so that there is room to read more.
func (s *Socket) room() {
	if s.Pos > 0 {
		s.End = copy(s.Buf, s.Buf[s.Pos:s.End])
		s.Pos = 0
	}
	if s.End == len(s.Buf) {
		nb := make([]byte, 2*len(s.Buf))
		copy(nb, s.Buf[:s.End])
		s.Buf = nb
	}
}

// StartTLS runs the TLS handshake once the client's server agreed to it;
// from then on crypto/tls's record layer carries every byte, over the
// Socket's own reads and writes (so Abort, Deadline and the WaitSlice
// behave as on a plain connection).
func (s *Socket) StartTLS(cfg *tls.Config) error {
	if s.Pos != s.End {
		return fmt.Errorf("%s: server sent data before the TLS handshake", s.client)
	}
	s.tls = tls.Client(NetConn{ReadFunc: s.sysRead, WriteFunc: s.sysWrite, Name: s.client}, cfg)
	if err := s.tls.Handshake(); err != nil {
		if s.Stopped() {
			return s.errClosed
		}
		return fmt.Errorf("TLS handshake: %w", err)
	}
	return nil
}

// TLS reports whether the connection is encrypted.
func (s *Socket) TLS() bool { return s.tls != nil }

// waited filters the error of a raw read or write: nil for a signal or an
// elapsed WaitSlice (or, on a non-blocking socket, nothing to do yet)
// before the deadline (the caller waits and tries again), the closed
// error after Abort, ETIMEDOUT at the deadline (which aborts).
func (s *Socket) waited(err error) error {
	switch {
	case err == nil:
		return nil
	case s.Stopped():
		return s.errClosed
	case err == syscall.EINTR:
		return nil
	case err == syscall.EAGAIN:
		if s.Deadline.IsZero() || time.Now().Before(s.Deadline) {
			return nil
		}
		s.Abort()
		return syscall.ETIMEDOUT
	}
	return err
}

// sysWrite sends all of b on the socket, with send(2) rather than
// write(2): the same on a socket through a shorter path in the kernel (no
// file layer), as libmysqlclient and libpq do.
func (s *Socket) sysWrite(b []byte) error {
	if s.nc != nil {
		if !s.Deadline.IsZero() {
			_ = s.nc.SetWriteDeadline(s.Deadline)
		}
		if _, err := s.nc.Write(b); err != nil {
			return s.ioError("write", err)
		}
		return nil
	}
	for len(b) > 0 {
		n, err := Send(s.fd, b)
		if n > 0 {
			b = b[n:]
		}
		again := err == syscall.EAGAIN
		if err = s.waited(err); err != nil {
			return s.ioError("write", err)
		}
		if again && s.wait != nil {
			AwaitWritable(s.fd)
		}
	}
	return nil
}

// sysRead reads at least one byte from the socket into b, with recv(2)
// (see sysWrite).
func (s *Socket) sysRead(b []byte) (int, error) {
	if s.nc != nil {
		if !s.Deadline.IsZero() {
			_ = s.nc.SetReadDeadline(s.Deadline)
		}
		n, err := s.nc.Read(b)
		if n > 0 {
			return n, nil
		}
		if err == nil {
			err = syscall.ECONNRESET
		}
		return 0, s.ioError("read", err)
	}
	if s.wait != nil && s.drained {
		s.wait.Wait(s.fd)
	}
	for {
		if s.Stopped() {
			return 0, s.errClosed
		}
		n, err := Recv(s.fd, b)
		if err == nil && n == 0 {
			err = syscall.ECONNRESET // end of stream; waited reports the closed error after Abort
		}
		again := err == syscall.EAGAIN
		if err = s.waited(err); err != nil {
			return 0, s.ioError("read", err)
		}
		if n > 0 {
			s.drained = n < len(b)
			if s.peer != peerOther && s.wait == nil {
				s.followPeer()
			}
			return n, nil
		}
		if again && s.wait != nil {
			s.wait.Wait(s.fd)
		}
	}
}

// ioError wraps a socket error as a *net.OpError, the way callers
// recognise a lost connection; an aborted Socket reports the closed error,
// except for the timeout that aborted it.
func (s *Socket) ioError(op string, err error) error {
	if s.Stopped() && err != syscall.ETIMEDOUT {
		return s.errClosed
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() && s.nc != nil {
		s.Abort()
		return &net.OpError{Op: op, Net: s.network, Err: syscall.ETIMEDOUT}
	}
	return &net.OpError{Op: op, Net: s.network, Err: err}
}

// tlsError maps an error of the TLS layer as ioError maps a socket's: the
// socket's own errors come back as they are.
func (s *Socket) tlsError(op string, err error) error {
	var oe *net.OpError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, s.errClosed), errors.As(err, &oe):
		return err
	case err == io.EOF: // the server's close_notify
		return s.ioError(op, syscall.ECONNRESET)
	}
	return s.ioError(op, err)
}
