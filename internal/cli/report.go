package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

const reportUsage = `dbarena report [IDS...] [--tag KEY=VALUE ...] [--plan NAME] [--workload NAME]
  --format html|md|csv|json -o FILE [--baseline SERIES] [--title TEXT] [--csv-rows run|cell]
  [--max-time-series N] [--results PATH]
dbarena compare ID_A ID_B [--fail-on tps:-5%,p95:+10%] [--junit FILE] [--md-summary FILE] [--results PATH]
`

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

// loadReportRuns reads the runs a report selects: those filter selects
// (none when it selects nothing but sharded runs), then the sharded runs
// named by keys, each merged into one run (shard.Load, as results show).
// A shard's own run selected by a tag or plan is replaced by its merged
// run, so that a sharded run is one run of its series; one named by its
// number stays itself.
func (a *App) loadReportRuns(ctx context.Context, st *store.Store, filter store.Filter, keys []string) ([]*summary.Run, error) {
	var runs []*summary.Run
	if len(filter.IDs) > 0 || filter.Tags != nil || filter.Plan != "" {
		var err error
		if runs, err = report.Load(ctx, st, filter); err != nil {
			return nil, failed(err)
		}
		if len(runs) == 0 {
			return nil, usagef("no stored run matches the selection in %s", st.Location())
		}
		for _, id := range filter.IDs {
			if !containsRun(runs, id) {
				return nil, usagef("no run %d in %s", id, st.Location())
			}
		}
	}
	named := map[int64]bool{}
	for _, id := range filter.IDs {
		named[id] = true
	}
	var merge []string
	seen := map[string]bool{}
	add := func(key string) {
		if !seen[key] {
			seen[key] = true
			merge = append(merge, key)
		}
	}
	for _, key := range keys {
		add(key)
	}
	out := runs[:0]
	for _, r := range runs {
		if key := r.Tags[shard.TagRun]; key != "" && r.RunKey != "" && !named[r.ID] {
			add(key)
			continue
		}
		out = append(out, r)
	}
	runs = out
	for _, key := range merge {
		run, err := a.loadRun(ctx, st, key)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// checkOutputFile checks that -o names a file in an existing directory
// (CLI.md: -o FILE), so that a mistyped path fails before any work.
func checkOutputFile(out string) error {
	if out == "-" {
		return nil
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() || strings.HasSuffix(out, string(filepath.Separator)) {
		return usagef("-o %s: is a directory, want a file name such as %s", out, filepath.Join(out, "report.html"))
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return usagef("-o %s: directory %s does not exist", out, dir)
	case err != nil:
		return usagef("-o %s: %s", out, oneLine(err.Error()))
	case !st.IsDir():
		return usagef("-o %s: %s is not a directory", out, dir)
	}
	return nil
}

func containsRun(runs []*summary.Run, id int64) bool {
	for _, r := range runs {
		if r.ID == id {
			return true
		}
	}
	return false
}

// writeReport writes rep to out (a file, written whole, or "-").
func (a *App) writeReport(rep *report.Report, format, out, csvRows string) error {
	if out == "-" {
		w := bufio.NewWriter(a.Stdout)
		var err error
		if format == "csv" {
			err = rep.WriteCSV(w, csvRows)
		} else {
			err = rep.WriteJSON(w)
		}
		if err != nil {
			return failed(err)
		}
		return w.Flush()
	}
	tmp := out + ".tmp"
	file, err := os.Create(tmp)
	if err != nil {
		return usagef("-o %s: %s", out, oneLine(err.Error()))
	}
	w := bufio.NewWriter(file)
	switch format {
	case "html":
		err = rep.WriteHTML(w)
	case "md":
		base := strings.TrimSuffix(filepath.Base(out), filepath.Ext(out)) + "-charts"
		err = rep.WriteMarkdown(w, filepath.Join(filepath.Dir(out), base), base)
	case "csv":
		err = rep.WriteCSV(w, csvRows)
	case "json":
		err = rep.WriteJSON(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		return failed(fmt.Errorf("write %s: %w", out, err))
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
	a.printWhy(sides)
	return a.judgeCompare(&cg, limits, [2]string{fs.Arg(0), fs.Arg(1)}, sides)
}
