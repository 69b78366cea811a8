package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/results/console"
)

// captureFilterFlags are the filters of capture and capture convert.
type captureFilterFlags struct {
	since, until                      string
	databases, users, sessions, kinds []string
	readOnly                          bool
}

func (f *captureFilterFlags) flags(fs *pflag.FlagSet) {
	fs.StringVar(&f.since, "since", "", "keep events starting at or after this time (RFC 3339, or YYYY-MM-DD HH:MM:SS in --time-zone)")
	fs.StringVar(&f.until, "until", "", "keep events starting before this time")
	fs.StringSliceVar(&f.databases, "databases", nil, "keep statements on these databases (comma-separated)")
	fs.StringSliceVar(&f.users, "users", nil, "keep events of these users")
	fs.StringSliceVar(&f.sessions, "sessions", nil, "keep events of these sessions (thread ids, PostgreSQL session ids)")
	fs.StringSliceVar(&f.kinds, "kinds", nil, "keep these event kinds: "+strings.Join(capture.Kinds, ","))
	fs.BoolVar(&f.readOnly, "read-only", false, "keep SELECT and SHOW (with the session state they need: connect, quit, USE, SET, transaction control)")
}

func (f *captureFilterFlags) filter(loc *time.Location) (capture.Filter, []error) {
	var errs []error
	out := capture.Filter{Databases: f.databases, Users: f.users, Sessions: f.sessions, Kinds: f.kinds, ReadOnly: f.readOnly}
	parse := func(flag, v string) time.Time {
		t, err := capture.ParseTime(v, loc)
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s %w", flag, err))
		}
		return t
	}
	out.Since, out.Until = parse("since", f.since), parse("until", f.until)
	return out, errs
}

// capture runs `dbarena capture convert` and live capture.
func (a *App) capture(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "convert" {
		return a.captureConvert(ctx, args[1:])
	}
	return a.captureLive(ctx, args)
}

// convertFlags are capture convert's flags.
type convertFlags struct {
	o      convert.Options
	out    string
	tz     string
	tgt    string
	cred   credentialFlags
	filter captureFilterFlags
}

func (c *convertFlags) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.o.From, "from", "", "log format: "+strings.Join(convert.Formats, ", ")+", or "+convert.MySQLGeneralTable+" (with --target)")
	fs.StringVar(&c.tgt, "target", "", "server whose mysql.general_log table is read (--from "+convert.MySQLGeneralTable+")")
	c.cred.flags(fs)
	fs.StringVarP(&c.out, "output", "o", "", "capture file to write (default: standard output)")
	fs.BoolVar(&c.o.SkipBad, "skip-bad", false, "count malformed lines and go on instead of failing")
	fs.StringVar(&c.o.LogLinePrefix, "log-line-prefix", "", "the server's log_line_prefix (pg-stderr, pg-syslog; default: detect it)")
	fs.IntVar(&c.o.SyslogYear, "year", 0, "year of a pg-syslog log's first line (syslog writes none; default: the year the file was last written)")
	fs.StringVar(&c.tz, "time-zone", "UTC", "zone of log times written without one (MySQL YYMMDD HH:MM:SS); PostgreSQL zone abbreviations this zone uses are read in it, others by PostgreSQL's default abbreviation set")
	fs.Var(pgSessionsValue{&c.o.PGSessions}, "pg-sessions", "where a PostgreSQL log's sessions come from: auto (connection lines when the log has them, else each line's %c/%p), connections (require log_connections/log_disconnections lines), line (each line's %c, csvlog session_id, or %p)")
	c.filter.flags(fs)
}

// captureUsage is `dbarena help capture`.
func captureUsage() string {
	cf, lf := newFlagSet("capture convert"), newFlagSet("capture")
	new(convertFlags).flags(cf)
	new(liveFlags).flags(lf)
	return "dbarena capture convert LOG... --from FORMAT [-o FILE] [flags]\n  turn server logs into a capture file (dbarena.capture/v1, docs/CLI.md)\n\nFlags:\n" +
		cf.FlagUsages() +
		"\ndbarena capture --sandbox NAME | --target T --time D [-o FILE] [flags]\n  capture a running server for a while; its settings are restored after\n\nFlags:\n" +
		lf.FlagUsages()
}

func (a *App) captureConvert(ctx context.Context, args []string) error {
	fs := newFlagSet("capture convert")
	var cf convertFlags
	cf.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o, out, tz, filter, tgt, cred := &cf.o, &cf.out, &cf.tz, &cf.filter, &cf.tgt, cf.cred
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return usagef("--time-zone %q: %v", *tz, err)
	}
	o.Loc = loc
	f, errs := filter.filter(loc)
	o.Filter = f
	if o.From == convert.MySQLGeneralTable {
		if len(errs) > 0 {
			return validate(errs)
		}
		return a.convertGeneralTable(ctx, *tgt, cred, *o, fs.Args(), *out)
	}
	if o.From == "" {
		errs = append(errs, fmt.Errorf("--from is required (%s)", strings.Join(convert.Formats, ", ")))
	}
	if *tgt != "" {
		errs = append(errs, fmt.Errorf("--target applies to --from %s only", convert.MySQLGeneralTable))
	}
	if fs.NArg() == 0 {
		errs = append(errs, fmt.Errorf("no log file given"))
	}
	if o.From != "" {
		errs = append(errs, o.Validate()...)
	}
	if len(errs) > 0 {
		return validate(errs)
	}
	for _, p := range fs.Args() {
		if _, err := os.Stat(p); err != nil {
			return usagef("%v", err)
		}
	}
	// The conversion keeps every event until it is sorted: collect garbage
	// less often (a third less CPU on a general log).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	start := time.Now()
	var res convert.Result
	if *out == "" {
		res, err = convert.Files(fs.Args(), *o, a.Stdout)
	} else {
		res, err = convert.ToFile(fs.Args(), *o, *out)
	}
	if err != nil {
		return usagef("%v", err)
	}
	console.Conversion(a.Stderr, res, *out, time.Since(start))
	return nil
}
