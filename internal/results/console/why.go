package console

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Bottleneck writes a run summary's bottleneck section (the verdict, its
// evidence and the top wait events) in the console layout; nothing when b is nil.
func Bottleneck(w io.Writer, b *summary.Bottleneck) {
	if b == nil {
		return
	}
	fmt.Fprintf(w, "\nBottleneck: %s\n", b.Reason)
	for _, e := range b.Evidence {
		fmt.Fprintf(w, "    %s\n", e)
	}
	if len(b.TopWaits) > 0 {
		fmt.Fprintln(w, "    top waits:")
		for _, t := range b.TopWaits {
			unit := "%"
			if t.Unit != "pct" {
				unit = " " + t.Unit
			}
			fmt.Fprintf(w, "      %-40s %6.1f%s\n", t.Event, t.Value, unit)
		}
	}
}

// Why writes compare's "where the difference comes from" table for A's
// and B's rounds (monitor.Why) in the console layout: each figure's means,
// B's ratio to A (costs) or difference in points (shares) with its 95%
// interval over the rounds, * where Welch's test of B - A tells B from A;
// for shares, their part of the difference in session time per
// transaction; and the one-line reading. Nothing without rows.
func Why(w io.Writer, a, b []*summary.Run) {
	rows := monitor.Why(a, b)
	if len(rows) == 0 {
		return
	}
	ci := false
	for _, r := range rows {
		ci = ci || r.HasCI()
	}
	if ci {
		fmt.Fprintf(w, "\nWhere the difference comes from (mean over %d and %d rounds, 95%% intervals; * B differs from A: Welch's t-test of B - A):\n", len(a), len(b))
	} else {
		fmt.Fprintf(w, "\nWhere the difference comes from (A %d round, B %d; no confidence intervals from single rounds: repeat them, --rounds N or a plan):\n", len(a), len(b))
	}
	shares := false
	ciw := 0 // the interval column's width
	if ci {
		ciw = 24
	}
	fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("    %-22s %12s %12s %11s  %s", "costs per transaction", "A", "B", "B/A", ciHead(ci)), " "))
	for _, r := range rows {
		if r.Share && !shares {
			shares = true
			fmt.Fprintf(w, "    %-22s %12s %12s %11s  %-*s %s\n", "% of session time", "A", "B", "B-A", ciw, ciHead(ci), "ms/txn B-A")
		}
		rel, iv := "-", ""
		switch {
		case r.Share:
			rel = fmt.Sprintf("%+.1f pts", r.Points.Value)
			if r.Points.HasCI {
				iv = fmt.Sprintf("[%+.1f, %+.1f]", r.Points.Low, r.Points.High)
			}
		case !math.IsNaN(r.Ratio):
			rel = fmt.Sprintf("%.2fx", r.Ratio)
			if r.RatioCI.HasCI {
				iv = fmt.Sprintf("[%.2fx, %.2fx]", r.RatioCI.Low, r.RatioCI.High)
			}
		}
		if r.Significant() {
			iv += " *"
		}
		if !r.Share {
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("    %-22s %12.3f %12.3f %11s  %s", r.Name, r.A, r.B, rel, strings.TrimSpace(iv)), " "))
			continue
		}
		contrib := "-"
		if r.HasContrib {
			contrib = fmt.Sprintf("%+.3f", r.Contrib.Value)
			if r.Contrib.HasCI {
				contrib += fmt.Sprintf(" [%+.3f, %+.3f]", r.Contrib.Low, r.Contrib.High)
			}
		}
		fmt.Fprintf(w, "    %-22s %12.3f %12.3f %11s  %-*s %s\n", strings.TrimSuffix(r.Name, " %"), r.A, r.B, rel, ciw, iv, contrib)
	}
	if msA, msB, d, ok := monitor.WhySessionMS(a, b); ok && shares {
		fmt.Fprintf(w, "    session time per transaction (threads / tps): A %.3f ms, B %.3f ms (%+.3f ms)\n", msA, msB, d.Value)
	}
	fmt.Fprintf(w, "    reading: %s\n", monitor.WhyReading(rows))
}

func ciHead(ci bool) string {
	if ci {
		return "95% CI"
	}
	return ""
}

// PlanWhy writes, for each cell of a plan against its baseline cell, where
// the difference comes from: the one-line reading, or with full the
// table (Why) under the cell's name. Cells without the monitor's figures
// are left out; nothing when no cell has them.
func PlanWhy(w io.Writer, pairs []plan.BaselinePair, full bool) {
	head := false
	for _, p := range pairs {
		rows := monitor.Why(p.Base, p.Runs)
		if len(rows) == 0 {
			continue
		}
		if !head {
			head = true
			fmt.Fprintln(w, "\nWhere the difference comes from, each cell (B) against its baseline cell (A):")
		}
		if !full {
			fmt.Fprintf(w, "  %s vs %s: %s\n", CellLabel(p.Cell), CellLabel(p.Baseline), monitor.WhyReading(rows))
			continue
		}
		var b strings.Builder
		Why(&b, p.Base, p.Runs)
		fmt.Fprintf(w, "\n%s vs %s:%s", CellLabel(p.Cell), CellLabel(p.Baseline), strings.TrimPrefix(b.String(), "\nWhere the difference comes from"))
	}
}
