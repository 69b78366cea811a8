// Package mysqlwire is a lean client for the MySQL wire protocol, made for
// the benchmark hot path: one connection used by one goroutine, prepared
// statements run with the binary protocol, result rows read and skipped
// (Query, Exec) or handed to a callback that decodes only the values it
// asks for (QueryFunc, Row). It speaks to MariaDB, MySQL and Percona Server with the
// mysql_native_password and caching_sha2_password (fast path) methods, in
// plain text or over TLS (Config.TLS: crypto/tls on top of the same raw
// system calls).
//
// Each connection owns a blocking socket and talks to it with send and
// recv system calls, as a C client does: no netpoller wake-ups, no driver
// goroutines, no allocation per statement. The calls are raw (see
// waitSlice): a waiting connection keeps its goroutine's P, so a program
// with N connections in use wants GOMAXPROCS above N. Everything else
// (schema work, counters, loads) goes through database/sql and
// go-sql-driver/mysql.
//
// A Conn is used by one goroutine at a time, except Abort, which any
// goroutine may call. Its reads and writes wait until the server answers,
// Abort is called, or the deadline of SetDeadline passes; DialContext
// gives up when its context ends; TCP keep-alive notices a vanished server
// (KeepAliveIdle). Malformed server data is an error, never a panic.
package mysqlwire

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// Client capability flags (MySQL protocol, "Capabilities Flags").
const (
	capLongPassword     = 0x00000001
	capLongFlag         = 0x00000004
	capConnectWithDB    = 0x00000008
	capSSL              = 0x00000800
	capProtocol41       = 0x00000200
	capTransactions     = 0x00002000
	capSecureConn       = 0x00008000
	capMultiResults     = 0x00020000
	capPSMultiResults   = 0x00040000
	capPluginAuth       = 0x00080000
	capPluginAuthLenenc = 0x00200000
)

// MariaDB's extended capabilities (the upper 32 bits of its capability
// flags), exchanged in the greeting's and the handshake response's
// reserved bytes when neither side sets capLongPassword (CLIENT_MYSQL).
const (
	// extCacheMetadata: an execution's result set carries its column
	// definitions only when they changed since the statement's last
	// (MARIADB_CLIENT_CACHE_METADATA).
	extCacheMetadata = 1 << (36 - 32)
)

// Server status flags.
const (
	statusMoreResults        = 0x0008
	statusNoBackslashEscapes = 0x0200
)

// Commands.
const (
	comQuit        = 0x01
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19
)

// waitSlice bounds each blocking read and write. The system calls run as
// raw system calls, unseen by the Go scheduler: the worker's goroutine
// keeps its P while it waits, as a C client keeps its thread, and sysmon
// neither retakes the P nor stays awake to watch it (its 20 µs polling and
// the hand-offs cost more client CPU than the statements at dozens of
// connections per core). Every waitSlice the call returns to Go code, so a
// preemption request or a stop-the-world waits at most that long (a run
// allocates little: no collection at all in a 10 s, 64-thread run). 20 ms
// rather than 5 ms: at 64 threads on 2 cores a reply often takes over 5 ms,
// and each early return is one more system call and context switch. The
// runner gives the scheduler a P per worker (workload.Dialer).
const waitSlice = rawsock.WaitSlice

// maxPayload is the largest payload of one packet; longer ones are split.
const maxPayload = 1<<24 - 1

// maxLong bounds a payload split over packets: the server's own limit
// (max_allowed_packet is at most 1 GiB), so that a corrupt stream cannot
// make the client allocate without end.
const maxLong = 1 << 30

// collationUTF8MB4 is utf8mb4_general_ci.
const collationUTF8MB4 = 45

// ErrUnsupportedAuth says that the server asked for an authentication
// method this client does not speak (for example caching_sha2_password's
// full authentication, which needs TLS or an RSA key). Callers fall back to
// a full driver.
var ErrUnsupportedAuth = errors.New("mysqlwire: unsupported authentication method")

// ErrClosed is returned by a Conn that was closed or aborted.
var ErrClosed = errors.New("mysqlwire: connection closed")

// Error is an error packet from the server.
type Error struct {
	Number   uint16
	SQLState string
	Message  string
}

func (e *Error) Error() string {
	if e.SQLState != "" {
		return fmt.Sprintf("Error %d (%s): %s", e.Number, e.SQLState, e.Message)
	}
	return fmt.Sprintf("Error %d: %s", e.Number, e.Message)
}

