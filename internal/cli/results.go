package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/workload"
)

func (a *App) results(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("name a results command: list, show, export, import")
	}
	switch args[0] {
	case "list":
		return a.resultsList(ctx, args[1:])
	case "show":
		return a.resultsShow(ctx, args[1:])
	case "export":
		return a.resultsExport(ctx, args[1:])
	case "import":
		return a.resultsImport(ctx, args[1:])
	}
	return usagef("unknown results command %q (want list, show, export, import)", args[0])
}

// openStore opens the results store named by a --results value: a file
// path (its directory must exist) or a mysql:// or postgres:// DSN; empty
// means the default file under $DBARENA_HOME, created with its directories
// if needed. A bad location exits 2, an unreachable database 3; the error
// never shows a DSN's password.
func (a *App) openStore(ctx context.Context, loc string) (*store.Store, error) {
	loc, err := a.resolveStoreDSN(loc)
	if err != nil {
		return nil, err
	}
	if loc != "" {
		return openResolvedStore(ctx, loc)
	}
	return storeOpened(store.OpenDefault(ctx, store.DefaultPath(a.Getenv)))
}

// storeOpened maps the error of opening a --results store to its exit:
// 3 for an unreachable database, 2 for anything else.
func storeOpened(st *store.Store, err error) (*store.Store, error) {
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, store.ErrUnreachable):
		return nil, unreachable(fmt.Errorf("--results: %w", err))
	}
	return nil, usagef("--results: %w", err)
}

func (a *App) resultsList(ctx context.Context, args []string) error {
	var (
		asJSON bool
		path   string
		tags   [][2]string
		filter store.Filter
	)
	fs := newFlagSet("results list")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	fs.StringVar(&path, "results", "", "results store: a file or a mysql:// or postgres:// DSN (default $DBARENA_HOME/results.db)")
	fs.Var(keyValues{&tags}, "tag", "only runs with this KEY=VALUE tag (repeatable)")
	fs.StringVar(&filter.Workload, "workload", "", "only runs of this workload")
	fs.IntVar(&filter.Limit, "limit", 50, "at most this many runs, newest first (0 = all)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if len(tags) > 0 {
		filter.Tags = map[string]string{}
		for _, kv := range tags {
			filter.Tags[kv[0]] = kv[1]
		}
	}
	st, err := a.openStoreRead(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	rows, err := st.List(ctx, filter)
	if err != nil {
		return failed(err)
	}
	if asJSON {
		if rows == nil {
			rows = []store.RunRow{}
		}
		return a.printJSON(rows)
	}
	return console.RunList(a.Stdout, rows)
}

func (a *App) resultsShow(ctx context.Context, args []string) error {
	var (
		asJSON bool
		path   string
	)
	fs := newFlagSet("results show")
	fs.BoolVar(&asJSON, "json", false, "print the run summary (dbarena.run/v1) as JSON")
	fs.StringVar(&path, "results", "", "results store: a file or a mysql:// or postgres:// DSN (default $DBARENA_HOME/results.db)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("results show needs exactly one run ID")
	}
	st, err := a.openStoreRead(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	run, err := a.loadRun(ctx, st, fs.Arg(0))
	if err != nil {
		return fmt.Errorf("results show: %w", err)
	}
	run.Histogram, run.TypeHistograms = "", nil
	run.Intervals = summary.WithoutHistograms(run.Intervals)
	if asJSON {
		return a.printJSON(run)
	}
	console.Run(a.Stdout, run)
	if w, err := a.Registry.New(run.Workload); err == nil {
		if rep, ok := w.(workload.Reporter); ok {
			fmt.Fprint(a.Stdout, rep.FormatSummary(run))
		}
	}
	console.Thresholds(a.Stdout, run)
	return nil
}

func (a *App) resultsExport(ctx context.Context, args []string) error {
	var path, out string
	fs := newFlagSet("results export")
	fs.StringVarP(&out, "output", "o", "", "write the runs to this file (- for stdout)")
	fs.StringVar(&path, "results", "", "results store: a file or a mysql:// or postgres:// DSN (default $DBARENA_HOME/results.db)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("results export needs at least one run ID")
	}
	if out == "" {
		return usagef("results export: name the output file with -o FILE (or -o - for stdout)")
	}
	st, err := a.openStoreRead(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	ids, keys, err := exportSelection(ctx, st, fs.Args())
	if err != nil {
		return err
	}
	if out == "-" {
		return exportErr(st.ExportSharded(ctx, ids, keys, a.Stdout))
	}
	// Write a temporary file beside the output and rename it into place,
	// so that a failure never leaves a partial export under its name.
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return usagef("-o %s: %w", out, err)
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	if err := st.ExportSharded(ctx, ids, keys, f); err != nil {
		f.Close()
		return exportErr(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return failed(fmt.Errorf("-o %s: %w", out, err))
	}
	if err := f.Close(); err != nil {
		return failed(fmt.Errorf("-o %s: %w", out, err))
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return failed(fmt.Errorf("-o %s: %w", out, err))
	}
	fmt.Fprintf(a.Stderr, "Exported %d runs from %s to %s\n", len(ids), st.Location(), out)
	return nil
}

// exportErr maps an Export error: a missing run is bad input.
func exportErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return usagef("results export: %v", err)
	}
	return failed(fmt.Errorf("results export: %w", err))
}

func (a *App) resultsImport(ctx context.Context, args []string) error {
	var path string
	fs := newFlagSet("results import")
	fs.StringVar(&path, "results", "", "results store: a file or a mysql:// or postgres:// DSN (default $DBARENA_HOME/results.db)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("results import needs exactly one FILE (written by `dbarena results export`, or sql-bench's RUN-* or output file)")
	}
	file := fs.Arg(0)
	if ok, err := a.importSQLBench(ctx, path, file); ok {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return usagef("results import: %w", err)
	}
	defer f.Close()
	st, err := a.openStore(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := st.Import(ctx, f)
	if errors.Is(err, store.ErrBadInput) || errors.Is(err, store.ErrConflict) {
		return usagef("results import: %s: %v", file, err)
	}
	if err != nil {
		return failed(fmt.Errorf("results import: %s: %w", file, err))
	}
	fmt.Fprintf(a.Stdout, "Imported %d runs from %s into %s", len(res.IDs), file, st.Location())
	if len(res.IDs) > 0 {
		fmt.Fprintf(a.Stdout, " as runs %s", joinIDs(res.IDs))
	}
	fmt.Fprintln(a.Stdout)
	if len(res.Skipped) > 0 {
		fmt.Fprintf(a.Stdout, "Skipped %d runs already in the store (runs %s)\n", len(res.Skipped), joinIDs(res.Skipped))
	}
	for _, k := range res.Sharded {
		fmt.Fprintf(a.Stdout, "Sharded run %s imported\n", k)
	}
	for _, k := range res.ShardedSkipped {
		fmt.Fprintf(a.Stdout, "Sharded run %s already in the store\n", k)
	}
	return nil
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// exportSelection resolves the run IDs given to results export
// (shard.ExportSelection); one that names no run is a usage error.
func exportSelection(ctx context.Context, st *store.Store, args []string) ([]int64, []string, error) {
	ids, keys, err := shard.ExportSelection(ctx, st, args)
	if bad := (*shard.NoSuchRun)(nil); errors.As(err, &bad) {
		return nil, nil, usagef("%w", err)
	} else if err != nil {
		return nil, nil, failed(err)
	}
	return ids, keys, nil
}
