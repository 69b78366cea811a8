// Package report turns stored runs into reports: a self-contained HTML page,
// Markdown with PNG charts beside it, CSV and JSON, and the terminal
// side-by-side of `dbarena compare`. It reads runs only (from the results
// store, through Source) and never prints: every renderer writes to the
// io.Writer or the files it is given.
//
// Runs are grouped into cells: the rounds of one plan cell, or, for runs
// outside a plan, runs of the same server, workload, threads and parameters
// (repeated with --rounds). Cells carry means and 95% confidence intervals
// (internal/measure/stats); series (one server or configuration each) are compared
// with a baseline series cell by cell.
//
// Beyond the sections every run gets, what a report shows of a run (the
// micro suite's winner table, a siege table row, a per-fingerprint
// comparison, a table of transaction types) is decided by the sections the
// run carries (summary.Run.ReportSections) and the data it holds, never by
// its workload's name.
//
// Charts are drawn server-side by gonum.org/v1/plot: SVG inlined in the HTML
// (no script, no external asset) and PNG files for Markdown. Runs being
// compared share axes, each series keeps one colour on the whole page
// (Report.SeriesColor), a single thread count is drawn as bars with
// confidence whiskers, legends sit below the data and every chart has a
// caption saying what it compares.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/secret"
)

// Options shape a report.
type Options struct {
	// Title heads the report; empty gives a title from the selection.
	Title string
	// Baseline is the series the others are compared with; empty means the
	// first series (the one whose first run started first).
	Baseline string
	// Version is the dbarena version writing the report.
	Version string
	// Generated is when the report was made; zero means time.Now().
	Generated time.Time
	// MaxTimeSeries caps the runs drawn over time (one per cell, the
	// round with the median throughput: in the time-series chart of their
	// workload and thread count, and in a host-resources chart of their
	// own); 0 means DefaultMaxTimeSeries and a negative value means none.
	MaxTimeSeries int
}

// DefaultMaxTimeSeries is the default cap on per-run time-series charts,
// which keeps a report of hundreds of runs light.
const DefaultMaxTimeSeries = 40

// NewOptions returns the default options.
func NewOptions() Options { return Options{MaxTimeSeries: DefaultMaxTimeSeries} }

// Validate reports every problem with the options at once.
func (o Options) Validate() []error {
	var errs []error
	if strings.ContainsAny(o.Title, "\n\r") {
		errs = append(errs, fmt.Errorf("title: must be one line"))
	}
	return errs
}

// Report is everything the renderers need, computed once from the runs.
type Report struct {
	Title     string
	Version   string
	Generated time.Time
	// Runs are every selected run, oldest first, passwords masked and
	// histograms dropped.
	Runs []*summary.Run
	// Cells group complete runs: rounds of one configuration.
	Cells []*Cell
	// Series are the server/configuration labels, in order of first run.
	Series []string
	// Workloads are the workload names, in order of first run.
	Workloads []string
	// Baseline is the series the others are compared with.
	Baseline string
	// Relatives compare every non-baseline cell with the baseline cell of
	// the same workload and threads (throughput).
	Relatives []Relative
	// Heat is relative throughput per series and workload (geometric mean
	// over the thread counts both series ran).
	Heat []HeatCell
	// Context says what was measured where.
	Context Context
	// Notes are remarks about the data (left-out runs, caps).
	Notes []string
	// TimeSeries are the runs drawn over time.
	TimeSeries []*summary.Run

	maxTimeSeries int
	// otherScale are the plan runs left out for another --scale than
	// their plan's newest session (otherScales).
	otherScale map[*summary.Run]bool
}

// Cell is one configuration's rounds and their statistics.
type Cell struct {
	// Key identifies the cell (plan/cell, or a digest of the configuration).
	Key      string
	Series   string
	Workload string
	Threads  int
	// Plan and PlanCell are set for runs placed in a plan.
	Plan, PlanCell string
	// Runs are the rounds, oldest first.
	Runs []*summary.Run
	// Cell's TPS, QPS and latency figures summarise the rounds
	// (stats.DescribeCell).
	stats.Cell
	Errors int64
}

