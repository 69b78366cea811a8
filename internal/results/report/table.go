package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Table is a renderer-neutral table: HTML, Markdown and the terminal draw
// the same value. Any result (sysbench, TPC-C, siege-style replays) becomes
// a Table through a builder; renderers know nothing about the columns.
type Table struct {
	ID      string
	Title   string
	Note    string
	Columns []Column
	Rows    [][]Entry
}

// Column is a table column; numeric columns align right.
type Column struct {
	Name    string
	Numeric bool
	// Help explains the column (shown as a tooltip and in Markdown notes).
	Help string
}

// Entry is one formatted value; Class marks it for styling: "ok", "ng"
// (failed check), "sig" (significant difference), "diff" (differs between
// servers) or "".
type Entry struct {
	Text  string
	Class string
}

func txt(s string) Entry { return Entry{Text: s} }

func num(v float64, prec int) Entry {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Entry{Text: "-"}
	}
	return Entry{Text: strconv.FormatFloat(v, 'f', prec, 64)}
}

func integer(v int64) Entry { return Entry{Text: strconv.FormatInt(v, 10)} }

// meanCI formats a summary as "mean ± half-width" when it has an interval.
func meanCI(s stats.Summary, prec int) Entry {
	if s.N == 0 {
		return txt("-")
	}
	if !s.HasCI() {
		return num(s.Mean, prec)
	}
	return txt(fmt.Sprintf("%.*f ± %.*f", prec, s.Mean, prec, (s.CIHigh-s.CILow)/2))
}

// ratioCell formats a ratio as a signed percentage with its interval.
func ratioCell(r stats.Ratio) Entry {
	if math.IsNaN(r.Value) {
		return txt("-")
	}
	c := txt(pct(r.Value))
	if r.HasCI {
		c.Text += fmt.Sprintf(" [%s, %s]", pct(r.Low), pct(r.High))
	}
	if r.Significant {
		c.Class = "sig"
	}
	return c
}

func pct(ratio float64) string { return fmt.Sprintf("%+.1f%%", (ratio-1)*100) }

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// SummaryTables returns one summary table per plan (runs outside a plan
// share one table): every cell with its rounds, means and 95% confidence
// intervals, and its throughput relative to the baseline.
func (rep *Report) SummaryTables() []Table {
	var plans []string
	for _, c := range rep.Cells {
		if !slices.Contains(plans, c.Plan) {
			plans = append(plans, c.Plan)
		}
	}
	rel := map[*Cell]*Relative{}
	for i := range rep.Relatives {
		r := &rep.Relatives[i]
		if c := rep.findCell(r.Series, r.Workload, r.Threads); c != nil {
			rel[c] = r
		}
	}
	var out []Table
	for i, p := range plans {
		t := Table{
			ID:    fmt.Sprintf("summary-%d", i+1),
			Title: "Summary",
			Note:  "Means over rounds; ± is the half-width of the 95% confidence interval (shown with 2 or more rounds).",
			Columns: []Column{
				{Name: "Series"}, {Name: "Workload"}, {Name: "Threads", Numeric: true}, {Name: "Rounds", Numeric: true},
				{Name: "TPS", Numeric: true}, {Name: "CV %", Numeric: true, Help: "coefficient of variation of TPS over rounds"},
				{Name: "QPS", Numeric: true}, {Name: "Avg ms", Numeric: true}, {Name: "P95 ms", Numeric: true},
				{Name: "P99 ms", Numeric: true}, {Name: "Errors", Numeric: true},
				{Name: "TPS vs " + rep.Baseline, Numeric: true, Help: "relative to the baseline, with its 95% confidence interval"},
				{Name: "Verdict"},
			},
		}
		if p != "" {
			t.Title = "Summary of plan " + p
		}
		for _, c := range rep.Cells {
			if c.Plan != p {
				continue
			}
			cv := txt("-")
			if c.TPS.HasCI() {
				cv = num(c.TPS.CV*100, 1)
			}
			vs, verdict := txt(""), txt("baseline")
			if r := rel[c]; r != nil {
				vs, verdict = ratioCell(r.TPS), txt(Verdict(r.TPS))
				verdict.Class = vs.Class
			} else if c.Series != rep.Baseline {
				verdict = txt("no baseline cell")
			}
			t.Rows = append(t.Rows, []Entry{txt(c.Series), txt(c.Workload), integer(int64(c.Threads)),
				integer(int64(len(c.Runs))), meanCI(c.TPS, 2), cv, meanCI(c.QPS, 2), meanCI(c.AvgMS, 2),
				meanCI(c.P95MS, 2), meanCI(c.P99MS, 2), integer(c.Errors), vs, verdict})
		}
		out = append(out, t)
	}
	return out
}

