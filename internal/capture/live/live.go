// Package live captures a running server's traffic for a while: it turns
// the server's statement logging on, waits, restores the server's previous
// settings (also when the context ends: the restore runs on a fresh
// context) and converts what was logged.
//
// MySQL family: the general query log, to a file in the data directory
// when the server is local (a sandbox: Options.Datadir), else to the
// mysql.general_log table (log_output=TABLE), read back with SELECT.
// PostgreSQL (sandboxes only: the log must be readable): log_statement=all,
// log_connections, log_disconnections and a log_line_prefix naming the
// session, set with ALTER SYSTEM and pg_reload_conf() (no restart), read
// from the server's stderr log (the sandbox's error.log).
//
// The capturing connection's own statements are left out.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Options configure a live capture.
type Options struct {
	// Admin is a connection allowed to change global settings (SUPER or
	// SYSTEM_VARIABLES_ADMIN; a PostgreSQL superuser).
	Admin target.Target
	// Duration is how long to capture.
	Duration time.Duration
	// Datadir is the server's data directory when dbarena can read it
	// (a sandbox); "" for a remote server.
	Datadir string
	// ErrorLog is the file the server's stderr goes to (PostgreSQL
	// sandboxes).
	ErrorLog string
	// PerfSchema (MySQL family) reads performance_schema's statement
	// history instead of the general log.
	PerfSchema bool
	// Filter selects events.
	Filter capture.Filter
	// Notify, if set, is told what is being done (settings changed and
	// restored).
	Notify func(string)
}

// restoreTimeout bounds the restore of the server's settings.
const restoreTimeout = 30 * time.Second

func (o *Options) notify(format string, args ...any) {
	if o.Notify != nil {
		o.Notify(fmt.Sprintf(format, args...))
	}
}

// Capture captures for o.Duration (less if ctx ends: what was logged is
// still converted) and writes the capture to w.
func Capture(ctx context.Context, o Options, w io.Writer) (convert.Result, error) {
	if o.Duration <= 0 {
		return convert.Result{}, errors.New("live capture: the duration must be positive")
	}
	d, err := dialect.Of(o.Admin)
	if err != nil {
		return convert.Result{}, fmt.Errorf("live capture: %w", err)
	}
	switch d.LiveCapture() {
	case flavor.CaptureGeneralLog:
		if o.PerfSchema {
			return capturePerfSchema(ctx, o, w)
		}
		return captureMySQL(ctx, o, w)
	case flavor.CaptureServerLog:
		if o.ErrorLog == "" {
			return convert.Result{}, errors.New("live capture from PostgreSQL needs a sandbox (its log must be readable here); on another server, turn on log_statement=all, log_connections, log_disconnections and convert its log with `dbarena capture convert`")
		}
		return capturePostgres(ctx, o, w)
	}
	return convert.Result{}, fmt.Errorf("live capture: unsupported flavor %s", o.Admin.Flavor)
}

// excluding wraps a collector's Add to leave out one session.
func excluding(c *convert.Collector, session string) func(*capture.Record) error {
	return func(r *capture.Record) error {
		if r.Session == session {
			return nil
		}
		return c.Add(r)
	}
}
