package monitor

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// WhyRow is one figure of "where the difference comes from": its mean
// over the rounds of A and of B, and B's ratio to A (NaN when A is 0).
type WhyRow struct {
	// Name names the figure ("server CPU us/txn", "lock wait %").
	Name string
	// Key is the figure's key: per_txn.NAME or bottleneck.NAME.
	Key  string
	A, B float64
	// Ratio is B / A.
	Ratio float64
	// Share is true for shares of time (percent), compared by difference
	// in points rather than by ratio.
	Share bool
	// Host is true for host-wide figures (disk KB: every process's I/O
	// on the device), shown after the costs of the server and dbarena
	// and left out of the reading.
	Host bool
	// phrase names a share in the reading ("in lock waits").
	phrase string
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

// mean averages get over the runs that have the figure.
func mean(runs []*summary.Run, get func(*summary.Run) (float64, bool)) (float64, bool) {
	var sum float64
	n := 0
	for _, r := range runs {
		if v, ok := get(r); ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// Why compares the per-transaction costs and wait shares of two sets of
// rounds: costs first, by how far B's ratio to A is from 1 (host-wide
// disk figures after the server's and dbarena's own); then shares,
// by how many points they differ. Figures missing on either side are left
// out.
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
		va, okA := mean(a, get)
		vb, okB := mean(b, get)
		if okA && okB {
			costs = append(costs, WhyRow{Name: c.name, Key: "per_txn." + c.key, A: va, B: vb, Ratio: ratio(va, vb), Host: c.host})
		}
	}
	for _, s := range whyShares {
		get := func(r *summary.Run) (float64, bool) {
			if r.Bottleneck == nil {
				return 0, false
			}
			v, ok := r.Bottleneck.Figures[s.key]
			return v, ok
		}
		va, okA := mean(a, get)
		vb, okB := mean(b, get)
		if okA && okB {
			shares = append(shares, WhyRow{Name: s.name, Key: "bottleneck.figures." + s.key, A: va, B: vb, Ratio: ratio(va, vb), Share: true, phrase: s.phrase})
		}
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
	slices.SortStableFunc(shares, func(x, y WhyRow) int { return cmpDesc(math.Abs(x.B-x.A), math.Abs(y.B-y.A)) })
	return append(costs, shares...)
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
// zero is the farthest).
func distance(r WhyRow) float64 {
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
// thresholds. The time waiting for the client is the mirror of all the
// server-side shares, so it is named only when no server-side share
// passes: a hot row reads as more lock waits, not as less client wait.
func WhyReading(rows []WhyRow) string {
	var parts []string
	for _, r := range rows {
		if r.Share || r.Host {
			continue
		}
		what := strings.TrimSuffix(strings.TrimSuffix(r.Name, "/txn"), " us")
		switch {
		case math.IsNaN(r.Ratio) && r.B > 0:
			parts = append(parts, fmt.Sprintf("B has %s per transaction, A none", what))
		case r.Ratio >= WhyRatio:
			parts = append(parts, fmt.Sprintf("B spends %.1fx more %s per transaction", r.Ratio, what))
		case r.Ratio > 0 && r.Ratio <= 1/WhyRatio:
			parts = append(parts, fmt.Sprintf("B spends %.1fx less %s per transaction", 1/r.Ratio, what))
		default:
			parts = append(parts, "the costs per transaction are within 20%")
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

// shareReading words the wait share that differs most (rows are sorted
// by points), preferring a server-side share over the client's; seen is
// false when no share was compared.
func shareReading(rows []WhyRow) (reading string, seen bool) {
	var pick *WhyRow
	for pass := 0; pass < 2 && pick == nil; pass++ {
		for i := range rows {
			r := &rows[i]
			if !r.Share || (pass == 0 && r.Key == clientShare) {
				continue
			}
			seen = true
			if math.Abs(r.B-r.A) >= WhyPoints {
				pick = r
			}
			break
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
	return fmt.Sprintf("B's sessions spend %.0f points %s of their time %s (%.0f%% vs %.0f%%)",
		math.Abs(d), dir, pick.phrase, pick.B, pick.A), true
}
