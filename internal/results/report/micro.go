package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload/micro"
)

// MicroOp is one operation compared across series, as in sql-bench's
// run-all-tests --cmp: seconds per series, the winner (fewest seconds) and
// how much slower the runner-up is.
type MicroOp struct {
	Op string `json:"op"`
	// Seconds are per series (in MicroComparison.Series order); N is 0
	// where the series did not run the operation.
	Seconds []stats.Summary `json:"seconds"`
	// Extrapolated marks series where a round hit --time-limit.
	Extrapolated []bool `json:"extrapolated"`
	// Wrong marks series where a round got wrong results (sql-bench's "?").
	Wrong []bool `json:"wrong,omitempty"`
	// Winner is the series with the lowest mean; empty when fewer than two
	// series ran the operation, or when the difference is within the
	// noise (Tie).
	Winner string `json:"winner"`
	// Tie: the runner-up's seconds are within the noise of the fastest's
	// (MicroTie).
	Tie bool `json:"tie,omitempty"`
	// Counts are the operation's instances per series (its first run's;
	// 0 where unknown). Unlike: the series that ran it did not do the same
	// number (an imported sql-bench file beside a micro run): their
	// seconds are shown, marked "*" as sql-bench's compare-results marks
	// them, and no winner is named.
	Counts []int64 `json:"counts,omitempty"`
	Unlike bool    `json:"unlike,omitempty"`
	// Ratio is the runner-up's seconds over the winner's (>= 1), with its
	// 95% interval; Significant when the interval excludes 1.
	Ratio stats.Ratio `json:"ratio"`
}

// MicroComparison is the winner table of micro runs of several series.
type MicroComparison struct {
	Series []string  `json:"series"`
	Ops    []MicroOp `json:"ops"`
	// Wins and SignificantWins count operations won per series.
	Wins, SignificantWins map[string]int
	// Rounds is how many runs each series has.
	Rounds []int `json:"rounds"`
}

// CompareMicro builds the winner table from the micro runs of each series
// (series in order): the runs with summary.SectionMicro; other runs and
// incomplete runs are left out. It returns nil when no series has a micro
// run.
func CompareMicro(series []string, runs map[string][]*summary.Run) *MicroComparison {
	mc := &MicroComparison{Wins: map[string]int{}, SignificantWins: map[string]int{}}
	use := map[string][]*summary.Run{}
	for _, s := range series {
		for _, r := range runs[s] {
			if r.HasSection(summary.SectionMicro) && r.Status == summary.StatusComplete {
				use[s] = append(use[s], r)
			}
		}
		if len(use[s]) > 0 {
			mc.Series = append(mc.Series, s)
			mc.Rounds = append(mc.Rounds, len(use[s]))
		}
	}
	if len(mc.Series) == 0 {
		return nil
	}
	// Operations in the order the runs list them (first seen first).
	var ops []string
	for _, s := range mc.Series {
		for _, r := range use[s] {
			for _, op := range runOps(r) {
				if !slices.Contains(ops, op) {
					ops = append(ops, op)
				}
			}
		}
	}
	for _, op := range ops {
		row := MicroOp{Op: op, Ratio: stats.Ratio{Value: math.NaN()}}
		vals := make([][]float64, len(mc.Series))
		for i, s := range mc.Series {
			ext, wrong := false, false
			for _, r := range use[s] {
				if v, ok := r.Figures[micro.SecondsPrefix+op]; ok {
					vals[i] = append(vals[i], v)
					ext = ext || r.Figures[micro.ExtrapolatedPrefix+op] == 1
					wrong = wrong || r.Figures[micro.WrongPrefix+op] > 0
				}
			}
			row.Seconds = append(row.Seconds, stats.Describe(vals[i]))
			row.Extrapolated = append(row.Extrapolated, ext)
			row.Wrong = append(row.Wrong, wrong)
			var n int64 // an extrapolated count stands for the planned one: unknown
			for _, r := range use[s] {
				if t, ok := r.PerType[op]; ok && !ext {
					n = t.Count
					break
				}
			}
			row.Counts = append(row.Counts, n)
		}
		ran := []int{}
		for i := range mc.Series {
			if len(vals[i]) > 0 {
				ran = append(ran, i)
			}
		}
		for _, i := range ran[min(1, len(ran)):] {
			row.Unlike = row.Unlike || row.Counts[i] != row.Counts[ran[0]] && row.Counts[i] > 0 && row.Counts[ran[0]] > 0
		}
		if len(ran) >= 2 && row.Unlike {
			sort.SliceStable(ran, func(a, b int) bool { return row.Seconds[ran[a]].Mean < row.Seconds[ran[b]].Mean })
			row.Ratio = stats.Relative(vals[ran[1]], vals[ran[0]])
		} else if len(ran) >= 2 {
			sort.SliceStable(ran, func(a, b int) bool { return row.Seconds[ran[a]].Mean < row.Seconds[ran[b]].Mean })
			w, second := ran[0], ran[1]
			row.Ratio = stats.Relative(vals[second], vals[w])
			res := max(resolution(use[mc.Series[w]]), resolution(use[mc.Series[second]]))
			if MicroTie(row.Ratio, row.Seconds[w].Mean, row.Seconds[second].Mean, res) {
				row.Tie = true
			} else {
				row.Winner = mc.Series[w]
				mc.Wins[row.Winner]++
				if row.Ratio.Significant {
					mc.SignificantWins[row.Winner]++
				}
			}
		}
		mc.Ops = append(mc.Ops, row)
	}
	return mc
}

