package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// WriteMarkdown writes the report as Markdown tables, fit for a blog post
// or an issue. Each chart is written as a PNG file into imgDir (created if
// needed) and linked as imgRef/ID.png, so imgRef should be imgDir relative
// to the Markdown file.
func (rep *Report) WriteMarkdown(w io.Writer, imgDir, imgRef string) error {
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		return fmt.Errorf("markdown report: %w", err)
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "# %s\n\n", mdText(rep.Title))
	fmt.Fprintf(b, "Generated %s by dbarena %s from %d run(s) in %d cell(s).\n\n", when(rep.Generated), rep.Version, len(rep.Runs), len(rep.Cells))
	for _, n := range rep.Notes {
		fmt.Fprintf(b, "> %s\n\n", mdText(n))
	}
	fmt.Fprintf(b, "## What was measured where\n\nRuns from %s to %s, made by dbarena %s.\n\nHosts (client machine):\n\n",
		when(rep.Context.From), when(rep.Context.To), strings.Join(rep.Context.Versions, ", "))
	for _, h := range rep.Context.Hosts {
		fmt.Fprintf(b, "- %s\n", mdText(h))
	}
	b.WriteString("\n")
	mdTable(b, rep.ServersTable())
	if t := rep.SettingsTable(); len(t.Rows) > 0 {
		t.Note = "Rows in bold differ between servers."
		mdTable(b, t)
	}
	mdTable(b, rep.WorkloadTable())
	b.WriteString("## Summary\n\n")
	for _, t := range rep.SummaryTables() {
		mdTable(b, t)
	}
	if t := rep.RelativeTable(); len(t.Rows) > 0 {
		mdTable(b, t)
	}
	if t := rep.replayTable(); t != nil {
		mdTable(b, *t)
	}
	if ts := rep.WhyTables(); ts != nil {
		b.WriteString("## Where the difference comes from\n\n")
		for _, t := range ts {
			mdTable(b, t)
		}
	}
	if ts := rep.microTables(); ts != nil {
		b.WriteString("## Micro suite\n\n")
		for _, t := range ts {
			mdTable(b, t)
		}
	}
	if ts := rep.fingerprintTables(); ts != nil {
		b.WriteString("## Replay by fingerprint\n\n")
		for _, t := range ts {
			mdTable(b, t)
		}
	}
	section := ""
	for _, c := range rep.Charts() {
		if c.Section != section {
			section = c.Section
			fmt.Fprintf(b, "## %s\n\n", section)
		}
		png, err := c.PNG()
		if err != nil {
			return fmt.Errorf("markdown report: %w", err)
		}
		name := c.ID + ".png"
		if err := os.WriteFile(filepath.Join(imgDir, name), png, 0o644); err != nil {
			return fmt.Errorf("markdown report: %w", err)
		}
		fmt.Fprintf(b, "![%s](%s)\n\n*%s*\n\n", mdText(c.Title), path.Join(imgRef, name), mdText(c.Caption))
	}
	first := true
	for _, r := range rep.Runs {
		if !hasTypes(r) {
			continue
		}
		if first {
			b.WriteString("## Transactions and checks\n\n")
			first = false
		}
		fmt.Fprintf(b, "### %s\n\n", mdText(runHead(r)))
		mdTable(b, TypeTable(r))
		if t := CheckTable(r); len(t.Rows) > 0 {
			mdTable(b, t)
		}
	}
	if t := rep.HostTable(); t != nil {
		b.WriteString("## Host figures\n\n")
		mdTable(b, *t)
	}
	b.WriteString("## Runs\n\n")
	mdTable(b, rep.RunsTable())
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("markdown report: %w", err)
	}
	return nil
}

func mdText(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", "", "<", "&lt;", ">", "&gt;").Replace(s)
}

