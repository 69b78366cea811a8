// Package gate reads and judges the pass/fail rules of CI gates: run
// thresholds in the spirit of k6's ("p95<5ms", "tps>=1000",
// "errors<0.1%", "type:new_order p90<5ms", "lag_p99<100ms") and compare
// regression limits ("tps:-5%,p95:+10%"), and writes their outcomes as
// JUnit XML and Markdown, the two formats CI systems display.
package gate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// Threshold is one parsed threshold expression: [SELECTOR ]METRIC OP VALUE.
type Threshold struct {
	// Expr is the expression as given (trimmed).
	Expr string
	// Type is the transaction type (or replay fingerprint id) the
	// threshold applies to ("type:NAME" or "fingerprint:ID"); "" for the
	// whole run.
	Type string
	// Metric is the canonical metric name: min, avg, p50, p90, p95, p99,
	// p99.9, max, tps, qps, errors, tpmc, lag_avg, lag_p50 ... lag_max.
	Metric string
	// Op is one of <, <=, >, >=.
	Op string
	// Limit is the value in the metric's unit (Unit).
	Limit float64
	// Unit is "ms", "/s", "%" (errors as a share of events) or "" (a count).
	Unit string
}

// metric kinds.
const (
	kindLatency = iota
	kindRate
	kindErrors
	kindCount
	kindLag
)

// metrics maps each accepted metric name to its canonical name and kind.
var metrics = map[string]struct {
	name string
	kind int
}{
	"min": {"min", kindLatency}, "avg": {"avg", kindLatency}, "mean": {"avg", kindLatency},
	"med": {"p50", kindLatency}, "p50": {"p50", kindLatency}, "p90": {"p90", kindLatency},
	"p95": {"p95", kindLatency}, "p99": {"p99", kindLatency}, "p99.9": {"p99.9", kindLatency},
	"p999": {"p99.9", kindLatency}, "max": {"max", kindLatency},
	"tps": {"tps", kindRate}, "qps": {"qps", kindRate}, "tpmc": {"tpmc", kindRate},
	"errors": {"errors", kindErrors}, "error_rate": {"errors", kindErrors},
	"count": {"count", kindCount}, "events": {"count", kindCount},
	"lag_min": {"lag_min", kindLag}, "lag_avg": {"lag_avg", kindLag}, "lag_p50": {"lag_p50", kindLag},
	"lag_p90": {"lag_p90", kindLag}, "lag_p95": {"lag_p95", kindLag}, "lag_p99": {"lag_p99", kindLag},
	"lag_p99.9": {"lag_p99.9", kindLag}, "lag_p999": {"lag_p99.9", kindLag}, "lag_max": {"lag_max", kindLag},
}

// MetricNames lists the metrics a threshold accepts, for error messages.
const MetricNames = "p50, p90, p95, p99, p99.9, min, avg, max (latency), tps, qps, tpmc, errors, count, lag_p50 ... lag_max (replays)"

// Parse reads one threshold expression. Its error is one line that names
// what is wrong (the caller adds the flag or file and line).
func Parse(expr string) (Threshold, error) {
	s := strings.TrimSpace(expr)
	t := Threshold{Expr: s}
	if s == "" {
		return t, fmt.Errorf("empty threshold: want METRIC OP VALUE, such as p95<5ms")
	}
	for _, sel := range []string{"type:", "fingerprint:", "fp:"} {
		if len(s) >= len(sel) && strings.EqualFold(s[:len(sel)], sel) {
			rest := s[len(sel):]
			i := strings.IndexFunc(rest, unicode.IsSpace)
			if i <= 0 {
				return t, fmt.Errorf("%q: want %sNAME METRIC OP VALUE, such as type:new_order p90<5ms", s, sel)
			}
			t.Type, s = rest[:i], strings.TrimSpace(rest[i:])
			break
		}
	}
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return t, fmt.Errorf("%q: no comparison: want METRIC OP VALUE with OP one of <, <=, >, >=", t.Expr)
	}
	name := strings.ToLower(strings.TrimSpace(s[:i]))
	// k6 spelling: p(95), p(99.9).
	if strings.HasPrefix(name, "p(") && strings.HasSuffix(name, ")") {
		name = "p" + name[2:len(name)-1]
	}
	m, ok := metrics[name]
	if !ok {
		return t, fmt.Errorf("%q: unknown metric %q: want one of %s", t.Expr, strings.TrimSpace(s[:i]), MetricNames)
	}
	t.Metric = m.name
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, ">="):
		t.Op, rest = rest[:2], rest[2:]
	case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, ">"):
		t.Op, rest = rest[:1], rest[1:]
	default:
		return t, fmt.Errorf("%q: comparison %q: want one of <, <=, >, >=", t.Expr, firstOp(rest))
	}
	if strings.ContainsAny(rest[:min(1, len(rest))], "<>=!") {
		return t, fmt.Errorf("%q: comparison %q: want one of <, <=, >, >=", t.Expr, firstOp(s[i:]))
	}
	if t.Type != "" && (m.kind == kindLag || m.name == "tpmc" || m.name == "qps") {
		return t, fmt.Errorf("%q: %s is not a per-type figure: per type give a latency, tps, errors or count", t.Expr, t.Metric)
	}
	v, unit, err := parseValue(strings.TrimSpace(rest), m.kind)
	if err != nil {
		return t, fmt.Errorf("%q: %w", t.Expr, err)
	}
	if m.kind == kindRate {
		v, unit = perMetric(v, unit, t.Metric)
	}
	t.Limit, t.Unit = v, unit
	return t, nil
}