// RelativeTable lists every comparison with the baseline: throughput and
// p95 latency ratios with their confidence intervals.
func (rep *Report) RelativeTable() Table {
	t := Table{
		ID:    "relative",
		Title: "Relative to " + rep.Baseline,
		Note:  "Ratios of means; the interval is the 95% confidence interval of the ratio. A difference is significant when the interval excludes 1.0 (0%); single runs cannot be judged.",
		Columns: []Column{{Name: "Series"}, {Name: "Workload"}, {Name: "Threads", Numeric: true},
			{Name: "Rounds", Numeric: true}, {Name: "TPS", Numeric: true}, {Name: "TPS verdict"},
			{Name: "P95", Numeric: true}, {Name: "P95 verdict"}},
	}
	for _, r := range rep.Relatives {
		a, b := ratioCell(r.TPS), ratioCell(r.P95)
		va, vb := txt(Verdict(r.TPS)), txt(Verdict(r.P95))
		va.Class, vb.Class = a.Class, b.Class
		t.Rows = append(t.Rows, []Entry{txt(r.Series), txt(r.Workload), integer(int64(r.Threads)),
			txt(fmt.Sprintf("%d vs %d", r.Rounds, r.Baseline)), a, va, b, vb})
	}
	return t
}

// RunsTable lists every selected run.
func (rep *Report) RunsTable() Table {
	t := Table{
		ID:    "runs",
		Title: "Runs",
		Columns: []Column{{Name: "ID", Numeric: true}, {Name: "Started"}, {Name: "Workload"}, {Name: "Server"},
			{Name: "Threads", Numeric: true}, {Name: "Round", Numeric: true}, {Name: "TPS", Numeric: true},
			{Name: "QPS", Numeric: true}, {Name: "P95 ms", Numeric: true}, {Name: "P99 ms", Numeric: true},
			{Name: "Errors", Numeric: true}, {Name: "Status"}, {Name: "Tags"}},
	}
	for _, r := range rep.Runs {
		st := txt(r.Status)
		if r.Status != summary.StatusComplete {
			st.Class = "ng"
		}
		t.Rows = append(t.Rows, []Entry{txt(RunName(r)), txt(when(r.StartedAt)), txt(r.Workload),
			txt(strings.TrimSpace(r.Target.Flavor + " " + r.Target.Version)), integer(int64(r.Threads)),
			txt(round(r)), num(r.Throughput.TPS, 2), num(r.Throughput.QPS, 2), num(r.LatencyMS.P95, 2),
			num(r.LatencyMS.P99, 2), integer(r.Totals.Errors), st, txt(formatTags(r.Tags))})
	}
	return t
}

func round(r *summary.Run) string {
	if r.Plan != nil && r.Plan.Round > 0 {
		return strconv.Itoa(r.Plan.Round)
	}
	if v, ok := r.Tags["round"]; ok {
		return v
	}
	return ""
}

func formatTags(tags map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		parts = append(parts, k+"="+tags[k])
	}
	return strings.Join(parts, ", ")
}

