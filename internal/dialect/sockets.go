package dialect

import (
	"context"
	"io"
	"net"
	"sync"
)

// Sockets records the network connections a pool dials, so that every
// statement in flight can be aborted at once by closing them. A runner that
// can abort this way runs statements under a context that is never
// cancelled, which spares the drivers a watcher goroutine and two
// goroutine hand-offs per statement. Safe for concurrent use.
type Sockets struct {
	mu    sync.Mutex
	conns []io.Closer
}

// NewSockets returns an empty set.
func NewSockets() *Sockets { return &Sockets{} }

// Dial dials like net.Dialer and records the connection.
func (s *Sockets) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	s.Track(c)
	return c, nil
}

// Track records a connection dialled some other way; CloseAll closes it.
// Its Close must be safe to call from any goroutine.
func (s *Sockets) Track(c io.Closer) {
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

// CloseAll closes every connection dialled so far; statements running on
// them fail at once with a connection error.
func (s *Sockets) CloseAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}