// perMetric converts a rate written per second ("/s"), per minute ("/min")
// or in the metric's own unit ("") to the metric's unit: per minute for
// tpmc, per second for tps and qps.
func perMetric(v float64, written, metric string) (float64, string) {
	if metric == "tpmc" {
		if written == "/s" {
			v *= 60
		}
		return v, "/min"
	}
	if written == "/min" {
		v /= 60
	}
	return v, "/s"
}

// firstOp is the leading operator characters of s.
func firstOp(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("<>=!", r) })
	if end < 0 {
		return s
	}
	return s[:end]
}

// parseValue reads the value of a threshold of a metric of kind k, and
// returns it in the metric's unit.
func parseValue(s string, k int) (float64, string, error) {
	if s == "" {
		return 0, "", fmt.Errorf("no value after the comparison")
	}
	num := s
	suffix := ""
	if i := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '+' || r == '-')
	}); i >= 0 {
		num, suffix = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	// "1e3" is a number, but "5ms" must not read "e" oddly: ParseFloat decides.
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("value %q is not a number", s)
	}
	if v < 0 {
		return 0, "", fmt.Errorf("value %q is negative", s)
	}
	switch k {
	case kindLatency, kindLag:
		scale := map[string]float64{"": 1, "ms": 1, "s": 1000, "us": 0.001, "µs": 0.001, "m": 60000, "min": 60000}
		f, ok := scale[suffix]
		if !ok {
			return 0, "", fmt.Errorf("unit %q: want ms, s or us", suffix)
		}
		return v * f, "ms", nil
	case kindRate:
		if suffix != "" && suffix != "/s" && suffix != "/min" {
			return 0, "", fmt.Errorf("unit %q: a rate is a number (tps and qps per second, tpmc per minute)", suffix)
		}
		return v, suffix, nil
	case kindErrors:
		switch suffix {
		case "%":
			if v > 100 {
				return 0, "", fmt.Errorf("value %q is above 100%%", s)
			}
			return v, "%", nil
		case "":
			return v, "", nil
		}
		return 0, "", fmt.Errorf("unit %q: errors take a share (0.1%%) or a count (10)", suffix)
	default:
		if suffix != "" {
			return 0, "", fmt.Errorf("unit %q: a count is a number", suffix)
		}
		return v, "", nil
	}
}

