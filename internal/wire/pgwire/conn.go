// Package pgwire is a lean client for the PostgreSQL frontend/backend
// protocol (version 3), made for the benchmark hot path: one connection
// used by one goroutine, statements prepared once per connection (Parse and
// Describe once; Bind, Execute and Sync per call, in one write), binary
// parameters and results where the type allows, result rows skipped
// without decoding unless the caller reads them (QueryFunc and Row).
// Authentication: trust, password, md5 and SCRAM-SHA-256; TLS through the
// SSLRequest when Config.TLS is set.
//
// Each connection owns a blocking socket read and written with raw system
// calls, as libpq does and as package mysqlwire does (rawsock.Socket): no
// netpoller wake-ups, no driver goroutines, no allocation per statement. A
// waiting connection keeps its goroutine's P, so a program with N
// connections in use wants GOMAXPROCS above N (the runner sees to it for
// workload.Dialer workers). Config.Netpoll uses Go's netpoller instead, for
// comparison (BenchmarkWaiting).
//
// A Conn is used by one goroutine at a time, except Abort, which any
// goroutine may call. Its reads and writes wait until the server answers,
// Abort is called, or the deadline of SetDeadline passes; Dial gives up
// when its context ends. Malformed server data is an error, never a panic.
package pgwire

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// ErrClosed is returned by a Conn that was closed or aborted.
var ErrClosed = errors.New("pgwire: connection closed")

// ErrNoTLS says that TLS was required (Config.TLS without TLSPreferred)
// but the server refused the SSLRequest.
var ErrNoTLS = errors.New("pgwire: TLS required but the server does not offer it (ssl off); use sslmode=prefer to allow plain text")

// Config says where and as whom to connect.
type Config struct {
	// Addr is host:port for TCP; Socket, if set, is the path of a Unix
	// socket (".../.s.PGSQL.5432") and wins.
	Addr   string
	Socket string
	User   string
	// Password is sent only as the server's method asks (md5 and SCRAM
	// never send it as it is; "password" does, in clear text).
	Password string
	Database string
	// Params are run-time parameters sent in the startup message
	// (application_name, search_path...).
	Params map[string]string
	// Timeout bounds connecting and the startup; 0 means 10 s.
	Timeout time.Duration
	// TLS, if set, encrypts the connection (SSLRequest); a server that
	// refuses is an error (ErrNoTLS) unless TLSPreferred, when the
	// connection stays plain.
	TLS          *tls.Config
	TLSPreferred bool
	// Netpoll waits with Go's netpoller (a net.Conn) instead of blocking
	// system calls; kept for measurement (BenchmarkWaiting).
	Netpoll bool
}

// Conn is one client connection.
type Conn struct {
	// s is the socket (a net.Conn with Config.Netpoll), its read buffer
	// (s.Buf[s.Pos:s.End] is unread), deadline, Abort and TLS.
	s    rawsock.Socket
	busy atomic.Bool // a request is waiting for its reply (Abort cancels it)
	wbuf []byte

	cancelAddr Config // where a CancelRequest goes
	pid, key   uint32 // BackendKeyData
	txStatus   byte   // of the last ReadyForQuery: 'I', 'T' or 'E'
	params     map[string]string
	nstmt      int // statement names used
	row        Row // the row handed to QueryFunc callbacks
	unnamed    desc
	pipe       *Pipeline
	auth       string // the authentication method the server asked for
	// step is the reply Poll reads (Send).
	step replyState
	// results is the number of results of the last reply (Results).
	results int
}

