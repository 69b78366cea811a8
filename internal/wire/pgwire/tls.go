package pgwire

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
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
	for c.s.End == c.s.Pos {
		if err := c.fill(); err != nil {
			return err
		}
	}
	answer := c.s.Buf[c.s.Pos]
	c.s.Pos++
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
	return c.s.StartTLS(cfg)
}

// TLS reports whether the connection is encrypted.
func (c *Conn) TLS() bool { return c.s.TLS() }
