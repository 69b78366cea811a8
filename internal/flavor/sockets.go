package flavor

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// Sockets records the open network connections of a run, so that every
// statement in flight can be aborted at once by closing them. A runner that
// can abort this way runs statements under a context that is never
// cancelled, which spares the drivers a watcher goroutine and two
// goroutine hand-offs per statement. A connection is forgotten when it is
// closed, so the set holds only open connections however many come and go.
// Safe for concurrent use.
type Sockets struct {
	mu    sync.Mutex
	conns map[*tracked]struct{}
}

// tracked is one recorded connection.
type tracked struct{ c io.Closer }

// NewSockets returns an empty set.
func NewSockets() *Sockets { return &Sockets{conns: map[*tracked]struct{}{}} }

// Dial dials like net.Dialer, with the TCP keep-alive of mysqlwire's
// connections (mysqlwire.KeepAliveIdle, KeepAliveInterval, KeepAliveCount),
// and records the connection until it is closed.
func (s *Sockets) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: mysqlwire.KeepAliveIdle,
		Interval: mysqlwire.KeepAliveInterval, Count: mysqlwire.KeepAliveCount}}
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &trackedConn{Conn: c, forget: s.Track(c)}, nil
}

// trackedConn is a dialled connection that leaves the set when closed.
type trackedConn struct {
	net.Conn
	forget func()
}

func (t *trackedConn) Close() error {
	t.forget()
	return t.Conn.Close()
}

// SyscallConn gives the drivers the descriptor of the connection, as
// *net.TCPConn does (go-sql-driver checks an idle connection's liveness
// with it).
func (t *trackedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := t.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

// Track records a connection dialled some other way; CloseAll closes it
// until forget is called (when the connection is closed). c's Close must
// be safe to call from any goroutine.
func (s *Sockets) Track(c io.Closer) (forget func()) {
	t := &tracked{c}
	s.mu.Lock()
	if s.conns == nil {
		s.conns = map[*tracked]struct{}{}
	}
	s.conns[t] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.conns, t)
		s.mu.Unlock()
	}
}

// TrackWire records a mysqlwire connection: CloseAll aborts it, and its
// Close forgets it. It sets c's OnClose.
func (s *Sockets) TrackWire(c *mysqlwire.Conn) {
	c.OnClose(s.Track(wireAborter{c}))
}

// wireAborter aborts a wire connection from another goroutine; its owner
// closes it.
type wireAborter struct{ c *mysqlwire.Conn }

func (a wireAborter) Close() error {
	a.c.Abort()
	return nil
}

// Len is the number of connections recorded and not closed.
func (s *Sockets) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// CloseAll closes every connection recorded so far; statements running on
// them fail at once with a connection error.
func (s *Sockets) CloseAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = map[*tracked]struct{}{}
	s.mu.Unlock()
	for t := range conns {
		_ = t.c.Close()
	}
}