// ParseAll parses each expression; the first error names the expression's
// position (1-based) in exprs.
func ParseAll(exprs []string) ([]Threshold, error) {
	out := make([]Threshold, 0, len(exprs))
	for _, e := range exprs {
		t, err := Parse(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Eval judges the threshold on run. A threshold whose figure the run does
// not have (no per-type figures, no replay lag, an unknown type) fails,
// with Note saying why: a gate that cannot be checked must not pass.
func (t Threshold) Eval(run *summary.Run) summary.Threshold {
	r := summary.Threshold{Expr: t.Expr, Metric: t.Metric, Type: t.Type, Op: t.Op, Limit: t.Limit, Unit: t.Unit}
	v, note := t.value(run)
	if note != "" {
		r.Note = note
		return r
	}
	r.Value = &v
	switch t.Op {
	case "<":
		r.Pass = v < t.Limit
	case "<=":
		r.Pass = v <= t.Limit
	case ">":
		r.Pass = v > t.Limit
	case ">=":
		r.Pass = v >= t.Limit
	}
	if run.Status != summary.StatusComplete && run.Status != "" {
		r.Pass = false
		r.Note = "the run is " + run.Status
	}
	return r
}

// EvalAll judges every threshold on run.
func EvalAll(ts []Threshold, run *summary.Run) []summary.Threshold {
	out := make([]summary.Threshold, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Eval(run))
	}
	return out
}

// value reads the threshold's figure from run, or says why it cannot.
func (t Threshold) value(run *summary.Run) (float64, string) {
	lat, count, errs := run.LatencyMS, run.Totals.Events, run.Totals.Errors
	if t.Type != "" {
		if len(run.PerType) == 0 {
			return 0, "the run has no per-type figures"
		}
		ty, ok := lookupType(run.PerType, t.Type)
		if !ok {
			names := make([]string, 0, len(run.PerType))
			for n := range run.PerType {
				names = append(names, n)
			}
			sort.Strings(names)
			if len(names) > 8 {
				names = append(names[:8], "...")
			}
			return 0, fmt.Sprintf("the run has no type %q (it has %s)", t.Type, strings.Join(names, ", "))
		}
		lat, count, errs = ty.LatencyMS, ty.Count, ty.Errors
	}
	m := metrics[t.Metric]
	switch m.kind {
	case kindLatency:
		if count == 0 {
			return 0, "no event completed: no latency"
		}
		return latency(lat, t.Metric), ""
	case kindLag:
		if run.Replay == nil || run.Replay.LagMS == nil {
			return 0, "the run has no replay lag figures (a paced replay has them)"
		}
		return latency(*run.Replay.LagMS, strings.TrimPrefix(t.Metric, "lag_")), ""
	case kindRate:
		switch t.Metric {
		case "qps":
			return run.Throughput.QPS, ""
		case "tpmc":
			if run.TpmC == nil {
				return 0, "the run has no tpmC (a TPC-C run has)"
			}
			return *run.TpmC, ""
		}
		if t.Type != "" {
			if run.DurationS <= 0 {
				return 0, "the run has no measured time"
			}
			return float64(count) / run.DurationS, ""
		}
		return run.Throughput.TPS, ""
	case kindErrors:
		if t.Unit == "%" {
			if count+errs == 0 {
				return 0, ""
			}
			return 100 * float64(errs) / float64(count+errs), ""
		}
		return float64(errs), ""
	}
	return float64(count), ""
}

// lookupType finds type name in types: exactly, or else the one type whose
// name matches ignoring case, '-', '_' and spaces (TPC-C's "New-Order" is
// type:new_order).
func lookupType(types map[string]summary.Type, name string) (summary.Type, bool) {
	if ty, ok := types[name]; ok {
		return ty, true
	}
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '-' || r == '_' || unicode.IsSpace(r) {
				return -1
			}
			return unicode.ToLower(r)
		}, s)
	}
	var found summary.Type
	n := 0
	for k, ty := range types {
		if norm(k) == norm(name) {
			found, n = ty, n+1
		}
	}
	return found, n == 1
}

// latency picks a percentile (canonical name without "lag_") from l.
func latency(l summary.Latency, name string) float64 {
	switch name {
	case "min":
		return l.Min
	case "avg":
		return l.Avg
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p95":
		return l.P95
	case "p99":
		return l.P99
	case "p99.9":
		return l.P999
	}
	return l.Max
}

// Failed reports whether any result failed.
func Failed(rs []summary.Threshold) bool {
	for _, r := range rs {
		if !r.Pass {
			return true
		}
	}
	return false
}

// Line is a result as the run's closing line prints it:
// "FAIL p95<5ms: p95 = 7.31 ms".
func Line(r summary.Threshold) string {
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	return verdict + " " + r.Expr + ": " + Detail(r)
}

// Detail says what a result measured, or why it could not.
func Detail(r summary.Threshold) string {
	what := r.Metric
	if r.Type != "" {
		what = r.Type + " " + what
	}
	if r.Value == nil {
		return r.Note
	}
	s := fmt.Sprintf("%s = %s", what, FormatValue(*r.Value, r.Unit))
	if !r.Pass && r.Note == "" {
		s += fmt.Sprintf(", not %s %s", r.Op, FormatValue(r.Limit, r.Unit))
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// FormatValue formats a figure with its unit.
func FormatValue(v float64, unit string) string {
	n := strconv.FormatFloat(v, 'f', -1, 64)
	if a := math.Abs(v); a >= 100 {
		n = strconv.FormatFloat(v, 'f', 1, 64)
	} else if a > 0 {
		n = strconv.FormatFloat(v, 'g', 4, 64)
	}
	switch unit {
	case "ms":
		return n + " ms"
	case "/s", "/min":
		return n + unit
	}
	return n + unit
}
