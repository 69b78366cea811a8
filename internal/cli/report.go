package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// reportFormats maps --format values (and -o extensions) to formats.
var reportFormats = map[string]string{"html": "html", "htm": "html", "md": "md", "markdown": "md", "csv": "csv", "json": "json"}

func (a *App) report(ctx context.Context, args []string) error {
	var (
		path, format, out, workload string
		tags                        [][2]string
		opts                        = report.NewOptions()
		csvRows                     string
		filter                      store.Filter
	)
	fs := newFlagSet("report")
	fs.Var(keyValues{&tags}, "tag", "runs with this KEY=VALUE tag (repeatable)")
	fs.StringVar(&filter.Plan, "plan", "", "runs of this plan")
	fs.StringVar(&workload, "workload", "", "only runs of this workload")
	fs.StringVar(&format, "format", "", "html, md, csv or json (default: from the -o extension)")
	fs.StringVarP(&out, "output", "o", "", "file to write (- for standard output: csv, json)")
	fs.StringVar(&opts.Baseline, "baseline", "", "series the others are compared with (default: the first)")
	fs.StringVar(&opts.Title, "title", "", "report title")
	fs.StringVar(&csvRows, "csv-rows", report.ByRun, "csv: one row per run or per cell")
	fs.IntVar(&opts.MaxTimeSeries, "max-time-series", report.DefaultMaxTimeSeries, "at most this many per-run time-series charts (-1 = none)")
	fs.StringVar(&path, "results", "", "results store (default $DBARENA_HOME/results.db)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var keys []string // sharded runs, by --run-id
	for _, s := range fs.Args() {
		id, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err == nil && id > 0:
			filter.IDs = append(filter.IDs, id)
		case err == nil || shard.CheckKey(s) != nil:
			return usagef("%q is not a run ID (a number, or the --run-id of a sharded run)", s)
		default:
			keys = append(keys, s)
		}
	}
	if len(tags) > 0 {
		filter.Tags = map[string]string{}
		for _, kv := range tags {
			filter.Tags[kv[0]] = kv[1]
		}
	}
	filter.Workload = workload
	if out == "" {
		return usagef("-o FILE is required")
	}
	if err := checkOutputFile(out); err != nil {
		return err
	}
	if format == "" {
		format = strings.TrimPrefix(filepath.Ext(out), ".")
		switch {
		case format == "" && out == "-":
			return usagef("-o -: give --format csv or json for standard output")
		case format == "":
			return usagef("-o %s: cannot tell the format from the name: end it in .html, .md, .csv or .json, or give --format", out)
		}
	}
	f, ok := reportFormats[strings.ToLower(format)]
	if !ok {
		return usagef("--format: %q is not one of html, md, csv, json", format)
	}
	if len(filter.IDs) == 0 && len(keys) == 0 && filter.Tags == nil && filter.Plan == "" {
		return usagef("select runs with IDs, --tag KEY=VALUE or --plan NAME")
	}
	if out == "-" && (f == "html" || f == "md") {
		return usagef("-o: %s needs a file, not standard output", f)
	}
	if csvRows != report.ByRun && csvRows != report.ByCell {
		return usagef("--csv-rows: %q is not run or cell", csvRows)
	}
	if opts.MaxTimeSeries == 0 {
		opts.MaxTimeSeries = -1
	}
	opts.Version = Version
	if errs := opts.Validate(); len(errs) > 0 {
		return usagef("%w", errs[0])
	}

	st, err := a.openStoreRead(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := a.loadReportRuns(ctx, st, filter, keys)
	if err != nil {
		return err
	}
	rep, err := report.Build(runs, opts)
	if err != nil {
		return usagef("%w", err)
	}
	if err := a.writeReport(rep, f, out, csvRows); err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(a.Stdout, "Wrote %s report of %d run(s) to %s\n", f, len(rep.Runs), out)
	}
	return nil
}

// loadReportRuns reads the runs a report selects (report.Select); a
// selection of no run is a usage error.
func (a *App) loadReportRuns(ctx context.Context, st *store.Store, filter store.Filter, keys []string) ([]*summary.Run, error) {
	runs, err := report.Select(ctx, st, filter, keys)
	if bad := (*shard.NoSuchRun)(nil); errors.As(err, &bad) {
		return nil, usagef("%w", err)
	} else if err != nil {
		return nil, failed(err)
	}
	return runs, nil
}

// checkOutputFile checks -o (report.CheckOutput): exit 2 when it cannot
// be written.
func checkOutputFile(out string) error {
	if err := report.CheckOutput(out); err != nil {
		return usagef("%w", err)
	}
	return nil
}

// writeReport writes rep to out (report.WriteFile): exit 2 when out cannot
// be created, 1 when writing it fails.
func (a *App) writeReport(rep *report.Report, format, out, csvRows string) error {
	err := report.WriteFile(rep, format, out, csvRows, a.Stdout)
	if bad := (*report.OutputError)(nil); errors.As(err, &bad) {
		return usagef("%w", err)
	} else if err != nil {
		return failed(err)
	}
	return nil
}

func (a *App) compare(ctx context.Context, args []string) error {
	var path string
	fs := newFlagSet("compare")
	fs.StringVar(&path, "results", "", "results store (default $DBARENA_HOME/results.db)")
	threshold := fs.Float64("threshold", report.DefaultThreshold*100, "replays: percent by which a statement must be slower or faster to count as such")
	var cg compareGate
	cg.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	limits, err := cg.parse()
	if err != nil {
		return err
	}
	if *threshold <= 0 {
		return usagef("--threshold %g: must be > 0 (percent)", *threshold)
	}
	if fs.NArg() != 2 {
		return usagef("compare needs two run IDs: dbarena compare ID_A ID_B")
	}
	st, err := a.openStoreRead(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	var sides [2][]*summary.Run
	for i := range sides {
		run, err := a.loadRun(ctx, st, fs.Arg(i))
		if err != nil {
			return err
		}
		if sides[i], err = report.Rounds(ctx, st, run); err != nil {
			return failed(err)
		}
	}
	cmp, err := report.Compare(sides[0], sides[1])
	if err != nil {
		return failed(err)
	}
	if cmp.Replay != nil {
		cmp.Replay = report.CompareReplay(sides[0], sides[1], *threshold/100)
	}
	if err := cmp.Write(a.Stdout); err != nil {
		return err
	}
	console.Why(a.Stdout, sides[0], sides[1])
	return a.judgeCompare(&cg, limits, [2]string{fs.Arg(0), fs.Arg(1)}, sides)
}
