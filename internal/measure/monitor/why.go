package monitor

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// WhyRow is one figure of "where the difference comes from": its mean
// over the rounds of A and of B, B's ratio to A (NaN when A is 0) and,
// with two or more rounds on each side, their 95% confidence intervals.
type WhyRow struct {
	// Name names the figure ("server CPU us/txn", "lock wait %").
	Name string
	// Key is the figure's key: per_txn.NAME or bottleneck.NAME.
	Key  string
	A, B float64
	// NA and NB count the rounds of A and B that have the figure.
	NA, NB int
	// Ratio is B / A.
	Ratio float64
	// RatioCI is B / A with its 95% interval over the rounds
	// (stats.Relative: delta method on the log of the ratio).
	RatioCI stats.Ratio
	// Diff is a cost's B - A with Welch's 95% interval: a cost differs
	// significantly when it excludes 0 (Welch's test of equal means,
	// which holds where A is near 0 and the ratio's interval, from the
	// relative spread of A, is wide).
	Diff stats.Diff
	// Share is true for shares of time (percent), compared by difference
	// in points rather than by ratio.
	Share bool
	// Points is B - A in percentage points with its 95% interval
	// (stats.Difference, Welch); set for shares. A share differs
	// significantly when the interval excludes 0.
	Points stats.Diff
	// MSA and MSB are a share's time per transaction (ms of one session's
	// time per transaction: share × threads / tps, Little's law), and
	// Contrib is MSB - MSA with its interval: the share's part of the
	// difference in time per transaction. HasContrib is false when a
	// round lacks threads or throughput.
	MSA, MSB   float64
	Contrib    stats.Diff
	HasContrib bool
	// Host is true for host-wide figures (disk KB: every process's I/O
	// on the device), shown after the costs of the server and dbarena
	// and left out of the reading.
	Host bool
	// phrase names a share in the reading ("in lock waits").
	phrase string
	// zeroNoise is set for a cost that A never had (A = 0, no ratio) and
	// B had in amounts its rounds do not tell from zero (the interval of
	// B - A holds 0): it is sorted last and left out of the reading.
	zeroNoise bool
}

// HasCI reports whether the row carries a confidence interval (two or
// more rounds on each side).
func (r WhyRow) HasCI() bool {
	if r.Share {
		return r.Points.HasCI
	}
	return r.Diff.HasCI
}

// Significant reports whether the rounds tell B from A: Welch's 95%
// interval of B - A excludes 0 (points for a share).
func (r WhyRow) Significant() bool {
	if r.Share {
		return r.Points.Significant
	}
	return r.Diff.Significant
}

// whyCosts are the per-transaction costs compared, in order.
var whyCosts = []struct {
	key, name string
	host      bool
}{
	{"server_cpu_us", "server CPU us/txn", false},
	{"client_cpu_us", "client CPU us/txn", false},
	{"fsyncs", "fsyncs/txn", false},
	{"disk_read_kb", "disk read KB/txn", true},
	{"disk_write_kb", "disk write KB/txn", true},
	// The server's own counts: shown after the CPU and fsync costs and
	// left out of the reading (host true), where a miss that appears from
	// none would otherwise outrank a CPU ratio.
	{"buffer_misses", "buffer pool misses/txn", true},
	{"rows_examined", "rows examined/txn", true},
	{"wal_kb", "WAL/redo KB/txn", true},
}

// whyShares are the bottleneck figures compared, shares of time.
var whyShares = []struct{ key, name, phrase string }{
	{"wait_cpu_pct", "on CPU %", "on CPU"},
	{"wait_io_wal_pct", "IO and WAL wait %", "in IO and WAL waits"},
	{"wait_lock_pct", "lock wait %", "in lock waits"},
	{"wait_lwlock_pct", "LWLock wait %", "in LWLock waits"},
	{"wait_ipc_pct", "IPC wait %", "in IPC waits"},
	{"wait_client_pct", "client wait %", "waiting for the client"},
	{"row_lock_pct", "row-lock wait %", "in row-lock waits"},
}

