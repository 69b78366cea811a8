package mysqlwire

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// ErrNoTLS says that TLS was asked for (Config.TLS) but the server does not
// offer it.
var ErrNoTLS = errors.New("mysqlwire: TLS required but the server does not support it (have_ssl off); use tls=preferred to allow plain text")

// startTLS sends the SSL request (Protocol::SSLRequest: the first 32 bytes
// of the handshake response) with flags and runs the TLS handshake. From
// then on crypto/tls's record layer carries every packet; underneath, its
// reads and writes are c's raw system calls, so Abort, SetDeadline and the
// waitSlice behave as on a plain connection.
func (c *Conn) startTLS(cfg *tls.Config, flags uint32) error {
	c.wbuf = c.wbuf[:4]
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, flags)
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, maxPayload)
	c.wbuf = append(c.wbuf, collationUTF8MB4)
	c.wbuf = append(c.wbuf, make([]byte, 23)...)
	if err := c.writePacket(); err != nil {
		return err
	}
	if c.rpos != c.rend {
		return errors.New("mysqlwire: server sent data before the TLS handshake")
	}
	c.tls = tls.Client(sockConn{c}, cfg)
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

// sockConn is the net.Conn under a Conn's TLS layer: c's socket, read and
// written with raw system calls. Deadlines are c's (SetDeadline).
type sockConn struct{ c *Conn }

func (s sockConn) Read(b []byte) (int, error) { return s.c.sysRead(b) }

func (s sockConn) Write(b []byte) (int, error) {
	if err := s.c.sysWrite(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close does nothing: the Conn owns the socket.
func (sockConn) Close() error                     { return nil }
func (sockConn) LocalAddr() net.Addr              { return sockAddr{} }
func (sockConn) RemoteAddr() net.Addr             { return sockAddr{} }
func (sockConn) SetDeadline(time.Time) error      { return nil }
func (sockConn) SetReadDeadline(time.Time) error  { return nil }
func (sockConn) SetWriteDeadline(time.Time) error { return nil }

type sockAddr struct{}

func (sockAddr) Network() string { return "mysql" }
func (sockAddr) String() string  { return "mysqlwire" }

// TLS reports whether the connection is encrypted.
func (c *Conn) TLS() bool { return c.tls != nil }