// Config says where and as whom to connect.
type Config struct {
	// Addr is host:port for TCP; Socket, if set, is a Unix socket path and wins.
	Addr   string
	Socket string
	User   string
	// Password is sent only as a scramble.
	Password string
	Database string
	// Timeout bounds connecting and the handshake; 0 means 10 s.
	Timeout time.Duration
	// TLS, if set, encrypts the connection after the greeting (SSL
	// request); a server without TLS is refused (ErrNoTLS) unless
	// TLSPreferred, when the connection stays plain.
	TLS          *tls.Config
	TLSPreferred bool
}

// Conn is one client connection.
type Conn struct {
	// s is the socket, its read buffer (s.Buf[s.Pos:s.End] is unread),
	// deadline, Abort and TLS.
	s      rawsock.Socket
	seq    byte
	status uint16 // server status flags of the last OK/EOF
	wbuf   []byte // packet being built; 4 header bytes first
	pkt    []byte // payload of a packet longer than s.Buf, reassembled
	// pipe is the open pipeline, pbuf its queued commands.
	pipe *Pipeline
	pbuf []byte
	// cols, offs and row are the current result set's, reused (QueryFunc).
	cols    []column
	offs    []int32
	row     Row
	version string
	// cacheMeta: MariaDB's metadata caching is on (extCacheMetadata): a
	// result set's column count is followed by a byte that says whether
	// the column definitions follow.
	cacheMeta bool
}

// newConn returns a Conn on the socket fd (rawsock.NewSocket).
func newConn(fd int) *Conn {
	c := &Conn{wbuf: make([]byte, 4, 4<<10)}
	c.s.Open(fd, nil, 16<<10, "mysqlwire", "mysql", ErrClosed)
	return c
}

// Dial connects, authenticates and selects cfg.Database.
func Dial(cfg Config) (*Conn, error) { return DialContext(context.Background(), cfg) }

