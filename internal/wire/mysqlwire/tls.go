package mysqlwire

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

// ErrNoTLS says that TLS was asked for (Config.TLS) but the server does not
// offer it.
var ErrNoTLS = errors.New("mysqlwire: TLS required but the server does not support it (have_ssl off); use tls=preferred to allow plain text")

// startTLS sends the SSL request (Protocol::SSLRequest: the first 32 bytes
// of the handshake response) with flags and MariaDB's extended
// capabilities ext, and runs the TLS handshake. From
// then on crypto/tls's record layer carries every packet; underneath, its
// reads and writes are c's raw system calls, so Abort, SetDeadline and the
// waitSlice behave as on a plain connection.
func (c *Conn) startTLS(cfg *tls.Config, flags, ext uint32) error {
	c.wbuf = c.wbuf[:4]
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, flags)
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, maxPayload)
	c.wbuf = appendCollationAndReserved(c.wbuf, ext)
	if err := c.writePacket(); err != nil {
		return err
	}
	if c.rpos != c.rend {
		return errors.New("mysqlwire: server sent data before the TLS handshake")
	}
	c.tls = tls.Client(rawsock.NetConn{ReadFunc: c.sysRead, WriteFunc: c.sysWrite, Name: "mysqlwire"}, cfg)
	if err := c.tls.Handshake(); err != nil {
		if c.stopped() {
			return ErrClosed
		}
		return fmt.Errorf("TLS handshake: %w", err)
	}
	return nil
}

// tlsError maps an error of the TLS layer as ioError maps a socket's: the
// socket's own errors come back as they are.
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

// TLS reports whether the connection is encrypted.
func (c *Conn) TLS() bool { return c.tls != nil }