// Median returns the round whose throughput is the median of the cell's.
func (c *Cell) Median() *summary.Run {
	rs := slices.Clone(c.Runs)
	slices.SortStableFunc(rs, func(a, b *summary.Run) int { return cmp.Compare(a.Throughput.TPS, b.Throughput.TPS) })
	return rs[(len(rs)-1)/2]
}

// Relative is a cell's throughput relative to the baseline cell.
type Relative struct {
	Series   string      `json:"series"`
	Workload string      `json:"workload"`
	Threads  int         `json:"threads"`
	Rounds   int         `json:"rounds"`
	Baseline int         `json:"baseline_rounds"`
	TPS      stats.Ratio `json:"tps"`
	P95      stats.Ratio `json:"p95"`
}

// Verdict says in words what the ratio means.
func Verdict(r stats.Ratio) string {
	switch {
	case math.IsNaN(r.Value):
		return "no baseline"
	case !r.HasCI:
		return "cannot judge (single runs)"
	case !r.Significant:
		return "no significant difference"
	case r.Value > 1:
		return "significantly higher"
	}
	return "significantly lower"
}

// HeatCell is one square of the heat map.
type HeatCell struct {
	Series   string  `json:"series"`
	Workload string  `json:"workload"`
	Ratio    float64 `json:"ratio"`
	// Points is how many thread counts the geometric mean covers.
	Points int `json:"points"`
}