// DialContext is Dial that gives up, with ctx's error, once ctx is done
// (or at its deadline, if sooner than cfg.Timeout).
func DialContext(ctx context.Context, cfg Config) (*Conn, error) {
	deadline := rawsock.DialDeadline(ctx, cfg.Timeout)
	domain, sa, err := address(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fd, err := rawsock.NewSocket(domain)
	if err != nil {
		return nil, err
	}
	c := newConn(fd)
	stop := context.AfterFunc(ctx, c.Abort)
	defer stop()
	network := "tcp"
	if domain == syscall.AF_UNIX {
		network = "unix"
	}
	fail := func(err error) (*Conn, error) {
		c.Abort() // no COM_QUIT: the session never began
		c.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if _, ok := err.(*net.OpError); !ok {
			err = &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return nil, err
	}
	c.SetDeadline(deadline)
	if err := rawsock.Establish(fd, sa, deadline, c.s.Stopped); err != nil {
		if err == rawsock.ErrStopped {
			err = ErrClosed
		}
		return fail(err)
	}
	if err := c.handshake(cfg); err != nil {
		var se *Error
		var ve *tls.CertificateVerificationError
		if errors.As(err, &se) || errors.Is(err, ErrUnsupportedAuth) || errors.Is(err, ErrNoTLS) || errors.As(err, &ve) {
			c.Abort()
			c.Close()
			return nil, err // the server's answer, as it is: no lost connection
		}
		return fail(err)
	}
	if !stop() {
		return fail(ErrClosed) // ctx ended just now and aborted c
	}
	// Statements may run as long as they like, a waitSlice at a time;
	// Abort ends them.
	c.SetDeadline(time.Time{})
	if err := c.s.Adopt(ctx); err != nil {
		return fail(err)
	}
	return c, nil
}

// address resolves cfg's address.
func address(ctx context.Context, cfg Config) (int, syscall.Sockaddr, error) {
	return rawsock.Address(ctx, cfg.Socket, cfg.Addr)
}

// TCP keep-alive of every connection (see package rawsock): a server that
// vanishes without a word is noticed after about 25 s.
const (
	KeepAliveIdle     = rawsock.KeepAliveIdle
	KeepAliveInterval = rawsock.KeepAliveInterval
	KeepAliveCount    = rawsock.KeepAliveCount
	// UserTimeout bounds how long sent data may stay unacknowledged.
	UserTimeout = rawsock.UserTimeout
)

// SetDeadline bounds the reads and writes of later calls; the zero time,
// the default after Dial, lets them wait until Abort. A call still waiting
// for the server at t fails with a timeout (a *net.OpError wrapping
// syscall.ETIMEDOUT, whose Timeout() is true) and aborts the Conn, since
// the reply it waited for may yet come, out of step. For the Conn's owner,
// like every method but Abort.
func (c *Conn) SetDeadline(t time.Time) { c.s.Deadline = t }

// ServerVersion is the version string of the server's greeting.
func (c *Conn) ServerVersion() string { return c.version }

// Abort makes the statement in flight, and every later call, fail at once
// with ErrClosed. Safe to call from any goroutine, more than once, and
// after Close (when it does nothing).
func (c *Conn) Abort() { c.s.Abort() }

// stopped reports that the Conn was aborted or closed: no more system
// calls on its descriptor.
func (c *Conn) stopped() bool { return c.s.Stopped() }

// OnClose sets f to run once, when Close releases the socket (replacing any
// earlier f). Set it before the Conn is shared.
func (c *Conn) OnClose(f func()) { c.s.OnClose(f) }

// Close says goodbye to the server and releases the socket. Later calls
// return ErrClosed (Close itself returns nil).
func (c *Conn) Close() error {
	if !c.stopped() {
		c.startCommand(comQuit)
		_ = c.writePacket()
	}
	return c.s.Close()
}

// handshake reads the server's greeting and authenticates
// (Protocol::HandshakeV10, Protocol::HandshakeResponse41).
func (c *Conn) handshake(cfg Config) error {
	p, err := c.readPacket()
	if err != nil {
		return err
	}
	if len(p) == 0 {
		return errors.New("mysqlwire: empty handshake packet")
	}
	if p[0] == 0xff {
		return parseError(p)
	}
	if p[0] != 10 {
		return fmt.Errorf("mysqlwire: unsupported protocol version %d", p[0])
	}
	r := reader{b: p[1:]}
	c.version = r.nulString()
	r.skip(4) // connection id
	salt := append([]byte(nil), r.bytes(8)...)
	r.skip(1)
	caps := uint32(r.uint16())
	r.skip(1) // charset
	c.status = r.uint16()
	caps |= uint32(r.uint16()) << 16
	saltLen := int(r.byte1())
	r.skip(6)
	ext := r.uint32()
	if caps&capLongPassword != 0 {
		ext = 0 // MySQL: the bytes are reserved
	}
	if caps&capSecureConn != 0 {
		n := max(13, saltLen-8)
		salt = append(salt, r.bytes(n)...)
		if len(salt) > 0 && salt[len(salt)-1] == 0 {
			salt = salt[:len(salt)-1]
		}
	}
	plugin := "mysql_native_password"
	if caps&capPluginAuth != 0 {
		if s := r.nulString(); s != "" {
			plugin = s
		}
	}
	if r.err {
		return errors.New("mysqlwire: short handshake packet")
	}
	if caps&capProtocol41 == 0 || caps&capSecureConn == 0 {
		return ErrUnsupportedAuth
	}
	auth, err := scramble(plugin, salt, cfg.Password)
	if err != nil {
		return err
	}

	flags := uint32(capLongPassword | capLongFlag | capProtocol41 | capTransactions |
		capSecureConn | capMultiResults | capPSMultiResults | capPluginAuth)
	if cfg.Database != "" {
		flags |= capConnectWithDB
	}
	flags |= caps & capPluginAuthLenenc
	ext &= extCacheMetadata
	if caps&capLongPassword == 0 {
		// MariaDB (CLIENT_MYSQL clear): its extended capabilities.
		flags &^= capLongPassword
		c.cacheMeta = ext&extCacheMetadata != 0
	}
	c.seq = 1
	if cfg.TLS != nil {
		switch {
		case caps&capSSL != 0:
			flags |= capSSL
			if err := c.startTLS(cfg.TLS, flags, ext); err != nil {
				return err
			}
		case !cfg.TLSPreferred:
			return ErrNoTLS
		}
	}
	c.wbuf = c.wbuf[:4]
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, flags)
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, maxPayload)
	c.wbuf = appendCollationAndReserved(c.wbuf, ext)
	c.wbuf = append(append(c.wbuf, cfg.User...), 0)
	if flags&capPluginAuthLenenc != 0 {
		c.wbuf = appendLenenc(c.wbuf, uint64(len(auth)))
	} else {
		c.wbuf = append(c.wbuf, byte(len(auth)))
	}
	c.wbuf = append(c.wbuf, auth...)
	if cfg.Database != "" {
		c.wbuf = append(append(c.wbuf, cfg.Database...), 0)
	}
	c.wbuf = append(append(c.wbuf, plugin...), 0)
	if err := c.writePacket(); err != nil {
		return err
	}
	return c.authResult(plugin, salt, cfg.Password)
}

