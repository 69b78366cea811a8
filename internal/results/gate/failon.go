package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Limit is one regression limit of `dbarena compare --fail-on`: the
// comparison fails when B's figure is, with 95% confidence, worse than
// A's by more than Percent.
type Limit struct {
	// Expr is the limit as given ("tps:-5%").
	Expr string
	// Figure is what is compared (stats.TPS, stats.LatencyP95 ...).
	Figure stats.Figure
	// Percent is the allowed change in percent, signed: -5 fails on a
	// drop of more than 5%, +10 on a rise of more than 10%.
	Percent float64
}

// figures maps --fail-on names to the figures compare summarises.
var figures = map[string]stats.Figure{
	"tps": stats.TPS, "qps": stats.QPS, "avg": stats.LatencyAvg, "p50": stats.LatencyP50,
	"p95": stats.LatencyP95, "p99": stats.LatencyP99, "max": stats.LatencyMax,
	"errors": stats.ErrorsPerS, "retries": stats.RetriesPerS, "reconnects": stats.Reconnects,
	"tpmc": stats.TpmC,
}

// FigureNames lists the figures --fail-on accepts.
const FigureNames = "tps, qps, tpmc, avg, p50, p95, p99, max, errors, retries, reconnects"

// ParseLimits reads a --fail-on list: NAME:[+|-]PERCENT% items separated
// by commas. Without a sign the change counts in the figure's worse
// direction (down for tps, up for latencies).
func ParseLimits(s string) ([]Limit, error) {
	var out []Limit
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("%q: empty item: want NAME:PERCENT%% items separated by commas, such as tps:-5%%,p95:+10%%", s)
		}
		name, pct, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("%q: want NAME:PERCENT%%, such as tps:-5%%", item)
		}
		f, ok := figures[strings.ToLower(strings.TrimSpace(name))]
		if !ok {
			return nil, fmt.Errorf("%q: unknown figure %q: want one of %s", item, strings.TrimSpace(name), FigureNames)
		}
		pct = strings.TrimSpace(pct)
		if !strings.HasSuffix(pct, "%") {
			return nil, fmt.Errorf("%q: the size must be a percentage, such as -5%%", item)
		}
		num := strings.TrimSpace(strings.TrimSuffix(pct, "%"))
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: %q is not a number", item, num)
		}
		if v == 0 {
			return nil, fmt.Errorf("%q: the size must not be 0%%", item)
		}
		if v <= -100 {
			return nil, fmt.Errorf("%q: a figure cannot drop by %g%%", item, -v)
		}
		if !strings.HasPrefix(num, "+") && !strings.HasPrefix(num, "-") && !f.LowerIsBetter {
			v = -v
		}
		out = append(out, Limit{Expr: item, Figure: f, Percent: v})
	}
	return out, nil
}

// Verdicts of a compare gate.
const (
	Pass = "pass"
	Fail = "fail"
	// CannotJudge: a side has fewer than two rounds, so no confidence
	// interval can say whether a difference is real; the gate does not fail.
	CannotJudge = "cannot judge"
)

// Judgement is the outcome of one Limit.
type Judgement struct {
	Limit Limit
	// Ratio is B's figure over A's, with its 95% confidence interval.
	Ratio  stats.Ratio
	RoundA int
	RoundB int
	// Verdict is Pass, Fail or CannotJudge.
	Verdict string
	// Detail says what was seen, in one line.
	Detail string
}

// Judge checks limit on B's rounds against A's (the baseline): it fails
// only when the whole 95% confidence interval of the ratio lies beyond the
// limit, so a regression must be significant and larger than the limit.
func Judge(l Limit, a, b []*summary.Run) Judgement {
	j := Judgement{Limit: l, Ratio: l.Figure.Relative(b, a), RoundA: len(a), RoundB: len(b)}
	bound := 1 + l.Percent/100
	r := j.Ratio
	switch {
	case math.IsNaN(r.Value):
		j.Verdict, j.Detail = CannotJudge, fmt.Sprintf("%s: no value to compare (A's is 0 or missing)", l.Figure.Name)
		return j
	case !r.HasCI:
		j.Verdict = CannotJudge
		j.Detail = fmt.Sprintf("%s %s; rounds A %d, B %d: single runs cannot say whether a difference is significant (use --rounds 3 or more)",
			l.Figure.Name, signedPct(r.Value), len(a), len(b))
		return j
	}
	ci := fmt.Sprintf("%s %s, 95%% CI [%s, %s], rounds A %d, B %d", l.Figure.Name, signedPct(r.Value),
		signedPct(r.Low), signedPct(r.High), len(a), len(b))
	beyond := r.High < bound // a drop beyond the limit, with confidence
	if l.Percent > 0 {
		beyond = r.Low > bound
	}
	if beyond {
		j.Verdict, j.Detail = Fail, ci+fmt.Sprintf(": beyond %s with 95%% confidence", signedPct(bound))
	} else {
		j.Verdict, j.Detail = Pass, ci+fmt.Sprintf(": not beyond %s with 95%% confidence", signedPct(bound))
	}
	return j
}

// signedPct formats a ratio as a signed change: 0.93 -> "-7.0%".
func signedPct(r float64) string { return fmt.Sprintf("%+.1f%%", (r-1)*100) }

// Line is a judgement as compare prints it: "FAIL tps:-10%: tps -29.8% ...".
func (j Judgement) Line() string {
	v := "PASS"
	switch j.Verdict {
	case Fail:
		v = "FAIL"
	case CannotJudge:
		v = "CANNOT JUDGE"
	}
	return v + " " + j.Limit.Expr + ": " + j.Detail
}