// MicroTieBand is how close (5%) single runs' seconds must be to tie:
// without rounds there is no confidence interval to judge the noise by.
const MicroTieBand = 0.05

// MicroTie reports whether the fastest series' seconds (a) and the
// runner-up's (b) are a tie: with rounds on both sides, when the ratio's
// 95% interval includes 1; with single runs, when b is within
// MicroTieBand of a; and always when they differ by no more than
// resolution, the coarsest clock of the two (sql-bench's whole seconds).
func MicroTie(r stats.Ratio, a, b, resolution float64) bool {
	switch {
	case math.Abs(b-a) <= resolution:
		return true
	case r.HasCI:
		return !r.Significant
	}
	return b <= a*(1+MicroTieBand)
}

// resolution is the coarsest resolution of runs' seconds: 0 for dbarena's
// own, whole seconds for imported sql-bench files.
func resolution(runs []*summary.Run) float64 {
	var res float64
	for _, r := range runs {
		res = max(res, r.Figures[store.SQLBenchResolution])
	}
	return res
}

// runOps lists a micro run's operations in suite order, unknown ones
// (from another dbarena version) after them by name.
func runOps(r *summary.Run) []string {
	order := micro.Ops()
	var ops []string
	for k := range r.Figures {
		if op, ok := strings.CutPrefix(k, micro.SecondsPrefix); ok {
			ops = append(ops, op)
		}
	}
	pos := func(op string) int {
		if i := slices.Index(order, op); i >= 0 {
			return i
		}
		return len(order)
	}
	sort.Slice(ops, func(a, b int) bool {
		return pos(ops[a]) < pos(ops[b]) || pos(ops[a]) == pos(ops[b]) && ops[a] < ops[b]
	})
	return ops
}