// Dial connects, optionally negotiates TLS, and authenticates. It gives
// up, with ctx's error, once ctx is done (or at its deadline, if sooner
// than cfg.Timeout).
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	deadline := rawsock.DialDeadline(ctx, cfg.Timeout)
	network := "tcp"
	if cfg.Socket != "" {
		network = "unix"
	}
	fd := -1
	var nc net.Conn
	var err error
	if cfg.Netpoll {
		addr := cfg.Addr
		if network == "unix" {
			addr = cfg.Socket
		}
		d := net.Dialer{Deadline: deadline, KeepAliveConfig: net.KeepAliveConfig{Enable: true,
			Idle: rawsock.KeepAliveIdle, Interval: rawsock.KeepAliveInterval, Count: rawsock.KeepAliveCount}}
		nc, err = d.DialContext(ctx, network, addr)
	} else {
		fd, err = dialRaw(ctx, cfg, deadline, func() bool { return ctx.Err() != nil })
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if _, ok := err.(*net.OpError); !ok {
			err = &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return nil, err
	}
	c := newConn(fd, nc, cfg)
	stop := context.AfterFunc(ctx, c.Abort)
	defer stop()
	c.SetDeadline(deadline)
	if err := c.startup(cfg); err != nil {
		c.Abort()
		c.Close()
		var pe *Error
		var ve *tls.CertificateVerificationError
		if errors.As(err, &pe) || errors.Is(err, ErrNoTLS) || errors.As(err, &ve) || errors.Is(err, ErrUnsupportedAuth) {
			return nil, err // the server's answer, as it is: no lost connection
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if _, ok := err.(*net.OpError); !ok {
			err = &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return nil, err
	}
	if !stop() {
		c.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
	}
	c.SetDeadline(time.Time{})
	if err := c.s.Adopt(ctx); err != nil {
		c.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	return c, nil
}

// newConn returns a Conn on the connected socket fd, or on nc (Netpoll),
// for cfg.
func newConn(fd int, nc net.Conn, cfg Config) *Conn {
	c := &Conn{wbuf: make([]byte, 0, 4<<10), cancelAddr: cfg}
	c.s.Open(fd, nc, 16<<10, "pgwire", "postgres", ErrClosed)
	c.row.c = c
	// A request waiting for its reply is cancelled on the server too;
	// busy is read before the shutdown wakes the waiting call, which
	// clears it.
	c.s.OnAbort(func() {
		if c.busy.Load() && c.pid != 0 {
			go func() { _ = c.Cancel(context.Background()) }()
		}
	})
	return c
}

// address resolves cfg's address.
func address(ctx context.Context, cfg Config) (int, syscall.Sockaddr, error) {
	return rawsock.Address(ctx, cfg.Socket, cfg.Addr)
}

// dialRaw opens a blocking socket to cfg's address (see package rawsock),
// connected by deadline or until stop reports true.
func dialRaw(ctx context.Context, cfg Config, deadline time.Time, stop func() bool) (int, error) {
	domain, sa, err := address(ctx, cfg)
	if err != nil {
		return -1, err
	}
	fd, err := rawsock.NewSocket(domain)
	if err != nil {
		return -1, err
	}
	if err := rawsock.Establish(fd, sa, deadline, stop); err != nil {
		syscall.Close(fd)
		if err == rawsock.ErrStopped {
			err = ErrClosed
		}
		return -1, err
	}
	return fd, nil
}

// startup negotiates TLS, sends the startup message and authenticates,
// until the first ReadyForQuery.
func (c *Conn) startup(cfg Config) error {
	if cfg.TLS != nil {
		if err := c.startTLS(cfg.TLS, cfg.TLSPreferred); err != nil {
			return err
		}
	}
	c.wbuf = append(c.wbuf[:0], 0, 0, 0, 0)
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, 3<<16) // protocol 3.0
	kv := func(k, v string) {
		c.wbuf = append(append(c.wbuf, k...), 0)
		c.wbuf = append(append(c.wbuf, v...), 0)
	}
	kv("user", cfg.User)
	if cfg.Database != "" {
		kv("database", cfg.Database)
	}
	for k, v := range cfg.Params {
		kv(k, v)
	}
	c.wbuf = append(c.wbuf, 0)
	binary.BigEndian.PutUint32(c.wbuf, uint32(len(c.wbuf)))
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.authenticate(cfg); err != nil {
		return err
	}
	c.params = map[string]string{}
	for {
		t, p, err := c.readMsg()
		if err != nil {
			return err
		}
		switch t {
		case 'K':
			if len(p) < 8 {
				return errors.New("pgwire: short BackendKeyData")
			}
			c.pid, c.key = binary.BigEndian.Uint32(p), binary.BigEndian.Uint32(p[4:])
		case 'S':
			r := reader{b: p}
			k, v := r.cstring(), r.cstring()
			if !r.err {
				c.params[k] = v
			}
		case 'Z':
			c.readyFor(p)
			return nil
		case 'E':
			return parseError(p)
		case 'N':
		default:
			return fmt.Errorf("pgwire: unexpected message %q during startup", t)
		}
	}
}

// ParameterStatus returns a run-time parameter the server reported
// (server_version, client_encoding, ...).
func (c *Conn) ParameterStatus(name string) string { return c.params[name] }

// Fd is the connection's socket (-1 with Config.Netpoll), for a
// measurement that drives the protocol on it itself (bench/coro-cost);
// anything it leaves unread puts the Conn out of step.
func (c *Conn) Fd() int { return c.s.Fd() }

// TxStatus is the transaction status of the last ReadyForQuery: 'I' idle,
// 'T' in a transaction, 'E' in a failed transaction.
func (c *Conn) TxStatus() byte { return c.txStatus }

// SetDeadline bounds the reads and writes of later calls; the zero time,
// the default after Dial, lets them wait until Abort. A call still waiting
// at t fails with a timeout (a *net.OpError wrapping syscall.ETIMEDOUT) and
// aborts the Conn. For the Conn's owner, like every method but Abort.
func (c *Conn) SetDeadline(t time.Time) { c.s.Deadline = t }

// Abort makes the request in flight, and every later call, fail at once
// with ErrClosed: it shuts the socket down and, when a request was waiting
// for its reply, sends the server a CancelRequest (in the background) so
// that the statement stops there too. Safe to call from any goroutine, more
// than once, and after Close (when it does nothing).
func (c *Conn) Abort() { c.s.Abort() }

// Cancel asks the server, on a connection of its own, to cancel the
// statement running on c (CancelRequest with c's backend key). The server
// does not answer; the statement, if any was running, fails with SQLSTATE
// 57014. Safe to call from any goroutine.
func (c *Conn) Cancel(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	network, addr := "tcp", c.cancelAddr.Addr
	if c.cancelAddr.Socket != "" {
		network, addr = "unix", c.cancelAddr.Socket
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	var m [16]byte
	binary.BigEndian.PutUint32(m[0:], 16)
	binary.BigEndian.PutUint32(m[4:], 80877102)
	binary.BigEndian.PutUint32(m[8:], c.pid)
	binary.BigEndian.PutUint32(m[12:], c.key)
	if _, err := nc.Write(m[:]); err != nil {
		return err
	}
	// The server closes the connection once it has read the request.
	var b [1]byte
	_, _ = nc.Read(b[:])
	return nil
}

// stopped reports that the Conn was aborted or closed.
func (c *Conn) stopped() bool { return c.s.Stopped() }

// OnClose sets f to run once, when Close releases the socket (replacing any
// earlier f). Set it before the Conn is shared.
func (c *Conn) OnClose(f func()) { c.s.OnClose(f) }

// Close says goodbye to the server (Terminate) and releases the socket.
// Later calls return ErrClosed (Close itself returns nil).
func (c *Conn) Close() error {
	if !c.stopped() {
		c.wbuf = append(c.wbuf[:0], 'X', 0, 0, 0, 4)
		_ = c.flush()
	}
	return c.s.Close()
}

// readyFor records a ReadyForQuery's transaction status.
func (c *Conn) readyFor(p []byte) {
	if len(p) > 0 {
		c.txStatus = p[0]
	}
}

// flush sends c.wbuf.
func (c *Conn) flush() error {
	if c.stopped() {
		return ErrClosed
	}
	err := c.s.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	return err
}
