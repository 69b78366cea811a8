package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/dbarena/dbarena/internal/workload"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dbarena/dbarena/internal/store"
)

const resultsUsage = `dbarena results COMMAND

  list [--json] [--tag KEY=VALUE ...] [--workload NAME] [--limit N] [--results PATH]
  show ID [--json] [--results PATH]
`

func (a *App) results(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("name a results command: list, show")
	}
	switch args[0] {
	case "list":
		return a.resultsList(ctx, args[1:])
	case "show":
		return a.resultsShow(ctx, args[1:])
	}
	return usagef("unknown results command %q (want list, show)", args[0])
}

func (a *App) openStore(ctx context.Context, path string) (*store.Store, error) {
	st, err := store.Open(ctx, a.resultsPath(path))
	if err != nil {
		return nil, usagef("--results: %w", err)
	}
	return st, nil
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
	fs.StringVar(&path, "results", "", "results store (default $DBARENA_HOME/results.db)")
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
	st, err := a.openStore(ctx, path)
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
	tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tWORKLOAD\tSERVER\tTHREADS\tTPS\tQPS\tP95 MS\tSTATUS\tTAGS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s %s\t%d\t%.2f\t%.2f\t%.2f\t%s\t%s\n", r.ID,
			r.StartedAt.Local().Format("2006-01-02 15:04:05"), r.Workload, r.Flavor, r.Version,
			r.Threads, r.TPS, r.QPS, r.P95MS, r.Status, formatTags(r.Tags))
	}
	return tw.Flush()
}

func formatTags(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + tags[k]
	}
	return strings.Join(parts, ",")
}

func (a *App) resultsShow(ctx context.Context, args []string) error {
	var (
		asJSON bool
		path   string
	)
	fs := newFlagSet("results show")
	fs.BoolVar(&asJSON, "json", false, "print the run summary (dbarena.run/v1) as JSON")
	fs.StringVar(&path, "results", "", "results store (default $DBARENA_HOME/results.db)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("results show needs exactly one run ID")
	}
	id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || id < 1 {
		return usagef("results show: %q is not a run ID", fs.Arg(0))
	}
	st, err := a.openStore(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	run, err := st.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("results show: no run %d in %s", id, a.resultsPath(path))
	}
	if err != nil {
		return failed(err)
	}
	run.Histogram = ""
	if asJSON {
		return a.printJSON(run)
	}
	fmt.Fprintf(a.Stdout, "Run %d: %s on %s %s (%s), %d threads, %s\n", run.ID, run.Workload,
		run.Target.Flavor, run.Target.Version, run.Target.DSN, run.Threads, run.Status)
	fmt.Fprintf(a.Stdout, "Started %s, dbarena %s on %s (%s, %d cores)\n",
		run.StartedAt.Local().Format("2006-01-02 15:04:05"), run.Dbarena.Version, run.Host.Hostname,
		run.Host.CPUModel, run.Host.Cores)
	fmt.Fprintf(a.Stdout, "Command: %s\n", strings.Join(run.Dbarena.Command, " "))
	if len(run.Tags) > 0 {
		fmt.Fprintf(a.Stdout, "Tags: %s\n", formatTags(run.Tags))
	}
	a.printSummary(run)
	if w, err := a.Registry.New(run.Workload); err == nil {
		if rep, ok := w.(workload.Reporter); ok {
			fmt.Fprint(a.Stdout, rep.FormatSummary(run))
		}
	}
	return nil
}