// values returns the figure of each run that has it.
func values(runs []*summary.Run, get func(*summary.Run) (float64, bool)) []float64 {
	var out []float64
	for _, r := range runs {
		if v, ok := get(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// msPerTxn is a share of session time (percent) as milliseconds of one
// session's time per transaction: in a run of threads sessions at tps
// transactions per second, each transaction holds threads/tps seconds of
// session time (Little's law), share of which went to the share's class.
func msPerTxn(r *summary.Run, pct float64) (float64, bool) {
	if r.Threads <= 0 || r.Throughput.TPS <= 0 {
		return 0, false
	}
	return pct / 100 * float64(r.Threads) / r.Throughput.TPS * 1000, true
}

// sessionMS returns the session time per transaction (ms) of each run
// that has it, and whether every run has it.
func sessionMS(runs []*summary.Run) ([]float64, bool) {
	var out []float64
	for _, r := range runs {
		v, ok := msPerTxn(r, 100)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// Why compares the per-transaction costs and wait shares of two sets of
// rounds: costs first, by how far B's ratio to A is from 1 (host-wide
// disk figures after the server's and dbarena's own); then shares, by
// their contribution to the difference in time per transaction (|MSB -
// MSA|) when every round has threads and throughput, else by how many
// points they differ. Each row carries its 95% intervals over the rounds
// (none with a single round on a side). Figures missing on either side
// are left out.
func Why(a, b []*summary.Run) []WhyRow {
	var costs, shares []WhyRow
	for _, c := range whyCosts {
		get := func(r *summary.Run) (float64, bool) {
			if r.Monitor == nil {
				return 0, false
			}
			v, ok := r.Monitor.PerTxn[c.key]
			return v, ok
		}
		xa, xb := values(a, get), values(b, get)
		if len(xa) > 0 && len(xb) > 0 {
			row := WhyRow{Name: c.name, Key: "per_txn." + c.key, NA: len(xa), NB: len(xb),
				RatioCI: stats.Relative(xb, xa), Host: c.host}
			row.A, row.B = stats.Describe(xa).Mean, stats.Describe(xb).Mean
			row.Ratio = ratio(row.A, row.B)
			row.Diff = stats.Difference(xb, xa)
			if math.IsNaN(row.Ratio) && row.Diff.HasCI && !row.Diff.Significant {
				row.zeroNoise = true
			}
			costs = append(costs, row)
		}
	}
	contrib := true
	for _, s := range whyShares {
		var ma, mb []float64
		okA, okB := true, true
		ms := func(ok *bool, out *[]float64) func(*summary.Run) (float64, bool) {
			return func(r *summary.Run) (float64, bool) {
				if r.Bottleneck == nil {
					return 0, false
				}
				v, has := r.Bottleneck.Figures[s.key]
				if has {
					m, good := msPerTxn(r, v)
					*ok = *ok && good
					*out = append(*out, m)
				}
				return v, has
			}
		}
		xa, xb := values(a, ms(&okA, &ma)), values(b, ms(&okB, &mb))
		if len(xa) == 0 || len(xb) == 0 {
			continue
		}
		row := WhyRow{Name: s.name, Key: "bottleneck.figures." + s.key, NA: len(xa), NB: len(xb),
			Share: true, Points: stats.Difference(xb, xa), phrase: s.phrase}
		row.A, row.B = stats.Describe(xa).Mean, stats.Describe(xb).Mean
		row.Ratio = ratio(row.A, row.B)
		if okA && okB {
			row.HasContrib = true
			row.MSA, row.MSB = stats.Describe(ma).Mean, stats.Describe(mb).Mean
			row.Contrib = stats.Difference(mb, ma)
		} else {
			contrib = false
		}
		shares = append(shares, row)
	}
	slices.SortStableFunc(costs, func(x, y WhyRow) int {
		if x.Host != y.Host { // the server's and dbarena's own costs first
			if x.Host {
				return 1
			}
			return -1
		}
		return cmpDesc(distance(x), distance(y))
	})
	slices.SortStableFunc(shares, func(x, y WhyRow) int {
		if contrib {
			return cmpDesc(math.Abs(x.Contrib.Value), math.Abs(y.Contrib.Value))
		}
		return cmpDesc(math.Abs(x.B-x.A), math.Abs(y.B-y.A))
	})
	return append(costs, shares...)
}

// WhySessionMS is the session time per transaction (ms: threads / tps,
// Little's law) of A's and B's rounds, their means and the difference
// with its interval, which the shares' Contrib split by wait class; ok is
// false when a round lacks threads or throughput.
func WhySessionMS(a, b []*summary.Run) (msA, msB float64, diff stats.Diff, ok bool) {
	xa, okA := sessionMS(a)
	xb, okB := sessionMS(b)
	if !okA || !okB || len(xa) == 0 || len(xb) == 0 {
		return 0, 0, stats.Diff{}, false
	}
	return stats.Describe(xa).Mean, stats.Describe(xb).Mean, stats.Difference(xb, xa), true
}

func ratio(a, b float64) float64 {
	if a == 0 {
		if b == 0 {
			return 1
		}
		return math.NaN()
	}
	return b / a
}

// distance is how far a cost's ratio is from 1 (a cost that appears from
// zero is the farthest, unless its rounds do not tell it from zero).
func distance(r WhyRow) float64 {
	if r.zeroNoise {
		return 0
	}
	if math.IsNaN(r.Ratio) {
		return math.Inf(1)
	}
	if r.Ratio <= 0 {
		return math.Inf(1)
	}
	return math.Abs(math.Log(r.Ratio))
}

func cmpDesc(x, y float64) int {
	switch {
	case x > y:
		return -1
	case x < y:
		return 1
	}
	return 0
}

// Thresholds of the one-line reading of Why: a cost ratio counts from
// WhyRatio (or its inverse), a share difference from WhyPoints.
const (
	WhyRatio  = 1.2
	WhyPoints = 10.0
)

// WhyReading is the one-line reading of Why's rows: the cost that differs
// most and the wait share that differs most, when they pass the
// thresholds; with intervals, a difference the interval does not bear
// out is said to be within the noise of the rounds. The time waiting for
// the client is the mirror of all the server-side shares, so it is named
// only when no server-side share passes: a hot row reads as more lock
// waits, not as less client wait.
func WhyReading(rows []WhyRow) string {
	var parts []string
	for _, r := range rows {
		if r.Share || r.Host || r.zeroNoise {
			continue
		}
		what := strings.TrimSuffix(strings.TrimSuffix(r.Name, "/txn"), " us")
		part := ""
		switch {
		case math.IsNaN(r.Ratio) && r.B > 0:
			part = fmt.Sprintf("B has %s per transaction, A none", what)
		case r.Ratio >= WhyRatio:
			part = fmt.Sprintf("B spends %.1fx more %s per transaction", r.Ratio, what)
		case r.Ratio > 0 && r.Ratio <= 1/WhyRatio:
			part = fmt.Sprintf("B spends %.1fx less %s per transaction", 1/r.Ratio, what)
		default:
			parts = append(parts, "the costs per transaction are within 20%")
		}
		if part != "" {
			if r.HasCI() && !r.Significant() {
				part += " (within the noise of the rounds)"
			}
			parts = append(parts, part)
		}
		break
	}
	waits, seen := shareReading(rows)
	if seen {
		parts = append(parts, waits)
	}
	return strings.Join(parts, "; ")
}

// clientShare is the key of the time sessions wait for the client.
const clientShare = "bottleneck.figures.wait_client_pct"

// shareReading words the wait share that differs most by points,
// preferring a server-side share over the client's, whatever the rows'
// order; seen is false when no share was compared.
func shareReading(rows []WhyRow) (reading string, seen bool) {
	var pick *WhyRow
	for pass := 0; pass < 2 && pick == nil; pass++ {
		var most *WhyRow
		for i := range rows {
			r := &rows[i]
			if !r.Share || (pass == 0 && r.Key == clientShare) {
				continue
			}
			seen = true
			if most == nil || math.Abs(r.B-r.A) > math.Abs(most.B-most.A) {
				most = r
			}
		}
		if most != nil && math.Abs(most.B-most.A) >= WhyPoints {
			pick = most
		}
	}
	if pick == nil {
		return "their waits are the same (within 10 points)", seen
	}
	d := pick.B - pick.A
	dir := "more"
	if d < 0 {
		dir = "less"
	}
	out := fmt.Sprintf("B's sessions spend %.0f points %s of their time %s (%.0f%% vs %.0f%%",
		math.Abs(d), dir, pick.phrase, pick.B, pick.A)
	if pick.HasContrib {
		out += fmt.Sprintf(", %+.3g ms per transaction", pick.Contrib.Value)
	}
	if pick.HasCI() && !pick.Significant() {
		out += "; within the noise of the rounds"
	}
	return out + ")", true
}

// WhyFigure is a WhyRow as JSON: figures without a value (a ratio to a
// zero A) are left out.
type WhyFigure struct {
	Name string  `json:"name"`
	Key  string  `json:"key"`
	A    float64 `json:"a"`
	B    float64 `json:"b"`
	NA   int     `json:"rounds_a"`
	NB   int     `json:"rounds_b"`
	// Ratio is B/A with its interval (costs), Diff B-A with Welch's
	// interval, whose significance marks the cost.
	Ratio *stats.Ratio `json:"ratio,omitempty"`
	Diff  *stats.Diff  `json:"diff,omitempty"`
	// Points is B-A in percentage points with its interval (shares).
	Points *stats.Diff `json:"points,omitempty"`
	// ContribMS is a share's part of the difference in session time per
	// transaction, ms, with its interval.
	ContribMS *stats.Diff `json:"contrib_ms,omitempty"`
	Host      bool        `json:"host,omitempty"`
}

// Figure returns the row as JSON.
func (r WhyRow) Figure() WhyFigure {
	f := WhyFigure{Name: r.Name, Key: r.Key, A: r.A, B: r.B, NA: r.NA, NB: r.NB, Host: r.Host}
	finite := func(xs ...float64) bool {
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	if r.Share {
		if p := r.Points; finite(p.Value, p.Low, p.High) {
			f.Points = &p
		}
		if c := r.Contrib; r.HasContrib && finite(c.Value, c.Low, c.High) {
			f.ContribMS = &c
		}
	} else {
		if q := r.RatioCI; finite(q.Value, q.Low, q.High) {
			f.Ratio = &q
		}
		if d := r.Diff; finite(d.Value, d.Low, d.High) {
			f.Diff = &d
		}
	}
	return f
}