func mdTable(b *strings.Builder, t Table) {
	fmt.Fprintf(b, "### %s\n\n", mdText(t.Title))
	if t.Note != "" {
		fmt.Fprintf(b, "%s\n\n", mdText(t.Note))
	}
	b.WriteString("|")
	for _, c := range t.Columns {
		fmt.Fprintf(b, " %s |", mdText(c.Name))
	}
	b.WriteString("\n|")
	for _, c := range t.Columns {
		if c.Numeric {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for _, c := range row {
			s := mdText(c.Text)
			if (c.Class == "sig" || c.Class == "ng" || c.Class == "diff") && s != "" {
				s = "**" + s + "**"
			}
			fmt.Fprintf(b, " %s |", s)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// CSV row shapes.
const (
	ByRun  = "run"
	ByCell = "cell"
)

// WriteCSV writes one row per run (by = ByRun) or per cell (ByCell), with
// a header row. Numbers are plain, unformatted.
func (rep *Report) WriteCSV(w io.Writer, by string) error {
	cw := csv.NewWriter(w)
	var err error
	switch by {
	case ByRun, "":
		err = rep.csvRuns(cw)
	case ByCell:
		err = rep.csvCells(cw)
	default:
		return fmt.Errorf("csv report: rows by %q: want %s or %s", by, ByRun, ByCell)
	}
	if err != nil {
		return fmt.Errorf("csv report: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("csv report: %w", err)
	}
	return nil
}

func f64(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func (rep *Report) csvRuns(cw *csv.Writer) error {
	series := map[*summary.Run]string{}
	for _, c := range rep.Cells {
		for _, r := range c.Runs {
			series[r] = c.Series
		}
	}
	if err := cw.Write([]string{"id", "started_at", "ended_at", "status", "workload", "series", "flavor", "version",
		"sandbox", "dsn", "threads", "rate", "duration_s", "warmup_s", "plan", "cell", "round", "events", "queries",
		"errors", "retries", "reconnects", "tps", "qps", "lat_min_ms", "lat_avg_ms", "lat_p50_ms", "lat_p90_ms",
		"lat_p95_ms", "lat_p99_ms", "lat_p999_ms", "lat_max_ms", "tpmc", "hostname", "cpu_model", "cores",
		"dbarena_version", "tags"}); err != nil {
		return err
	}
	for _, r := range rep.Runs {
		plan, cell := "", ""
		if r.Plan != nil {
			plan, cell = r.Plan.Name, r.Plan.Cell
		}
		tpmc := ""
		if r.TpmC != nil {
			tpmc = f64(*r.TpmC)
		}
		l := r.LatencyMS
		if err := cw.Write([]string{RunName(r), r.StartedAt.UTC().Format(time.RFC3339Nano), r.EndedAt.UTC().Format(time.RFC3339Nano),
			r.Status, r.Workload, series[r], r.Target.Flavor, r.Target.Version, r.Target.Sandbox, r.Target.DSN,
			strconv.Itoa(r.Threads), f64(r.Rate), f64(r.DurationS), f64(r.WarmupS), plan, cell, round(r),
			i64(r.Totals.Events), i64(r.Totals.Queries.Total), i64(r.Totals.Errors), i64(r.Totals.Retries),
			i64(r.Totals.Reconnects), f64(r.Throughput.TPS), f64(r.Throughput.QPS), f64(l.Min), f64(l.Avg), f64(l.P50),
			f64(l.P90), f64(l.P95), f64(l.P99), f64(l.P999), f64(l.Max), tpmc, r.Host.Hostname, r.Host.CPUModel,
			strconv.Itoa(r.Host.Cores), r.Dbarena.Version, formatTags(r.Tags)}); err != nil {
			return err
		}
	}
	return nil
}

func (rep *Report) csvCells(cw *csv.Writer) error {
	head := []string{"series", "workload", "threads", "plan", "cell", "rounds", "run_ids"}
	for _, f := range []string{"tps", "qps", "avg_ms", "p95_ms", "p99_ms"} {
		head = append(head, f+"_mean", f+"_sd", f+"_cv", f+"_ci_low", f+"_ci_high")
	}
	head = append(head, "errors", "baseline", "tps_ratio", "tps_ratio_low", "tps_ratio_high", "tps_significant")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, c := range rep.Cells {
		var ids []string
		for _, r := range c.Runs {
			ids = append(ids, RunName(r))
		}
		row := []string{c.Series, c.Workload, strconv.Itoa(c.Threads), c.Plan, c.PlanCell, strconv.Itoa(len(c.Runs)), strings.Join(ids, " ")}
		for _, s := range []stats.Summary{c.TPS, c.QPS, c.AvgMS, c.P95MS, c.P99MS} {
			row = append(row, f64(s.Mean), f64(s.SD), f64(s.CV), f64(s.CILow), f64(s.CIHigh))
		}
		row = append(row, i64(c.Errors), rep.Baseline)
		ratio := []string{"", "", "", ""}
		for _, r := range rep.Relatives {
			if r.Series == c.Series && r.Workload == c.Workload && r.Threads == c.Threads {
				ratio = []string{f64(r.TPS.Value), f64(r.TPS.Low), f64(r.TPS.High), strconv.FormatBool(r.TPS.Significant)}
				break
			}
		}
		if err := cw.Write(append(row, ratio...)); err != nil {
			return err
		}
	}
	return nil
}

// JSONSchema names the JSON report's shape.
const JSONSchema = "dbarena.report/v1"

type jsonCell struct {
	Series   string `json:"series"`
	Workload string `json:"workload"`
	Threads  int    `json:"threads"`
	Plan     string `json:"plan,omitempty"`
	Cell     string `json:"cell,omitempty"`
	// RunIDs are the stored runs behind the cell's rounds: a round's run
	// number, or for a sharded run merged from its shards (which has no
	// number) its shards' run numbers.
	RunIDs []int64 `json:"run_ids"`
	// RunNames name the cell's rounds, one each: a run's number, or a
	// sharded run's --run-id (as in the csv and the tables).
	RunNames []string      `json:"run_names"`
	TPS      stats.Summary `json:"tps"`
	QPS      stats.Summary `json:"qps"`
	AvgMS    stats.Summary `json:"avg_ms"`
	P95MS    stats.Summary `json:"p95_ms"`
	P99MS    stats.Summary `json:"p99_ms"`
	Errors   int64         `json:"errors"`
}

// WriteJSON writes the report as one JSON document (schema
// "dbarena.report/v1"): context, cells with their statistics, comparisons
// with the baseline, the heat map and every run summary (no histograms).
func (rep *Report) WriteJSON(w io.Writer) error {
	doc := struct {
		Schema    string         `json:"schema"`
		Title     string         `json:"title"`
		Generated time.Time      `json:"generated_at"`
		Version   string         `json:"dbarena_version"`
		Baseline  string         `json:"baseline"`
		Series    []string       `json:"series"`
		Workloads []string       `json:"workloads"`
		Context   Context        `json:"context"`
		Notes     []string       `json:"notes,omitempty"`
		Cells     []jsonCell     `json:"cells"`
		Relatives []jsonRelative `json:"relatives"`
		Heat      []HeatCell     `json:"heat"`
		Runs      []*summary.Run `json:"runs"`
	}{JSONSchema, rep.Title, rep.Generated, rep.Version, rep.Baseline, rep.Series, rep.Workloads, rep.Context,
		rep.Notes, []jsonCell{}, []jsonRelative{}, rep.Heat, rep.Runs}
	if doc.Heat == nil {
		doc.Heat = []HeatCell{}
	}
	for _, c := range rep.Cells {
		jc := jsonCell{Series: c.Series, Workload: c.Workload, Threads: c.Threads, Plan: c.Plan, Cell: c.PlanCell,
			TPS: c.TPS, QPS: c.QPS, AvgMS: c.AvgMS, P95MS: c.P95MS, P99MS: c.P99MS, Errors: c.Errors}
		for _, r := range c.Runs {
			jc.RunIDs = append(jc.RunIDs, runIDs(r)...)
			jc.RunNames = append(jc.RunNames, RunName(r))
		}
		doc.Cells = append(doc.Cells, jc)
	}
	for _, r := range rep.Relatives {
		jr := jsonRelative{Relative: r, TPSVerdict: Verdict(r.TPS), P95Verdict: Verdict(r.P95), Why: rep.jsonWhy(r)}
		jr.TPS, jr.P95 = finite(r.TPS), finite(r.P95)
		doc.Relatives = append(doc.Relatives, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}

// finite zeroes a ratio that has no value (a zero baseline), which JSON
// cannot encode.
func finite(r stats.Ratio) stats.Ratio {
	if math.IsNaN(r.Value) || math.IsNaN(r.Low) || math.IsNaN(r.High) {
		return stats.Ratio{}
	}
	return r
}

// jsonRelative is a comparison with its verdicts in words.
type jsonRelative struct {
	Relative
	TPSVerdict string `json:"tps_verdict"`
	P95Verdict string `json:"p95_verdict"`
	// Why is where the difference comes from (why.go), when both cells
	// have the monitor's figures.
	Why *whyJSON `json:"why,omitempty"`
}