// appendCollationAndReserved appends the character set and the 23
// reserved bytes of the handshake response, whose last 4 carry MariaDB's
// extended capabilities ext.
func appendCollationAndReserved(b []byte, ext uint32) []byte {
	b = append(b, collationUTF8MB4)
	b = append(b, make([]byte, 19)...)
	return binary.LittleEndian.AppendUint32(b, ext)
}

// authResult reads the server's answers to the handshake response until OK,
// switching method or finishing caching_sha2_password's fast path.
func (c *Conn) authResult(plugin string, salt []byte, password string) error {
	for range 4 {
		p, err := c.readPacket()
		if err != nil {
			return err
		}
		if len(p) == 0 {
			return errors.New("mysqlwire: empty authentication reply")
		}
		switch p[0] {
		case 0x00:
			c.readOK(p)
			return nil
		case 0xff:
			return parseError(p)
		case 0xfe: // AuthSwitchRequest
			r := reader{b: p[1:]}
			plugin = r.nulString()
			salt = append([]byte(nil), r.rest()...)
			if len(salt) > 0 && salt[len(salt)-1] == 0 {
				salt = salt[:len(salt)-1]
			}
			auth, err := scramble(plugin, salt, password)
			if err != nil {
				return err
			}
			c.wbuf = append(c.wbuf[:4], auth...)
			if err := c.writePacket(); err != nil {
				return err
			}
		case 0x01: // AuthMoreData
			if plugin == "caching_sha2_password" && len(p) == 2 && p[1] == 3 {
				continue // fast authentication succeeded; OK follows
			}
			return ErrUnsupportedAuth
		default:
			return fmt.Errorf("mysqlwire: unexpected authentication reply 0x%02x", p[0])
		}
	}
	return errors.New("mysqlwire: authentication did not finish")
}

