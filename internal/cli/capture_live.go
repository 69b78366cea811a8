package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/capture/live"
	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
)

// captureLive runs `dbarena capture --sandbox NAME | --target T --time D`.
// liveFlags are live capture's flags.
type liveFlags struct {
	name, tgt, out string
	d              time.Duration
	perfSchema     bool
	cred           credentialFlags
	filter         captureFilterFlags
}

func (l *liveFlags) flags(fs *pflag.FlagSet) {
	fs.StringVar(&l.name, "sandbox", "", "sandbox to capture (its logs are read directly)")
	fs.StringVar(&l.tgt, "target", "", "server to capture (DSN or sandbox:NAME; a MySQL-family DSN needs SUPER or SYSTEM_VARIABLES_ADMIN and uses mysql.general_log)")
	fs.Var(secondsDuration{&l.d}, "time", "how long to capture (e.g. 60s, 5m; Ctrl-C ends it early and keeps what was captured)")
	fs.StringVarP(&l.out, "output", "o", "", "capture file to write (default: standard output)")
	fs.BoolVar(&l.perfSchema, "performance-schema", false, "MySQL family: read performance_schema's statement history (durations, rows; needs performance_schema=ON) instead of the general log")
	l.cred.flags(fs)
	l.filter.flags(fs)
}

func (a *App) captureLive(ctx context.Context, args []string) error {
	fs := newFlagSet("capture")
	var lf liveFlags
	lf.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	name, tgt, out, d, perfSchema, cred, filter := lf.name, lf.tgt, lf.out, lf.d, lf.perfSchema, lf.cred, &lf.filter
	f, errs := filter.filter(time.UTC)
	for _, k := range f.Kinds {
		if !slices.Contains(capture.Kinds, k) {
			errs = append(errs, fmt.Errorf("--kinds: unknown kind %q (want %s)", k, strings.Join(capture.Kinds, ",")))
		}
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected argument %q (did you mean `dbarena capture convert`?)", fs.Arg(0)))
	}
	if (name == "") == (tgt == "") {
		errs = append(errs, errors.New("give one of --sandbox NAME or --target T"))
	}
	if d <= 0 {
		errs = append(errs, errors.New("--time is required (how long to capture)"))
	}
	if len(errs) > 0 {
		return validate(errs)
	}
	if strings.HasPrefix(tgt, "sandbox:") {
		name, tgt = strings.TrimPrefix(tgt, "sandbox:"), ""
	}
	o := live.Options{Duration: d, Filter: f, PerfSchema: perfSchema, Notify: func(msg string) { fmt.Fprintln(a.Stderr, "dbarena capture: "+msg) }}
	if name != "" {
		sb, err := a.sandboxes().Get(name)
		if errors.Is(err, sandbox.ErrNotFound) {
			return usagef("--sandbox %s: no such sandbox (see `dbarena server list`)", name)
		}
		if err != nil {
			return unreachable(err)
		}
		if sb.State != sandbox.StateRunning {
			return unreachable(fmt.Errorf("--sandbox %s is %s: start it with `dbarena server start %s`", name, sb.State, name))
		}
		o.Admin, o.Datadir = sb.AdminTarget(), sb.Datadir
		if dialect.MustFor(sb.Flavor).LiveCapture() == flavor.CaptureServerLog {
			o.ErrorLog = sb.ErrorLog
		}
	} else {
		t, err := a.resolveTarget(ctx, tgt, cred)
		if err != nil {
			return err
		}
		o.Admin = t
	}
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	res, err := convert.Write(out, a.Stdout, func(w io.Writer) (convert.Result, error) { return live.Capture(ctx, o, w) })
	if err != nil {
		return failed(fmt.Errorf("%s", o.Admin.Mask(err.Error())))
	}
	console.Conversion(a.Stderr, res, out, 0)
	return nil
}

// convertGeneralTable converts the mysql.general_log table of a server.
func (a *App) convertGeneralTable(ctx context.Context, spec string, cred credentialFlags, o convert.Options, files []string, out string) error {
	if spec == "" {
		return usagef("--from %s reads a server's table: give --target", convert.MySQLGeneralTable)
	}
	if len(files) > 0 {
		return usagef("--from %s reads no files (got %q)", convert.MySQLGeneralTable, files[0])
	}
	t, err := a.resolveTarget(ctx, spec, cred)
	if err != nil {
		return err
	}
	if dialect.MustFor(t.Flavor).LiveCapture() != flavor.CaptureGeneralLog {
		return usagef("--from %s needs a MySQL-family --target", convert.MySQLGeneralTable)
	}
	start := time.Now()
	res, err := convert.Write(out, a.Stdout, func(w io.Writer) (convert.Result, error) {
		return live.ConvertGeneralTable(ctx, t, o.Filter, w)
	})
	if err != nil {
		return failed(fmt.Errorf("%s", t.Mask(err.Error())))
	}
	console.Conversion(a.Stderr, res, out, time.Since(start))
	return nil
}
