package console

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dbarena/dbarena/internal/results/gate"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// RunList prints `results list`: a line a stored run, newest first.
func RunList(w io.Writer, rows []store.RunRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tWORKLOAD\tSERVER\tTHREADS\tTPS\tQPS\tP95 MS\tSTATUS\tTAGS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s %s\t%d\t%.2f\t%.2f\t%.2f\t%s\t%s\n", r.ID,
			r.StartedAt.Local().Format("2006-01-02 15:04:05"), r.Workload, r.Flavor, r.Version,
			r.Threads, r.TPS, r.QPS, r.P95MS, r.Status, Tags(r.Tags))
	}
	return tw.Flush()
}

// Run prints a stored run (results show): where, when and how it ran,
// then its summary (a sharded run's with its shards).
func Run(w io.Writer, run *summary.Run) {
	name := strconv.FormatInt(run.ID, 10)
	if run.ID == 0 {
		name = run.RunKey
	}
	threads := strconv.Itoa(run.Threads) + " threads"
	if run.Jobs > 0 {
		threads += " on " + strconv.Itoa(run.Jobs) + " jobs"
	}
	var how []string
	if run.Sched != "" {
		how = append(how, run.Sched+" policy")
	}
	if run.Placement != "" {
		how = append(how, fmt.Sprintf("following the server: %d moves", run.PlacementMoves))
	}
	if len(how) > 0 {
		threads += " (" + strings.Join(how, ", ") + ")"
	}
	fmt.Fprintf(w, "Run %s: %s on %s %s (%s), %s, %s\n", name, run.Workload,
		run.Target.Flavor, run.Target.Version, run.Target.DSN, threads, run.Status)
	if run.Target.TLS != nil {
		fmt.Fprintf(w, "TLS: %s\n", run.Target.TLS)
	}
	fmt.Fprintf(w, "Started %s, dbarena %s on %s (%s, %d cores)\n",
		run.StartedAt.Local().Format("2006-01-02 15:04:05"), run.Dbarena.Version, run.Host.Hostname,
		run.Host.CPUModel, run.Host.Cores)
	fmt.Fprintf(w, "Command: %s\n", strings.Join(run.Dbarena.Command, " "))
	if len(run.Tags) > 0 {
		fmt.Fprintf(w, "Tags: %s\n", Tags(run.Tags))
	}
	if run.Shards != nil {
		Sharded(w, run)
	} else {
		Summary(w, run)
	}
}

// Tags renders tags as KEY=VALUE,... sorted by key.
func Tags(tags map[string]string) string {
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

// Thresholds prints the stored threshold results of a run (results
// show), one PASS/FAIL line each.
func Thresholds(w io.Writer, run *summary.Run) {
	if len(run.Thresholds) == 0 {
		return
	}
	fmt.Fprintln(w, "\nThresholds:")
	for _, r := range run.Thresholds {
		fmt.Fprintln(w, "    "+gate.Line(r))
	}
}
