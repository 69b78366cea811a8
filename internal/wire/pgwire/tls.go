package pgwire

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// startTLS sends the SSLRequest and, when the server answers 'S', runs the
// TLS handshake; from then on crypto/tls's record layer carries every
// message, over c's own reads and writes (so Abort, SetDeadline and the
// waitSlice behave as on a plain connection). 'N' leaves the connection
// plain when preferred, and is ErrNoTLS otherwise.
func (c *Conn) startTLS(cfg *tls.Config, preferred bool) error {
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf[:0], 8)
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, 80877103)
	if err := c.flush(); err != nil {
		return err
	}
	for c.rend == c.rpos {
		if err := c.fill(); err != nil {
			return err
		}
	}
	answer := c.rbuf[c.rpos]
	c.rpos++
	switch answer {
	case 'S':
	case 'N':
		if preferred {
			return nil
		}
		return ErrNoTLS
	case 'E':
		return errors.New("pgwire: the server refused the SSLRequest with an error (a server older than 7.3?)")
	default:
		return fmt.Errorf("pgwire: unexpected SSLRequest answer %q", answer)
	}
	if c.rpos != c.rend {
		return errors.New("pgwire: server sent data before the TLS handshake")
	}
	c.tls = tls.Client(rawsock.NetConn{ReadFunc: c.sysRead, WriteFunc: c.sysWrite, Name: "pgwire"}, cfg)
	if err := c.tls.Handshake(); err != nil {
		if c.stopped() {
			return ErrClosed
		}
		return fmt.Errorf("TLS handshake: %w", err)
	}
	return nil
}

// TLS reports whether the connection is encrypted.
func (c *Conn) TLS() bool { return c.tls != nil }

// tlsError maps an error of the TLS layer as ioError maps a socket's.
func (c *Conn) tlsError(op string, err error) error {
	var oe *net.OpError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrClosed), errors.As(err, &oe):
		return err
	case err == io.EOF: // the server's close_notify
		return c.ioError(op, syscall.ECONNRESET)
	}
	return c.ioError(op, err)
}
