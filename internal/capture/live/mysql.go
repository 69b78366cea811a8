package live

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/capture/mysqllog"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// mysqlSettings are the globals a capture changes, in restore order.
var mysqlSettings = []string{"general_log", "log_output", "general_log_file"}

func captureMySQL(ctx context.Context, o Options, w io.Writer) (res convert.Result, err error) {
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
	var self string
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&self); err != nil {
		return res, err
	}
	prev := map[string]string{}
	for _, k := range mysqlSettings {
		var v string
		if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL."+k).Scan(&v); err != nil {
			return res, fmt.Errorf("read %s: %w", k, err)
		}
		prev[k] = v
	}
	file := fmt.Sprintf("dbarena-capture-%d.log", time.Now().UnixNano())
	local := o.Datadir != ""
	set := []struct{ k, v string }{{"log_output", "TABLE"}}
	if local {
		set = []struct{ k, v string }{{"general_log_file", file}, {"log_output", "FILE"}}
	}
	var start string
	if err := conn.QueryRowContext(ctx, "SELECT NOW(6)").Scan(&start); err != nil {
		return res, err
	}
	// From here on, the previous settings are restored whatever happens.
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		defer cancel()
		var errs []error
		for _, k := range mysqlSettings {
			q, args := "SET GLOBAL "+k+" = ?", []any{prev[k]}
			if k == "general_log" {
				q, args = "SET GLOBAL general_log = OFF", nil
				if prev[k] == "1" || prev[k] == "ON" {
					q = "SET GLOBAL general_log = ON"
				}
			}
			if _, e := conn.ExecContext(rctx, q, args...); e != nil {
				errs = append(errs, fmt.Errorf("restore %s=%s: %w", k, prev[k], e))
			}
		}
		if len(errs) > 0 && err == nil {
			err = fmt.Errorf("capture done, but the server's settings could not all be restored: %v", errs)
		} else {
			o.notify("restored general_log=%s log_output=%s general_log_file=%s", prev["general_log"], prev["log_output"], prev["general_log_file"])
		}
	}()
	for _, s := range set {
		if _, err := conn.ExecContext(ctx, "SET GLOBAL "+s.k+" = ?", s.v); err != nil {
			return res, fmt.Errorf("set %s: %w", s.k, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "SET GLOBAL general_log = ON"); err != nil {
		return res, fmt.Errorf("turn the general log on: %w", err)
	}
	o.notify("general log on (log_output=%s) for %s", set[len(set)-1].v, o.Duration)
	_ = poller.Sleep(ctx, o.Duration)
	rctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	if _, err := conn.ExecContext(rctx, "SET GLOBAL general_log = OFF"); err != nil {
		return res, fmt.Errorf("turn the general log off: %w", err)
	}
	c := convert.NewCollector(o.Filter, &res.Stats)
	in := &capture.Input{Name: "general log", Stats: &res.Stats, Loc: time.Local}
	if local {
		path := filepath.Join(o.Datadir, file)
		defer os.Remove(path)
		f, err := os.Open(path)
		if err != nil {
			return res, fmt.Errorf("read the general log: %w", err)
		}
		defer f.Close()
		in.Name = path
		if err := mysqllog.ParseGeneral(f, in, excluding(c, self)); err != nil {
			return res, err
		}
		if st, err := f.Stat(); err == nil {
			res.Bytes = st.Size()
		}
	} else {
		if err := ReadGeneralTable(rctx, conn, start, in, excluding(c, self)); err != nil {
			return res, err
		}
	}
	h := capture.Header{Flavor: "mysql", Source: "live:mysql"}
	h, err = c.Write(w, h)
	res.Header, res.Events = h, int64(c.Len())
	return res, err
}

// ReadGeneralTable reads mysql.general_log rows logged at or after since
// (the server's NOW(6) as text; "" for all rows; log_output=TABLE) through conn into emit, as the general log file
// would give them.
func ReadGeneralTable(ctx context.Context, conn *sql.Conn, since string, in *capture.Input, emit func(*capture.Record) error) error {
	rows, err := conn.QueryContext(ctx, `SELECT CAST(UNIX_TIMESTAMP(event_time) * 1000000 AS SIGNED), thread_id, command_type, argument
		FROM mysql.general_log WHERE event_time >= ? ORDER BY event_time`, since)
	if err != nil {
		return fmt.Errorf("read mysql.general_log: %w", err)
	}
	defer rows.Close()
	g := mysqllog.NewGeneral(in, emit)
	var (
		at      int64
		id      uint64
		cmd     string
		arg     []byte
		lastIDs = map[uint64]string{}
	)
	for rows.Next() {
		if err := rows.Scan(&at, &id, &cmd, &arg); err != nil {
			return fmt.Errorf("read mysql.general_log: %w", err)
		}
		if in.Stats != nil {
			in.Stats.Lines++
		}
		sid, ok := lastIDs[id]
		if !ok {
			sid = strconv.FormatUint(id, 10)
			lastIDs[id] = sid
		}
		if err := g.Entry(at, sid, cmd, string(arg)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return g.End()
}
