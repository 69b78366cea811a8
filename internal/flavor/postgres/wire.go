package postgres

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

// WireSupported implements flavor.Dialect: t can be reached with dbarena's lean
// PostgreSQL client (package pgwire): TCP or socket connections, with TLS
// or not; other DSN parameters go to the server as run-time parameters,
// as Config sends them.
func (Dialect) WireSupported(t target.Target) bool { return true }

// DialWire connects to t with the lean wire client (package pgwire) and
// records the connection in o.Sockets so that a run can abort it; ending
// ctx gives up the connect. TLS follows sslmode as Config does (allow is
// plain, prefer falls back to plain). pgwire.ErrUnsupportedAuth means the
// server wants an authentication method only pgx speaks.
func (d Dialect) DialWire(ctx context.Context, t target.Target, o flavor.OpenOptions) (*pgwire.Conn, error) {
	pc, err := d.Config(t, flavor.OpenOptions{})
	if err != nil {
		return nil, err
	}
	cfg := pgwire.Config{User: t.User, Password: t.Password, Database: t.Database,
		Params: pc.RuntimeParams, Timeout: 10 * time.Second, TLS: pc.TLSConfig}
	if cfg.TLS != nil {
		for _, fb := range pc.Fallbacks {
			if fb.TLSConfig == nil {
				cfg.TLSPreferred = true // sslmode=prefer
			}
		}
	}
	if t.Socket != "" {
		cfg.Socket = t.Socket
		if !strings.Contains(t.Socket, "/.s.PGSQL.") { // a directory, as libpq's host
			cfg.Socket = strings.TrimRight(t.Socket, "/") + "/.s.PGSQL." + strconv.Itoa(max(t.Port, 5432))
		}
	} else {
		cfg.Addr = net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	}
	c, err := pgwire.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if o.Sockets != nil {
		c.OnClose(o.Sockets.Track(pgAborter{c}))
	}
	return c, nil
}

// pgAborter aborts a pgwire connection from another goroutine (Sockets'
// CloseAll); its owner closes it.
type pgAborter struct{ c *pgwire.Conn }

func (a pgAborter) Close() error {
	a.c.Abort()
	return nil
}