// Context says what was measured where.
type Context struct {
	Hosts    []string  `json:"hosts"`
	Servers  []Server  `json:"servers"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Versions []string  `json:"dbarena_versions"`
	// Workloads are the parameters of each workload: name -> param ->
	// the distinct values seen.
	Workloads []WorkloadParams `json:"workloads"`
}

// Server is one series' server.
type Server struct {
	Series   string            `json:"series"`
	Flavor   string            `json:"flavor"`
	Version  string            `json:"version"`
	Sandbox  string            `json:"sandbox,omitempty"`
	DSN      string            `json:"dsn"`
	Settings map[string]string `json:"settings,omitempty"`
	// TLS is how the series' runs connected (summary.TLS.String), "mixed"
	// when they differ, "" when no run says.
	TLS string `json:"tls,omitempty"`
}

// WorkloadParams lists a workload's parameters and run settings.
type WorkloadParams struct {
	Name    string              `json:"name"`
	Threads []int               `json:"threads"`
	Params  map[string][]string `json:"params"`
}

// Build computes a report from runs. It does not modify the runs.
func Build(runs []*summary.Run, o Options) (*Report, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("report options: %w", errs[0])
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs to report")
	}
	rep := &Report{Title: o.Title, Version: o.Version, Generated: o.Generated, maxTimeSeries: o.MaxTimeSeries}
	if rep.Generated.IsZero() {
		rep.Generated = time.Now()
	}
	if rep.maxTimeSeries == 0 {
		rep.maxTimeSeries = DefaultMaxTimeSeries
	}
	for _, r := range runs {
		rep.Runs = append(rep.Runs, sanitize(r))
	}
	slices.SortStableFunc(rep.Runs, func(a, b *summary.Run) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	labels := seriesLabels(rep.Runs)
	rep.group(labels)
	if rep.Title == "" {
		rep.Title = fmt.Sprintf("dbarena report: %s on %s", strings.Join(rep.Workloads, ", "), strings.Join(rep.Series, " vs "))
	}
	rep.Baseline = o.Baseline
	if rep.Baseline == "" && len(rep.Series) > 0 {
		rep.Baseline = rep.Series[0]
	}
	if len(rep.Series) > 0 && !slices.Contains(rep.Series, rep.Baseline) {
		return nil, fmt.Errorf("baseline %q is not one of the series: %s", o.Baseline, strings.Join(rep.Series, ", "))
	}
	rep.compare()
	rep.context(labels)
	rep.pickTimeSeries()
	return rep, nil
}

// sanitize returns a copy of r fit for a report: no histogram and every
// password masked again, whatever the store holds.
func sanitize(r *summary.Run) *summary.Run {
	c := *r
	c.Histogram = ""
	c.TypeHistograms = nil
	c.Intervals = summary.WithoutHistograms(c.Intervals)
	c.Target.DSN = secret.Mask(c.Target.DSN)
	c.Error = secret.Mask(c.Error)
	cmd := make([]string, len(c.Dbarena.Command))
	for i, a := range c.Dbarena.Command {
		if i > 0 && isPasswordFlag(c.Dbarena.Command[i-1]) {
			a = "***"
		}
		cmd[i] = secret.Mask(a)
	}
	c.Dbarena.Command = cmd
	return &c
}

func isPasswordFlag(a string) bool {
	a = strings.TrimLeft(a, "-")
	return a == "p" || a == "password" || a == "pass" || a == "passwd"
}

// seriesLabels names each run's server or configuration: the plan
// coordinates other than threads and workload, or the server flavor and
// version (with the sandbox name when one version runs in several).
func seriesLabels(runs []*summary.Run) map[*summary.Run]string {
	out := map[*summary.Run]string{}
	sandboxes := map[string]map[string]bool{}
	base := func(r *summary.Run) string { return strings.TrimSpace(r.Target.Flavor + " " + r.Target.Version) }
	for _, r := range runs {
		b := base(r)
		if sandboxes[b] == nil {
			sandboxes[b] = map[string]bool{}
		}
		sandboxes[b][r.Target.Sandbox] = true
	}
	for _, r := range runs {
		if r.Plan != nil {
			var parts []string
			keys := slices.Sorted(maps.Keys(r.Plan.Coords))
			for _, k := range keys {
				if k == "threads" || k == "workload" || k == "round" {
					continue
				}
				parts = append(parts, k+"="+r.Plan.Coords[k])
			}
			if len(parts) == 1 {
				_, v, _ := strings.Cut(parts[0], "=")
				parts[0] = v
			}
			if len(parts) > 0 {
				out[r] = strings.Join(parts, ", ")
				continue
			}
		}
		b := base(r)
		if b == "" {
			b = "unknown server"
		}
		if len(sandboxes[base(r)]) > 1 && r.Target.Sandbox != "" {
			b += " @" + r.Target.Sandbox
		}
		out[r] = b
	}
	return out
}

// cellKey identifies the configuration a run belongs to.
func cellKey(r *summary.Run, label string) string {
	if r.Plan != nil && r.Plan.Name != "" {
		return "plan:" + r.Plan.Name + "/" + r.Plan.Cell
	}
	tags := maps.Clone(r.Tags)
	delete(tags, "round")
	doc, _ := json.Marshal(struct {
		S string
		W string
		T int
		R float64
		P map[string]any
		G map[string]string
	}{label, r.Workload, r.Threads, r.Rate, r.Params, tags}) // maps marshal with sorted keys
	return string(doc)
}

func (rep *Report) group(labels map[*summary.Run]string) {
	byKey := map[string]*Cell{}
	left := 0
	rep.otherScale = rep.otherScales()
	for _, r := range rep.Runs {
		if !slices.Contains(rep.Workloads, r.Workload) {
			rep.Workloads = append(rep.Workloads, r.Workload)
		}
		if r.Status != summary.StatusComplete {
			left++
			continue
		}
		if rep.otherScale[r] {
			continue
		}
		label := labels[r]
		if !slices.Contains(rep.Series, label) {
			rep.Series = append(rep.Series, label)
		}
		k := cellKey(r, label)
		c := byKey[k]
		if c == nil {
			c = &Cell{Key: k, Series: label, Workload: r.Workload, Threads: r.Threads}
			if r.Plan != nil {
				c.Plan, c.PlanCell = r.Plan.Name, r.Plan.Cell
			}
			byKey[k] = c
			rep.Cells = append(rep.Cells, c)
		}
		c.Runs = append(c.Runs, r)
	}
	if left > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d run(s) did not complete (interrupted or failed): they are listed but left out of cells, statistics and charts.", left))
	}
	for _, c := range rep.Cells {
		c.Cell = stats.DescribeCell(c.Runs)
		for _, r := range c.Runs {
			c.Errors += r.Totals.Errors
		}
	}
	slices.SortStableFunc(rep.Cells, func(a, b *Cell) int {
		return cmp.Or(
			cmp.Compare(slices.Index(rep.Workloads, a.Workload), slices.Index(rep.Workloads, b.Workload)),
			cmp.Compare(slices.Index(rep.Series, a.Series), slices.Index(rep.Series, b.Series)),
			cmp.Compare(a.Threads, b.Threads))
	})
}

// findCell returns the first cell of a series, workload and thread count.
func (rep *Report) findCell(series, workload string, threads int) *Cell {
	for _, c := range rep.Cells {
		if c.Series == series && c.Workload == workload && c.Threads == threads {
			return c
		}
	}
	return nil
}

func (rep *Report) compare() {
	if len(rep.Series) < 2 {
		return
	}
	type hk struct{ s, w string }
	logs := map[hk][]float64{}
	for _, c := range rep.Cells {
		if c.Series == rep.Baseline {
			continue
		}
		b := rep.findCell(rep.Baseline, c.Workload, c.Threads)
		if b == nil {
			continue
		}
		rel := Relative{
			Series: c.Series, Workload: c.Workload, Threads: c.Threads,
			Rounds: len(c.Runs), Baseline: len(b.Runs),
			TPS: stats.TPS.Relative(c.Runs, b.Runs),
			P95: stats.LatencyP95.Relative(c.Runs, b.Runs),
		}
		rep.Relatives = append(rep.Relatives, rel)
		if v := rel.TPS.Value; v > 0 && !math.IsInf(v, 0) {
			logs[hk{c.Series, c.Workload}] = append(logs[hk{c.Series, c.Workload}], math.Log(v))
		}
	}
	for _, s := range rep.Series {
		for _, w := range rep.Workloads {
			if s == rep.Baseline {
				if rep.hasCells(s, w) {
					rep.Heat = append(rep.Heat, HeatCell{Series: s, Workload: w, Ratio: 1, Points: rep.countCells(s, w)})
				}
				continue
			}
			ls := logs[hk{s, w}]
			if len(ls) == 0 {
				continue
			}
			var sum float64
			for _, l := range ls {
				sum += l
			}
			rep.Heat = append(rep.Heat, HeatCell{Series: s, Workload: w, Ratio: math.Exp(sum / float64(len(ls))), Points: len(ls)})
		}
	}
}

func (rep *Report) hasCells(series, workload string) bool {
	return rep.countCells(series, workload) > 0
}

func (rep *Report) countCells(series, workload string) int {
	n := 0
	for _, c := range rep.Cells {
		if c.Series == series && c.Workload == workload {
			n++
		}
	}
	return n
}

func (rep *Report) context(labels map[*summary.Run]string) {
	ctx := &rep.Context
	params := map[string]*WorkloadParams{}
	for _, r := range rep.Runs {
		if rep.otherScale[r] {
			continue // listed only: the context is the compared runs'
		}
		h := r.Host
		desc := fmt.Sprintf("%s: %s, %d cores, %d MB memory, kernel %s", h.Hostname, h.CPUModel, h.Cores, h.MemoryMB, h.Kernel)
		if h.OS != "" {
			desc += ", " + h.OS
		}
		if !slices.Contains(ctx.Hosts, desc) {
			ctx.Hosts = append(ctx.Hosts, desc)
		}
		if v := r.Dbarena.Version; v != "" && !slices.Contains(ctx.Versions, v) {
			ctx.Versions = append(ctx.Versions, v)
		}
		if ctx.From.IsZero() || r.StartedAt.Before(ctx.From) {
			ctx.From = r.StartedAt
		}
		end := r.EndedAt
		if end.IsZero() {
			end = r.StartedAt
		}
		if end.After(ctx.To) {
			ctx.To = end
		}
		label := labels[r]
		found := false
		for i := range ctx.Servers {
			if ctx.Servers[i].Series == label {
				found = true
				if ctx.Servers[i].TLS != runTLS(r) {
					ctx.Servers[i].TLS = "mixed"
				}
				for k, v := range r.Settings {
					if ctx.Servers[i].Settings == nil {
						ctx.Servers[i].Settings = map[string]string{}
					}
					if _, ok := ctx.Servers[i].Settings[k]; !ok {
						ctx.Servers[i].Settings[k] = v
					}
				}
			}
		}
		if !found {
			ctx.Servers = append(ctx.Servers, Server{Series: label, Flavor: r.Target.Flavor, Version: r.Target.Version,
				Sandbox: r.Target.Sandbox, DSN: r.Target.DSN, Settings: maps.Clone(r.Settings), TLS: runTLS(r)})
		}
		wp := params[r.Workload]
		if wp == nil {
			wp = &WorkloadParams{Name: r.Workload, Params: map[string][]string{}}
			params[r.Workload] = wp
		}
		if !slices.Contains(wp.Threads, r.Threads) {
			wp.Threads = append(wp.Threads, r.Threads)
		}
		add := func(k, v string) {
			if !slices.Contains(wp.Params[k], v) {
				wp.Params[k] = append(wp.Params[k], v)
			}
		}
		for k, v := range r.Params {
			add(k, formatAny(v))
		}
		add("time", fmt.Sprintf("%.0fs", r.DurationS))
		add("warmup", fmt.Sprintf("%.0fs", r.WarmupS))
		if r.Rate > 0 {
			add("rate", fmt.Sprintf("%g/s", r.Rate))
		}
	}
	for _, w := range rep.Workloads {
		wp := params[w]
		slices.Sort(wp.Threads)
		ctx.Workloads = append(ctx.Workloads, *wp)
	}
}

func formatAny(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprintf("%g", x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// pickTimeSeries chooses the runs that get a time-series chart: the median
// round of each cell with intervals, up to the cap.
func (rep *Report) pickTimeSeries() {
	if rep.maxTimeSeries < 0 {
		return
	}
	n := 0
	for _, c := range rep.Cells {
		r := c.Median()
		if len(r.Intervals) == 0 {
			continue
		}
		n++
		if len(rep.TimeSeries) < rep.maxTimeSeries {
			rep.TimeSeries = append(rep.TimeSeries, r)
		}
	}
	if n > len(rep.TimeSeries) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Time series are drawn for %d of %d cells (the first ones); report fewer runs to see the others.", len(rep.TimeSeries), n))
	}
}

// hasTypes reports whether a run gets a table of its transaction types
// and checks: it has per-type figures, checks or a tpmC (TPC-C and other
// multi-transaction workloads), unless its per-type figures are by
// statement fingerprint, which have tables of their own
// (fingerprintTables).
func hasTypes(r *summary.Run) bool {
	return !r.HasSection(summary.SectionFingerprints) && (len(r.PerType) > 0 || len(r.Checks) > 0 || r.TpmC != nil)
}

// runTLS is the run's TLS for the servers table, "" when not recorded.
func runTLS(r *summary.Run) string {
	if r.Target.TLS == nil {
		return ""
	}
	return r.Target.TLS.String()
}
