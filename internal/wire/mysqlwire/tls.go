package mysqlwire

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
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
	return c.s.StartTLS(cfg)
}

// TLS reports whether the connection is encrypted.
func (c *Conn) TLS() bool { return c.s.TLS() }