// SettingsTable shows each server's settings side by side; values that
// differ between servers are marked.
func (rep *Report) SettingsTable() Table {
	t := Table{ID: "settings", Title: "Server settings", Columns: []Column{{Name: "Setting"}}}
	keys := map[string]bool{}
	for _, s := range rep.Context.Servers {
		t.Columns = append(t.Columns, Column{Name: s.Series})
		for k := range s.Settings {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		row := []Entry{txt(k)}
		var first string
		differ := false
		for i, s := range rep.Context.Servers {
			v, ok := s.Settings[k]
			if !ok {
				v = "-"
			}
			if i == 0 {
				first = v
			} else if v != first {
				differ = true
			}
			row = append(row, txt(v))
		}
		if differ {
			for i := range row {
				row[i].Class = "diff"
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ServersTable names each series' server, with a TLS column when a run
// recorded how it connected.
func (rep *Report) ServersTable() Table {
	t := Table{ID: "servers", Title: "Servers",
		Columns: []Column{{Name: "Series"}, {Name: "Flavor"}, {Name: "Version"}, {Name: "Sandbox"}, {Name: "DSN (password masked)"}}}
	withTLS := slices.ContainsFunc(rep.Context.Servers, func(s Server) bool { return s.TLS != "" })
	if withTLS {
		t.Columns = append(t.Columns, Column{Name: "TLS"})
	}
	for _, s := range rep.Context.Servers {
		row := []Entry{txt(s.Series), txt(s.Flavor), txt(s.Version), txt(s.Sandbox), txt(s.DSN)}
		if withTLS {
			row = append(row, txt(s.TLS))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// WorkloadTable lists each workload's parameters.
func (rep *Report) WorkloadTable() Table {
	t := Table{ID: "workloads", Title: "Workload parameters",
		Columns: []Column{{Name: "Workload"}, {Name: "Threads"}, {Name: "Parameters"}}}
	for _, w := range rep.Context.Workloads {
		var th []string
		for _, n := range w.Threads {
			th = append(th, strconv.Itoa(n))
		}
		var ps []string
		for _, k := range slices.Sorted(maps.Keys(w.Params)) {
			ps = append(ps, k+"="+strings.Join(w.Params[k], "|"))
		}
		t.Rows = append(t.Rows, []Entry{txt(w.Name), txt(strings.Join(th, ", ")), txt(strings.Join(ps, " "))})
	}
	return t
}

// monitorKeys are the host figures shown per run: key, column, aggregate.
var monitorColumns = []struct {
	key, name string
	max       bool
}{
	{"host.cpu.user", "CPU user % avg", false},
	{"host.cpu.system", "CPU sys % avg", false},
	{"host.cpu.iowait", "iowait % avg", false},
	{"host.load1", "load1 max", true},
	{"host.mem.used_mb", "mem MB max", true},
	{"server.cpu", "server CPU % avg", false},
}

// HostTable lists the host figures sampled beside each run, with the
// busiest disk's %util; nil when no run was monitored.
func (rep *Report) HostTable() *Table {
	t := Table{ID: "host", Title: "Host figures",
		Note:    "Sampled beside each run at every report interval (avg or max over the measured period).",
		Columns: []Column{{Name: "ID", Numeric: true}, {Name: "Workload"}, {Name: "Server"}, {Name: "Threads", Numeric: true}}}
	for _, m := range monitorColumns {
		t.Columns = append(t.Columns, Column{Name: m.name, Numeric: true})
	}
	t.Columns = append(t.Columns, Column{Name: "disk %util max", Numeric: true},
		Column{Name: "server CPU µs/txn", Numeric: true}, Column{Name: "Note"})
	for _, r := range rep.Runs {
		m := r.Monitor
		if m == nil {
			continue
		}
		row := []Entry{txt(RunName(r)), txt(r.Workload), txt(strings.TrimSpace(r.Target.Flavor + " " + r.Target.Version)), integer(int64(r.Threads))}
		for _, c := range monitorColumns {
			src := m.Avg
			if c.max {
				src = m.Max
			}
			if v, ok := src[c.key]; ok {
				row = append(row, num(v, 1))
			} else {
				row = append(row, txt("-"))
			}
		}
		util := math.NaN()
		for k, v := range m.Max {
			if strings.HasPrefix(k, "disk.") && strings.HasSuffix(k, ".util") && (math.IsNaN(util) || v > util) {
				util = v
			}
		}
		row = append(row, num(util, 1))
		if v, ok := m.PerTxn["server_cpu_us"]; ok {
			row = append(row, num(v, 1))
		} else {
			row = append(row, txt("-"))
		}
		row = append(row, txt(m.Note))
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &t
}

// TypeTable is the per-transaction-type table of one run (TPC-C's five
// transactions, for example), with its TpmC in the note.
func TypeTable(r *summary.Run) Table {
	t := Table{ID: "types-" + RunName(r), Title: "Run " + RunName(r) + ": transactions",
		Columns: []Column{{Name: "Transaction"}, {Name: "Count", Numeric: true}, {Name: "Errors", Numeric: true},
			{Name: "Retries", Numeric: true}, {Name: "Avg ms", Numeric: true}, {Name: "P90 ms", Numeric: true},
			{Name: "P95 ms", Numeric: true}, {Name: "P99 ms", Numeric: true}, {Name: "Max ms", Numeric: true}}}
	if r.TpmC != nil {
		t.Note = fmt.Sprintf("TpmC %.2f", *r.TpmC)
	}
	for _, name := range slices.Sorted(maps.Keys(r.PerType)) {
		ty := r.PerType[name]
		t.Rows = append(t.Rows, []Entry{txt(name), integer(ty.Count), integer(ty.Errors), integer(ty.Retries),
			num(ty.LatencyMS.Avg, 2), num(ty.LatencyMS.P90, 2), num(ty.LatencyMS.P95, 2), num(ty.LatencyMS.P99, 2), num(ty.LatencyMS.Max, 2)})
	}
	return t
}

// CheckTable is a run's pass/fail rules in tpcc-mysql's [OK]/[NG] form.
func CheckTable(r *summary.Run) Table {
	t := Table{ID: "checks-" + RunName(r), Title: "Run " + RunName(r) + ": checks",
		Columns: []Column{{Name: "Check"}, {Name: "Value", Numeric: true}, {Name: "Limit", Numeric: true}, {Name: "Result"}}}
	for _, c := range r.Checks {
		res := Entry{Text: "[OK]", Class: "ok"}
		if !c.OK {
			res = Entry{Text: "[NG]", Class: "ng"}
		}
		t.Rows = append(t.Rows, []Entry{txt(c.Name), num(c.Value, 2), num(c.Limit, 2), res})
	}
	return t
}

// SiegeTable is the result table of source document 000 for HTTP and
// replay runs: ETime (elapsed s), RTime (mean response s), TRate
// (transactions/s), Conc (mean concurrency = TRate × RTime, as siege
// computes it), OK (successful transactions), LA (max load average) and
// MEM (max memory used, MB).
func SiegeTable(runs []*summary.Run) Table {
	t := Table{ID: "siege", Title: "Replay results",
		Columns: []Column{{Name: "Run / server"}, {Name: "ETime", Numeric: true, Help: "elapsed seconds"},
			{Name: "RTime", Numeric: true, Help: "mean response time, seconds"},
			{Name: "TRate", Numeric: true, Help: "transactions per second"},
			{Name: "Conc", Numeric: true, Help: "mean concurrency: TRate x RTime"},
			{Name: "OK", Numeric: true, Help: "successful transactions"},
			{Name: "LA", Numeric: true, Help: "maximum load average (1 min)"},
			{Name: "MEM", Numeric: true, Help: "maximum memory used, MB"}}}
	for _, r := range runs {
		if row, ok := httpRow(r); ok {
			t.Rows = append(t.Rows, row)
			continue
		}
		rt := r.LatencyMS.Avg / 1000
		la, mem := math.NaN(), math.NaN()
		if r.Monitor != nil {
			if v, ok := r.Monitor.Max["host.load1"]; ok {
				la = v
			}
			if v, ok := r.Monitor.Max["host.mem.used_mb"]; ok {
				mem = v
			}
		}
		t.Rows = append(t.Rows, []Entry{txt(fmt.Sprintf("%s %s %s", RunName(r), r.Target.Flavor, r.Target.Version)),
			num(r.DurationS, 2), num(rt, 2), num(r.Throughput.TPS, 2), num(r.Throughput.TPS*rt, 2),
			integer(r.Totals.Events - r.Totals.Errors), num(la, 2), num(mem, 0)})
	}
	return t
}
