package live

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// Performance schema capture (MySQL family, Options.PerfSchema): the
// events_statements_history_long consumer is turned on for the window and
// the table (a ring buffer, performance_schema_events_statements_history_long_size
// rows) is read every pollEvery, keeping rows not seen before. It needs
// performance_schema=ON at server start. What it gives and lacks, beside the
// general log: durations (TIMER_WAIT) and rows, but no connects or quits (a
// session gets a connect at its first statement), texts cut at
// performance_schema_max_sql_text_length (counted as ignored "truncated"),
// statements of the binary protocol (statement/com/Execute, left out and
// counted), and rows lost when more statements than the ring holds run
// between two reads (not detectable: keep the window's statement rate below
// the ring size per poll interval).

// pollEvery is how often the history table is read.
const pollEvery = 100 * time.Millisecond

// psConsumers are turned on for the window and restored after.
var psConsumers = []string{"global_instrumentation", "thread_instrumentation", "events_statements_current", "events_statements_history_long"}

func capturePerfSchema(ctx context.Context, o Options, w io.Writer) (res convert.Result, err error) {
	db, err := dialect.MySQLDialect{}.Open(o.Admin, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return res, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	if err := statementHistory(ctx, conn); err != nil {
		return res, err
	}
	var on string
	if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL.performance_schema").Scan(&on); err != nil {
		return res, err
	}
	if on != "1" && !strings.EqualFold(on, "ON") {
		return res, errors.New("performance_schema is OFF: it can only be turned on at server start (a sandbox: dbarena server start NAME --set performance_schema=ON)")
	}
	var selfThread int64
	if err := conn.QueryRowContext(ctx, "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()").Scan(&selfThread); err != nil {
		return res, fmt.Errorf("find the capturing thread: %w", err)
	}
	prev := map[string]string{}
	for _, c := range psConsumers {
		var v string
		if err := conn.QueryRowContext(ctx, "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = ?", c).Scan(&v); err != nil {
			return res, fmt.Errorf("read consumer %s: %w", c, err)
		}
		prev[c] = v
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		defer cancel()
		var errs []error
		for _, c := range psConsumers {
			if _, e := conn.ExecContext(rctx, "UPDATE performance_schema.setup_consumers SET ENABLED = ? WHERE NAME = ?", prev[c], c); e != nil {
				errs = append(errs, e)
			}
		}
		if len(errs) > 0 && err == nil {
			err = fmt.Errorf("capture done, but the consumers could not all be restored: %v", errs)
		} else {
			o.notify("restored the performance_schema statement consumers")
		}
	}()
	for _, c := range psConsumers {
		if _, err := conn.ExecContext(ctx, "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = ?", c); err != nil {
			return res, fmt.Errorf("turn consumer %s on: %w", c, err)
		}
	}
	// The wall time of TIMER_START = 0: now minus the timer's now, read
	// from a statement of our own.
	var wallUS int64
	if err := conn.QueryRowContext(ctx, "SELECT /* dbarena capture clock */ CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)").Scan(&wallUS); err != nil {
		return res, err
	}
	var timerNow int64
	if err := conn.QueryRowContext(ctx, `SELECT TIMER_START FROM performance_schema.events_statements_history_long
		WHERE THREAD_ID = ? ORDER BY EVENT_ID DESC LIMIT 1`, selfThread).Scan(&timerNow); err != nil {
		return res, fmt.Errorf("read the statement timer: %w", err)
	}
	base := wallUS - timerNow/1e6
	p := &psReader{conn: conn, self: selfThread, base: base, seen: map[int64]int64{}, threads: map[int64]psThread{}}
	c := convert.NewCollector(o.Filter, &res.Stats)
	in := &capture.Input{Name: "performance_schema", Stats: &res.Stats}
	// The first poll marks where each thread is; the window opens after
	// it (announcing it before would lose what ran in between).
	if err := p.poll(ctx, in, c, true); err != nil {
		return res, err
	}
	o.notify("performance_schema statement history on for %s", o.Duration)
	deadline := time.Now().Add(o.Duration)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		_ = poller.Sleep(ctx, pollEvery)
		if err := p.poll(ctx, in, c, false); err != nil {
			if ctx.Err() != nil {
				break
			}
			return res, err
		}
	}
	// The server records a statement in the history just after it has
	// replied, so a statement that ended as the window closed may not be
	// there yet: give it one poll interval before the last read.
	time.Sleep(pollEvery)
	rctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	if err := p.poll(rctx, in, c, false); err != nil {
		return res, err
	}
	h := capture.Header{Flavor: "mysql", Source: "live:performance_schema"}
	h, err = c.Write(w, h)
	res.Header, res.Events = h, int64(c.Len())
	return res, err
}