// Tables renders the comparison: the per-operation winner table and the
// wins per series.
func (mc *MicroComparison) Tables() []Table {
	single := false
	for _, n := range mc.Rounds {
		single = single || n < 2
	}
	t := Table{ID: summary.SectionMicro, Title: "Micro suite: seconds per operation (fewer is better)",
		Note: "Seconds are the mean over rounds (± half-width of the 95% confidence interval). Ratio: the runner-up's seconds over the winner's. " +
			"\"~\" marks seconds extrapolated from a test capped by --time-limit; \"?\" an operation with wrong results. " +
			"winner is \"tie\" when the difference is within the noise: the ratio's 95% interval includes 1 (rounds), the runner-up is within 5% (single runs), " +
			"or the seconds differ by no more than the coarser clock (sql-bench's files: whole seconds). " +
			"\"*N\": the series ran the operation N times, not as often as the others (sql-bench's mark): unlike work, no winner."}
	if single {
		t.Note += " Some series have single runs: significance cannot be judged (repeat with --rounds or a plan)."
	}
	t.Columns = append(t.Columns, Column{Name: "operation"})
	for i, s := range mc.Series {
		t.Columns = append(t.Columns, Column{Name: fmt.Sprintf("%s (s, %d rounds)", s, mc.Rounds[i]), Numeric: true})
	}
	t.Columns = append(t.Columns, Column{Name: "winner"}, Column{Name: "ratio", Numeric: true, Help: "runner-up seconds / winner seconds"},
		Column{Name: "significant", Help: "the 95% interval of the ratio excludes 1"})
	for _, op := range mc.Ops {
		row := []Entry{txt(op.Op)}
		for i, s := range op.Seconds {
			e := meanCI(s, 3)
			if op.Extrapolated[i] {
				e.Text = "~" + e.Text
			}
			if op.Wrong[i] {
				e.Text = "?" + e.Text
			}
			if op.Unlike && op.Counts[i] > 0 && s.N > 0 {
				e.Text += fmt.Sprintf(" *%d", op.Counts[i])
			}
			if mc.Series[i] == op.Winner {
				e.Class = "ok"
			}
			row = append(row, e)
		}
		switch {
		case op.Unlike:
			row = append(row, txt("unlike work"))
		case op.Tie:
			row = append(row, txt("tie"))
		default:
			row = append(row, txt(orDash(op.Winner)))
		}
		if math.IsNaN(op.Ratio.Value) {
			row = append(row, txt("-"), txt("-"))
		} else {
			r := txt(fmt.Sprintf("%.2f", op.Ratio.Value))
			if op.Ratio.HasCI {
				r.Text += fmt.Sprintf(" [%.2f, %.2f]", op.Ratio.Low, op.Ratio.High)
			}
			sig := txt("no")
			switch {
			case !op.Ratio.HasCI:
				sig = txt("cannot judge")
			case op.Ratio.Significant:
				sig, r.Class = Entry{Text: "yes", Class: "sig"}, "sig"
			}
			row = append(row, r, sig)
		}
		t.Rows = append(t.Rows, row)
	}
	w := Table{ID: "micro-wins", Title: "Micro suite: operations won per series",
		Columns: []Column{{Name: "series"}, {Name: "wins", Numeric: true}, {Name: "significant wins", Numeric: true}, {Name: "total seconds", Numeric: true}}}
	for i, s := range mc.Series {
		var total float64
		for _, op := range mc.Ops {
			if op.Seconds[i].N > 0 {
				total += op.Seconds[i].Mean
			}
		}
		w.Rows = append(w.Rows, []Entry{txt(s), integer(int64(mc.Wins[s])), integer(int64(mc.SignificantWins[s])), num(total, 3)})
	}
	return []Table{t, w}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Micro is the winner table of the report's micro runs by series, or nil
// when the report has none.
func (rep *Report) Micro() *MicroComparison {
	runs := map[string][]*summary.Run{}
	for _, c := range rep.Cells {
		runs[c.Series] = append(runs[c.Series], c.Runs...)
	}
	return CompareMicro(rep.Series, runs)
}

// microTables are the report's micro tables, or none.
func (rep *Report) microTables() []Table {
	if mc := rep.Micro(); mc != nil {
		return mc.Tables()
	}
	return nil
}

// writeText prints t as an aligned terminal table, its note below.
func writeText(b *strings.Builder, t Table) {
	fmt.Fprintf(b, "%s\n", t.Title)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	var head []string
	for _, c := range t.Columns {
		head = append(head, c.Name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, row := range t.Rows {
		var cells []string
		for _, e := range row {
			cells = append(cells, e.Text)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	_ = tw.Flush() // a strings.Builder does not fail
	if t.Note != "" {
		fmt.Fprintf(b, "%s\n", t.Note)
	}
}
