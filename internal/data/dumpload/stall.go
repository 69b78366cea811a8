package dumpload

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// A load whose server stops answering (a stopped process, a dead host)
// would wait for ever: the driver calls block on a socket nobody reads.
// The watchdog below ends it: while the load makes no progress it pings
// the server on a connection of its own; a server that answers is busy
// (a long index build), one that answers nothing for StallTimeout has
// stalled, and the load is cancelled, which ends the drivers' calls.

// LostError is a load that lost its server: a connection broke, or the
// server answered nothing for the stall timeout. What was loaded stays.
type LostError struct {
	// Where is the statement's file:line, if one was running.
	Where string
	// Stalled is the time without an answer (0: a connection broke).
	Stalled time.Duration
	Err     error
}

func (e *LostError) Error() string {
	what := "lost the connection to the server"
	if e.Stalled > 0 {
		what = fmt.Sprintf("the server answered nothing for %s (--stall-timeout)", e.Stalled)
	}
	if e.Where != "" {
		what += " at " + e.Where
	}
	if e.Err != nil && e.Stalled == 0 {
		what += " (" + oneLine(e.Err.Error()) + ")"
	}
	return what + "; the load stopped and what it loaded stays: once the server is back, load again with --drop-existing (each table the dump creates is dropped first)"
}

func (e *LostError) Unwrap() error { return e.Err }

// isConnLost reports a broken connection to the server (not a server's
// refusal, not a bad dump).
func isConnLost(err error) bool {
	if err == nil || IsBadInput(err) {
		return false
	}
	if code, ok := serverError(err); ok {
		// PostgreSQL's connection exceptions and shutdowns; MySQL's
		// "server shutdown in progress" and "connection killed".
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "57P0") || code == "1053" || code == "1927"
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ENOENT) || errors.Is(err, pgconn.ErrConnClosed) || pgconn.Timeout(err) || errors.As(err, &ne)
}