type psThread struct {
	session, user, db string
	started           bool
}

type psReader struct {
	conn    *sql.Conn
	self    int64
	base    int64
	seen    map[int64]int64 // thread -> last EVENT_ID read
	threads map[int64]psThread
}

// poll reads the rows not seen yet; the first poll only records where each
// thread is (statements before the window are not captured).
func (p *psReader) poll(ctx context.Context, in *capture.Input, c *convert.Collector, first bool) error {
	rows, err := p.conn.QueryContext(ctx, `SELECT h.THREAD_ID, h.EVENT_ID, h.EVENT_NAME, h.TIMER_START, h.TIMER_WAIT,
		h.SQL_TEXT, h.CURRENT_SCHEMA, h.ROWS_SENT, h.ROWS_AFFECTED, t.PROCESSLIST_ID, t.PROCESSLIST_USER
		FROM performance_schema.events_statements_history_long h
		LEFT JOIN performance_schema.threads t ON t.THREAD_ID = h.THREAD_ID
		WHERE h.THREAD_ID <> ? ORDER BY h.THREAD_ID, h.EVENT_ID`, p.self)
	if err != nil {
		return fmt.Errorf("read events_statements_history_long: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			thread, event, start, wait, sent, affected int64
			name                                       string
			text, schema, user                         sql.NullString
			pid                                        sql.NullInt64
		)
		if err := rows.Scan(&thread, &event, &name, &start, &wait, &text, &schema, &sent, &affected, &pid, &user); err != nil {
			return fmt.Errorf("read events_statements_history_long: %w", err)
		}
		last, known := p.seen[thread]
		if known && event <= last {
			continue
		}
		p.seen[thread] = event
		if first {
			continue
		}
		t := p.threads[thread]
		if t.session == "" {
			t.session = strconv.FormatInt(thread, 10)
			if pid.Valid {
				t.session = strconv.FormatInt(pid.Int64, 10)
			}
		}
		if user.Valid {
			t.user = user.String
		}
		if !text.Valid || !strings.HasPrefix(name, "statement/sql/") {
			in.Ignore("performance_schema " + name)
			p.threads[thread] = t
			continue
		}
		if strings.HasSuffix(text.String, "...") {
			in.Ignore("performance_schema truncated")
		}
		at := p.base + start/1e6
		if !t.started {
			t.started = true
			t.db = schema.String
			c.Add(&capture.Record{At: at, Event: capture.Event{Session: t.session, User: t.user, DB: t.db, Kind: capture.KindConnect}})
		} else if schema.String != "" && schema.String != t.db {
			t.db = schema.String
			if capture.FirstWord(text.String) != "USE" {
				c.Add(&capture.Record{At: at, Event: capture.Event{Session: t.session, User: t.user, DB: t.db, Kind: capture.KindQuery,
					SQL: "USE `" + strings.ReplaceAll(t.db, "`", "``") + "`"}})
			}
		}
		p.threads[thread] = t
		dur, n := wait/1e6, sent
		if affected > 0 {
			n = affected
		}
		if err := c.Add(&capture.Record{At: at, Event: capture.Event{Session: t.session, User: t.user, DB: t.db, Kind: capture.KindQuery,
			SQL: text.String, DurUS: &dur, Rows: &n}}); err != nil {
			return err
		}
		if in.Stats != nil {
			in.Stats.Lines++
		}
	}
	return rows.Err()
}

// statementHistory fails, naming the feature, on a server whose
// performance_schema has no statement history (MySQL before 5.6.3,
// MariaDB before 10.0.1: it instruments waits only), which no setting
// turns on: the general log is the way to capture there.
func statementHistory(ctx context.Context, conn *sql.Conn) error {
	var version string
	var n int
	err := conn.QueryRowContext(ctx, `SELECT VERSION(), (SELECT COUNT(*) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME = 'events_statements_history_long')`).Scan(&version, &n)
	if err != nil {
		return fmt.Errorf("look for performance_schema.events_statements_history_long: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("--performance-schema: server %s has no performance_schema statement history (events_statements_history_long came with MySQL 5.6.3 and MariaDB 10.0): capture without --performance-schema (the general log)", version)
	}
	return nil
}