// scramble computes the authentication response of a method.
func scramble(plugin string, salt []byte, password string) ([]byte, error) {
	if password == "" {
		return nil, nil
	}
	switch plugin {
	case "mysql_native_password":
		// SHA1(password) XOR SHA1(salt + SHA1(SHA1(password)))
		h1 := sha1.Sum([]byte(password))
		h2 := sha1.Sum(h1[:])
		h := sha1.New()
		h.Write(salt)
		h.Write(h2[:])
		out := h.Sum(nil)
		for i := range out {
			out[i] ^= h1[i]
		}
		return out, nil
	case "caching_sha2_password":
		// SHA256(password) XOR SHA256(SHA256(SHA256(password)) + salt)
		h1 := sha256.Sum256([]byte(password))
		h2 := sha256.Sum256(h1[:])
		h := sha256.New()
		h.Write(h2[:])
		h.Write(salt)
		out := h.Sum(nil)
		for i := range out {
			out[i] ^= h1[i]
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedAuth, plugin)
}

// startCommand begins a new command packet.
func (c *Conn) startCommand(cmd byte) {
	c.seq = 0
	c.wbuf = append(c.wbuf[:4], cmd)
}

// writePacket sends c.wbuf[4:] as one or more packets.
func (c *Conn) writePacket() error {
	if c.stopped() {
		return ErrClosed
	}
	payload := len(c.wbuf) - 4
	if payload < maxPayload {
		b := c.wbuf
		b[0], b[1], b[2], b[3] = byte(payload), byte(payload>>8), byte(payload>>16), c.seq
		c.seq++
		return c.write(b)
	}
	data := c.wbuf[4:]
	var hdr [4]byte
	for {
		n := min(len(data), maxPayload)
		hdr[0], hdr[1], hdr[2], hdr[3] = byte(n), byte(n>>8), byte(n>>16), c.seq
		c.seq++
		if err := c.write(hdr[:]); err != nil {
			return err
		}
		if err := c.write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
		if n < maxPayload {
			return nil
		}
	}
}

// write sends all of b.
func (c *Conn) write(b []byte) error { return c.s.Write(b) }

// fill reads more bytes into the read buffer, keeping its unread ones.
func (c *Conn) fill() error { return c.s.Fill() }

// header waits for the next packet's header, at c.s.Pos, and returns its
// payload length; the next packet sent carries the sequence number after it.
func (c *Conn) header() (int, error) {
	for c.s.End-c.s.Pos < 4 {
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	h := c.s.Buf[c.s.Pos:]
	c.seq = h[3] + 1
	return int(h[0]) | int(h[1])<<8 | int(h[2])<<16, nil
}

// readPacket returns the next packet's payload. It is valid until the next
// read.
func (c *Conn) readPacket() ([]byte, error) {
	n, err := c.header()
	if err != nil {
		return nil, err
	}
	if n == maxPayload {
		return c.readLong()
	}
	// fill grows the buffer as the bytes come, not at the word of the header.
	for c.s.End-c.s.Pos < n+4 {
		if err := c.fill(); err != nil {
			return nil, err
		}
	}
	p := c.s.Buf[c.s.Pos+4 : c.s.Pos+4+n]
	c.s.Pos += 4 + n
	return p, nil
}

// readLong reassembles a payload split over packets of maxPayload bytes.
func (c *Conn) readLong() ([]byte, error) {
	c.pkt = c.pkt[:0]
	for {
		n, err := c.header()
		if err != nil {
			return nil, err
		}
		c.s.Pos += 4
		if len(c.pkt)+n > maxLong {
			c.Abort() // out of step with the stream
			return nil, fmt.Errorf("mysqlwire: packet over %d bytes", maxLong)
		}
		for left := n; left > 0; {
			if c.s.Pos == c.s.End {
				if err := c.fill(); err != nil {
					return nil, err
				}
			}
			k := min(left, c.s.End-c.s.Pos)
			c.pkt = append(c.pkt, c.s.Buf[c.s.Pos:c.s.Pos+k]...)
			c.s.Pos += k
			left -= k
		}
		if n < maxPayload {
			return c.pkt, nil
		}
	}
}

// readOK parses an OK packet and returns its affected-rows count.
func (c *Conn) readOK(p []byte) int64 {
	r := reader{b: p}
	r.skip(1) // 0x00
	affected := r.lenenc()
	r.lenenc() // last insert id
	if s := r.uint16(); !r.err {
		c.status = s
	}
	return int64(affected)
}

// isEOF reports an EOF packet (0xfe, shorter than 9 bytes).
func isEOF(p []byte) bool { return len(p) > 0 && len(p) < 9 && p[0] == 0xfe }

// eofStatus returns the status flags of an EOF packet.
func eofStatus(p []byte) uint16 {
	if len(p) >= 5 {
		return binary.LittleEndian.Uint16(p[3:5])
	}
	return 0
}

// parseError decodes an ERR packet.
func parseError(p []byte) error {
	r := reader{b: p}
	r.skip(1) // 0xff
	e := &Error{Number: r.uint16()}
	rest := r.rest()
	if len(rest) > 0 && rest[0] == '#' && len(rest) >= 6 {
		e.SQLState = string(rest[1:6])
		rest = rest[6:]
	}
	e.Message = string(rest)
	return e
}

// result reads the reply to a statement: an OK packet, an error, or result
// sets whose rows are read and skipped. It returns the affected rows of the
// last OK packet and whether there was a result set.
func (c *Conn) result() (affected int64, rows bool, err error) {
	for {
		p, err := c.readPacket()
		if err != nil {
			return 0, rows, err
		}
		if len(p) == 0 {
			return 0, rows, errors.New("mysqlwire: empty reply")
		}
		switch p[0] {
		case 0x00:
			affected = c.readOK(p)
		case 0xff:
			// Later packets of a multi-result reply never come after an error.
			return 0, rows, parseError(p)
		case 0xfb:
			return 0, rows, errors.New("mysqlwire: LOCAL INFILE request not supported")
		default:
			rows = true
			if err := c.skipResultSet(); err != nil {
				return 0, rows, err
			}
		}
		if c.status&statusMoreResults == 0 {
			return affected, rows, nil
		}
	}
}

// skipResultSet reads the column definitions and rows of a result set
// whose column count was just read.
func (c *Conn) skipResultSet() error {
	eofs := 0
	for {
		p, err := c.readPacket()
		if err != nil {
			return err
		}
		switch {
		case isEOF(p):
			eofs++
			if eofs == 2 {
				c.status = eofStatus(p)
				return nil
			}
		case len(p) > 0 && p[0] == 0xff:
			return parseError(p)
		}
	}
}