// watch starts the watchdog of a load running under ctx; cancel ends the
// load with a *LostError. stop ends the watchdog.
func (l *loader) watch(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	timeout := l.o.StallTimeout
	if timeout <= 0 {
		return func() {}
	}
	warnAfter := timeout / 6
	if warnAfter > 10*time.Second {
		warnAfter = 10 * time.Second
	}
	tick := timeout / 60
	if tick > time.Second {
		tick = time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	var alive atomic.Int64 // unix nanoseconds of the last sign of life
	alive.Store(time.Now().UnixNano())
	var pinging atomic.Bool
	go func() {
		defer close(finished)
		t := time.NewTicker(tick)
		defer t.Stop()
		var probe conn
		defer func() {
			if probe != nil {
				probe.close()
			}
		}()
		probeDone := make(chan conn, 1)
		last := l.progressMark()
		warned := false
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case c := <-probeDone:
				probe = c
			case <-t.C:
			}
			now := time.Now()
			if m := l.progressMark(); m != last {
				last = m
				alive.Store(now.UnixNano())
			}
			idle := now.Sub(time.Unix(0, alive.Load()))
			switch {
			case idle >= timeout:
				cancel(&LostError{Stalled: timeout.Round(time.Second)})
				return
			case idle >= warnAfter && !warned:
				warned = true
				if l.o.Warn != nil {
					l.o.Warn(fmt.Sprintf("no progress and no answer from the server for %s (stopped or overloaded?); the load stops after %s without one (--stall-timeout)",
						idle.Round(time.Second), timeout))
				}
			case idle < warnAfter:
				warned = false
			}
			if idle >= 2*tick && !pinging.Load() {
				// Ask the server on a connection of its own.
				pinging.Store(true)
				c := probe
				probe = nil
				go func() {
					defer pinging.Store(false)
					pctx, pcancel := context.WithTimeout(ctx, timeout)
					defer pcancel()
					var err error
					if c == nil {
						c, err = l.dl.dial(pctx, "")
					}
					if err == nil {
						err = ping(pctx, c)
					}
					if err != nil {
						if c != nil {
							c.close()
						}
						return
					}
					alive.Store(time.Now().UnixNano())
					select {
					case probeDone <- c:
					case <-done:
						c.close()
					}
				}()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// progressMark changes whenever the load makes progress.
func (l *loader) progressMark() int64 {
	return l.counter.Load() + l.statements.Load() + l.rows.Load() + l.loadDataStatements.Load()
}

// ping checks that the server answers on c.
func ping(ctx context.Context, c conn) error {
	switch x := c.(type) {
	case *myConn:
		return x.c.PingContext(ctx)
	case *pgConn:
		return x.c.Ping(ctx)
	}
	return errors.New("unknown connection")
}

// AccountError is a load after which the loading account no longer logs
// in with its password: the dump changed it (a routine, dynamic SQL).
type AccountError struct {
	User string
	Err  error
	// Restored: the sandbox's admin set the password back.
	Restored bool
}

func (e *AccountError) Error() string {
	fix := "a sandbox gets it back with dbarena server restart NAME"
	if e.Restored {
		fix = "the sandbox's admin set it back"
	}
	return fmt.Sprintf("after the load, account %s no longer logged in (%s): the dump changed its password through a routine or dynamic SQL; %s",
		printable(e.User), oneLine(e.Err.Error()), fix)
}

func (e *AccountError) Unwrap() error { return e.Err }

// checkAccount logs in once more as the loading account, on a new
// connection.
func (l *loader) checkAccount(ctx context.Context) error {
	dl, err := newDialer(l.t)
	if err != nil {
		return nil
	}
	defer dl.close()
	c, err := dl.dial(ctx, "")
	if err == nil {
		c.close()
		return nil
	}
	switch code, _ := serverError(err); code {
	case "1045", "28P01", "28000":
	default:
		return nil
	}
	ae := &AccountError{User: l.t.User, Err: err}
	if l.o.Admin != nil && l.t.Password != "" {
		ae.Restored = l.restorePassword(ctx) == nil
	}
	return ae
}

// restorePassword sets the loading account's password back as the
// sandbox's admin, with fixed statements (the note masks the password).
func (l *loader) restorePassword(ctx context.Context) error {
	adl, err := newDialer(*l.o.Admin)
	if err != nil {
		return err
	}
	defer adl.close()
	ac, err := adl.dial(ctx, "")
	if err != nil {
		return err
	}
	defer ac.close()
	if l.syntax() == dump.Postgres {
		q := "ALTER ROLE " + quotePG(l.t.User) + " PASSWORD "
		if _, err := ac.exec(ctx, q+pgString(l.t.Password)); err != nil {
			return err
		}
		l.adminNote(q + "'***'")
		return nil
	}
	rows, err := ac.(*myConn).c.QueryContext(ctx, "SELECT Host FROM mysql.user WHERE User = ?", l.t.User)
	if err != nil {
		return err
	}
	var hosts []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return err
		}
		hosts = append(hosts, h)
	}
	rows.Close()
	// MySQL before 5.7 and MariaDB before 10.2 have no ALTER USER.
	srv := dumpServer(l.t)
	oldSyntax := srv.Version > 0 && ((srv.MariaDB && srv.Version < 100200) || (!srv.MariaDB && srv.Version < 50700))
	for _, h := range hosts {
		acct := mysqlString(l.t.User) + "@" + mysqlString(h)
		q, end := "ALTER USER "+acct+" IDENTIFIED BY ", ""
		if oldSyntax {
			q, end = "SET PASSWORD FOR "+acct+" = PASSWORD(", ")"
		}
		if _, err := ac.exec(ctx, q+mysqlString(l.t.Password)+end); err != nil {
			return err
		}
		l.adminNote(q + "'***'" + end)
	}
	if oldSyntax && len(hosts) > 0 {
		// MySQL 5.5 may keep accepting the old password until then.
		if _, err := ac.exec(ctx, "FLUSH PRIVILEGES"); err != nil {
			return err
		}
	}
	dl, err := newDialer(l.t)
	if err != nil {
		return err
	}
	defer dl.close()
	c, err := dl.dial(ctx, "")
	if err != nil {
		return err
	}
	c.close()
	return nil
}

// pgString quotes s as a PostgreSQL string literal (standard strings).
func pgString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
