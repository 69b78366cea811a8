package report

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/secret"
)

// Source is where reports read runs: the results store satisfies it.
type Source interface {
	List(ctx context.Context, f store.Filter) ([]store.RunRow, error)
	Run(ctx context.Context, id int64) (*summary.Run, error)
}

var _ Source = (*store.Store)(nil)

// Load reads the runs a filter selects, oldest first.
func Load(ctx context.Context, src Source, f store.Filter) ([]*summary.Run, error) {
	rows, err := src.List(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]*summary.Run, 0, len(rows))
	for i := len(rows) - 1; i >= 0; i-- {
		r, err := src.Run(ctx, rows[i].ID)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Rounds returns the runs of the same configuration as run, run included,
// oldest first: the other rounds of its plan cell, or, outside a plan, the
// runs tagged with another round number and otherwise the same server,
// workload, threads, parameters and tags. A run with neither is alone.
func Rounds(ctx context.Context, src Source, run *summary.Run) ([]*summary.Run, error) {
	var f store.Filter
	switch {
	case run.Plan != nil && run.Plan.Name != "":
		f = store.Filter{Plan: run.Plan.Name, Workload: run.Workload}
	case run.Tags["round"] != "":
		f = store.Filter{Tags: maps.Clone(run.Tags), Workload: run.Workload}
		delete(f.Tags, "round")
	default:
		return []*summary.Run{run}, nil
	}
	cands, err := Load(ctx, src, f)
	// A plan's sharded steps are one round each, merged, unless run is a
	// shard's own run named by its number: that stays among its kind.
	if sr, ok := src.(shard.Reader); ok && err == nil && (run.ID == 0 || run.Tags[shard.TagRun] == "") {
		cands, err = shard.MergeRuns(ctx, sr, cands)
	}
	if err != nil {
		return nil, fmt.Errorf("rounds of run %s: %w", RunName(run), err)
	}
	key := sameConfigKey(run)
	var out []*summary.Run
	for _, c := range cands {
		// A plan cell's rounds are those of run's --scale (sameScale).
		if c.Status == summary.StatusComplete && sameConfigKey(c) == key && (run.Plan == nil || sameScale(c, run)) || sameRun(c, run) {
			out = append(out, c)
		}
	}
	return out, nil
}

// sameRun reports whether a and b are one run: the same number, or the
// same sharded run merged.
func sameRun(a, b *summary.Run) bool {
	if a.ID != 0 || b.ID != 0 {
		return a.ID == b.ID
	}
	return a.RunKey != "" && a.RunKey == b.RunKey
}

func sameConfigKey(r *summary.Run) string {
	return cellKey(r, strings.TrimSpace(r.Target.Flavor+" "+r.Target.Version+" "+r.Target.Sandbox))
}

// Comparison is run A against run B, each with its rounds.
type Comparison struct {
	A, B   []*summary.Run
	Rows   []CompareRow
	Differ [][3]string // name, A, B: settings and parameters that differ
	// Micro is the per-operation winner table when both sides are micro
	// runs (series "A" and "B").
	Micro *MicroComparison
	// Replay is the per-fingerprint comparison when both sides are
	// replays; it is printed first.
	Replay *ReplayComparison
}

// CompareRow is one figure of a comparison.
type CompareRow struct {
	Name          string
	A, B          stats.Summary
	Ratio         stats.Ratio
	LowerIsBetter bool
}

// Compare sets B's runs against A's (the baseline).
func Compare(a, b []*summary.Run) (*Comparison, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("compare: nothing to compare")
	}
	c := &Comparison{A: a, B: b}
	figs := stats.CompareFigures
	if a[0].TpmC != nil && b[0].TpmC != nil {
		figs = append(slices.Clip(figs), stats.TpmC)
	}
	for _, f := range figs {
		c.Rows = append(c.Rows, CompareRow{Name: f.Name, A: f.Describe(a), B: f.Describe(b),
			Ratio: f.Relative(b, a), LowerIsBetter: f.LowerIsBetter})
	}
	c.Replay = CompareReplay(a, b, DefaultThreshold)
	if a[0].HasSection(summary.SectionMicro) && b[0].HasSection(summary.SectionMicro) {
		c.Micro = CompareMicro([]string{"A", "B"}, map[string][]*summary.Run{"A": a, "B": b})
	}
	ra, rb := a[0], b[0]
	add := func(name, va, vb string) {
		if va != vb {
			c.Differ = append(c.Differ, [3]string{name, va, vb})
		}
	}
	add("workload", ra.Workload, rb.Workload)
	add("server", ra.Target.Flavor+" "+ra.Target.Version, rb.Target.Flavor+" "+rb.Target.Version)
	add("sandbox / target", where(ra), where(rb))
	add("threads", fmt.Sprint(ra.Threads), fmt.Sprint(rb.Threads))
	if !ra.HasSection(summary.SectionMicro) || !rb.HasSection(summary.SectionMicro) {
		// A micro run (or an imported sql-bench one) ends when its suite
		// does: its duration is a result, not a setting.
		add("time", fmt.Sprintf("%.0fs", ra.DurationS), fmt.Sprintf("%.0fs", rb.DurationS))
	}
	add("warmup", fmt.Sprintf("%.0fs", ra.WarmupS), fmt.Sprintf("%.0fs", rb.WarmupS))
	add("rate", fmt.Sprint(ra.Rate), fmt.Sprint(rb.Rate))
	add("host", ra.Host.Hostname, rb.Host.Hostname)
	add("dbarena", ra.Dbarena.Version, rb.Dbarena.Version)
	for _, k := range unionKeys(ra.Params, rb.Params) {
		add("param "+k, lookupAny(ra.Params, k), lookupAny(rb.Params, k))
	}
	for _, k := range unionKeys(ra.Settings, rb.Settings) {
		add("setting "+k, lookup(ra.Settings, k), lookup(rb.Settings, k))
	}
	c.Differ = append(c.Differ, differentSettings(ra, rb)...)
	for _, k := range unionKeys(ra.Tags, rb.Tags) {
		add("tag "+k, lookup(ra.Tags, k), lookup(rb.Tags, k))
	}
	return c, nil
}

