package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/capture/pglog"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// pgPrefix is the log_line_prefix a capture sets: time and session id.
const pgPrefix = "%m [%c] %q%u@%d "

// pgSettings are what a capture sets (ALTER SYSTEM, then reload).
var pgSettings = [][2]string{
	{"log_line_prefix", pgPrefix},
	{"log_statement", "all"},
	{"log_connections", "on"},
	{"log_disconnections", "on"},
}

func capturePostgres(ctx context.Context, o Options, w io.Writer) (res convert.Result, err error) {
	db, err := dialect.PostgresDialect{}.Open(o.Admin, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return res, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	var self string
	if err := conn.QueryRowContext(ctx, `SELECT to_hex(trunc(extract(epoch FROM backend_start))::bigint) || '.' || to_hex(pid)
		FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&self); err != nil {
		return res, err
	}
	// A setting already in postgresql.auto.conf is set back to its value;
	// any other is reset (the configuration file's value returns).
	type prior struct {
		value string
		auto  bool
	}
	prev := map[string]prior{}
	for _, s := range pgSettings {
		var v, file string
		if err := conn.QueryRowContext(ctx, `SELECT setting, coalesce(sourcefile, '') FROM pg_settings WHERE name = $1`, s[0]).Scan(&v, &file); err != nil {
			return res, fmt.Errorf("read %s: %w", s[0], err)
		}
		prev[s[0]] = prior{v, len(file) >= 20 && file[len(file)-20:] == "postgresql.auto.conf"}
	}
	start, err := os.Stat(o.ErrorLog)
	if err != nil {
		return res, fmt.Errorf("the server's log: %w", err)
	}
	offset := start.Size()
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		defer cancel()
		var errs []error
		for _, s := range pgSettings {
			p := prev[s[0]]
			q := fmt.Sprintf("ALTER SYSTEM RESET %s", s[0])
			if p.auto {
				q = fmt.Sprintf("ALTER SYSTEM SET %s = %s", s[0], quote(p.value))
			}
			if _, e := conn.ExecContext(rctx, q); e != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", s[0], e))
			}
		}
		if _, e := conn.ExecContext(rctx, "SELECT pg_reload_conf()"); e != nil {
			errs = append(errs, e)
		}
		if len(errs) > 0 && err == nil {
			err = fmt.Errorf("capture done, but the server's settings could not all be restored: %v", errs)
		} else {
			o.notify("restored log_statement, log_connections, log_disconnections, log_line_prefix")
		}
	}()
	for _, s := range pgSettings {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("ALTER SYSTEM SET %s = %s", s[0], quote(s[1]))); err != nil {
			return res, fmt.Errorf("set %s: %w", s[0], err)
		}
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_reload_conf()"); err != nil {
		return res, fmt.Errorf("reload: %w", err)
	}
	// The postmaster reloads asynchronously and then signals the backends:
	// once this backend has the new value, sessions forked from now on
	// have it too.
	for i := 0; ; i++ {
		var v string
		if err := conn.QueryRowContext(ctx, "SELECT current_setting('log_statement')").Scan(&v); err != nil {
			return res, err
		}
		if v == "all" {
			break
		}
		if i == 200 {
			return res, errors.New("the server did not reload its configuration within 10 s")
		}
		_ = poller.Sleep(ctx, 50*time.Millisecond)
	}
	o.notify("log_statement=all, log_connections, log_disconnections on for %s", o.Duration)
	_ = poller.Sleep(ctx, o.Duration)
	rctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	// Turn statement logging off first, then read: a session still
	// running logs nothing more.
	if _, err := conn.ExecContext(rctx, "ALTER SYSTEM SET log_statement = 'none'"); err == nil {
		conn.ExecContext(rctx, "SELECT pg_reload_conf()")
	}
	f, err := os.Open(o.ErrorLog)
	if err != nil {
		return res, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return res, err
	}
	c := convert.NewCollector(o.Filter, &res.Stats)
	in := &capture.Input{Name: o.ErrorLog, Stats: &res.Stats, SkipBad: true}
	pfx, err := pglog.CompilePrefix(pgPrefix)
	if err != nil {
		return res, err
	}
	if err := pglog.ParseStderr(f, in, pglog.StderrOptions{Prefix: pfx, Lenient: true}, excluding(c, self)); err != nil {
		return res, err
	}
	if st, err := f.Stat(); err == nil {
		res.Bytes = st.Size() - offset
	}
	h := capture.Header{Flavor: "postgres", Source: "live:postgres"}
	h, err = c.Write(w, h)
	res.Header, res.Events = h, int64(c.Len())
	return res, err
}

// quote is a PostgreSQL string literal.
func quote(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