// maxSettingsDiffer bounds the server variables a comparison lists.
const maxSettingsDiffer = 25

// differentSettings lists the server variables (Run.SettingsAll, the
// snapshot taken as each run ended) whose values differ, beyond those in
// Settings and those that differ between any two servers (ports, paths,
// ids, clocks, counters); at most maxSettingsDiffer, then how many more.
// Only when both runs have a snapshot: an imported or older run has none.
func differentSettings(a, b *summary.Run) [][3]string {
	if len(a.SettingsAll) == 0 || len(b.SettingsAll) == 0 {
		return nil
	}
	var out [][3]string
	more := 0
	for _, k := range unionKeys(a.SettingsAll, b.SettingsAll) {
		if _, ok := a.Settings[k]; ok || instanceSetting(k) {
			continue
		}
		if _, ok := b.Settings[k]; ok {
			continue
		}
		va, vb := lookup(a.SettingsAll, k), lookup(b.SettingsAll, k)
		if va == vb {
			continue
		}
		if len(out) == maxSettingsDiffer {
			more++
			continue
		}
		out = append(out, [3]string{"variable " + k, va, vb})
	}
	if more > 0 {
		out = append(out, [3]string{fmt.Sprintf("(%d more variables differ)", more), "", ""})
	}
	return out
}

// instanceSetting reports whether server variable k differs between any
// two servers by nature: where it listens, where its files are, its ids,
// clocks and counters.
func instanceSetting(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"port", "socket", "dir", "file", "path", "pid", "host", "server_id", "uuid", "gtid", "timestamp",
		"time_zone", "log_bin_basename", "log_bin_index", "version_compile", "cluster_name", "data_directory", "config_file",
		"hba_file", "ident_file", "external_pid_file", "unix_socket", "listen_addresses", "rand_seed", "in_hot_standby", "lc_"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// where names the sandbox or server a run talked to: "sandbox NAME", the
// masked DSN's host, or for an imported sql-bench run its file.
func where(r *summary.Run) string {
	switch {
	case r.Target.Sandbox != "":
		return "sandbox " + r.Target.Sandbox
	case r.Tags["source"] == "sql-bench" && r.Tags["file"] != "":
		return "sql-bench file " + r.Tags["file"]
	case r.Target.DSN != "":
		return secret.Mask(r.Target.DSN)
	}
	return "-"
}

func unionKeys[V any](a, b map[string]V) []string {
	ks := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

func lookup(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "-"
}

func lookupAny(m map[string]any, k string) string {
	if v, ok := m[k]; ok {
		return formatAny(v)
	}
	return "-"
}

func side(rs []*summary.Run) string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, fmt.Sprint(r.ID))
	}
	r := rs[0]
	s := fmt.Sprintf("run %s", strings.Join(ids, ","))
	label := fmt.Sprintf("%s: %s on %s %s (%s), %d threads", s, r.Workload, r.Target.Flavor, r.Target.Version, where(r), r.Threads)
	if !r.StartedAt.IsZero() {
		label += ", started " + r.StartedAt.UTC().Format("2006-01-02 15:04:05")
	}
	return label
}

func fmtSummary(s stats.Summary) string {
	if s.N == 0 {
		return "-"
	}
	if !s.HasCI() {
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, (s.CIHigh-s.CILow)/2)
}

// Write prints the comparison as an aligned terminal table.
func (c *Comparison) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A (baseline): %s\nB:            %s\n", side(c.A), side(c.B))
	na, nb := len(c.A), len(c.B)
	switch {
	case na < 2 || nb < 2:
		fmt.Fprintf(&b, "Rounds: A %d, B %d. With single runs significance cannot be judged: repeat them (--rounds, or a plan) for confidence intervals.\n", na, nb)
	default:
		fmt.Fprintf(&b, "Rounds: A %d, B %d. ± is the half-width of the 95%% confidence interval; a difference is significant when the ratio's interval excludes 0%%.\n", na, nb)
	}
	b.WriteString("\n")
	if c.Replay != nil {
		c.Replay.Write(&b)
		b.WriteString("\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tA\tB\tB vs A\t95% CI\tverdict\t")
	for _, r := range c.Rows {
		rel, ci, verdict := "-", "", Verdict(r.Ratio)
		if !math.IsNaN(r.Ratio.Value) {
			rel = pct(r.Ratio.Value)
			if r.Ratio.HasCI {
				ci = fmt.Sprintf("[%s, %s]", pct(r.Ratio.Low), pct(r.Ratio.High))
			}
			if r.Ratio.Significant {
				better := r.Ratio.Value > 1 != r.LowerIsBetter
				if better {
					verdict += " (better)"
				} else {
					verdict += " (worse)"
				}
			}
		} else if r.A.Mean == 0 && r.B.Mean == 0 {
			verdict = "both zero"
		} else if r.A.Mean == 0 {
			verdict = "A is zero"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Name, fmtSummary(r.A), fmtSummary(r.B), rel, ci, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Micro != nil {
		for _, t := range c.Micro.Tables() {
			b.WriteString("\n")
			writeText(&b, t)
		}
	}
	if len(c.Differ) > 0 {
		b.WriteString("\nWhat differs:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\tA\tB")
		for _, d := range c.Differ {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", d[0], secret.Mask(d[1]), secret.Mask(d[2]))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	} else {
		b.WriteString("\nSettings and parameters: the same.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
