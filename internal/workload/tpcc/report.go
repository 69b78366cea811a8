package tpcc

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// tpmCPerWarehouse is the most a warehouse can do under the spec's keying
// and think times (clause 4.2.2 and 5.4: 12.86 tpmC per warehouse).
const tpmCPerWarehouse = 12.86

// Run figures (summary.Run.Figures) and the check on skipped deliveries.
const (
	// FigureDeliveredDistricts counts districts committed Deliveries
	// delivered an order in; FigureSkippedDistricts those they skipped
	// for want of an undelivered order (clause 2.7.4.2).
	FigureDeliveredDistricts = "delivery.delivered_districts"
	FigureSkippedDistricts   = "delivery.skipped_districts"
	// CheckSkippedDeliveries fails when skipped districts exceed
	// maxSkippedPct of the delivered ones (and are more than one).
	CheckSkippedDeliveries = "skipped_pct " + Delivery
	maxSkippedPct          = 1.0
)

// BeginMeasure starts the counts of Delivery's districts over: call it as
// the measured period begins, so that the warm-up is left out of them
// (without it they cover the warm-up too). Summarize also starts them
// over, for the next round.
func (wl *Workload) BeginMeasure() { wl.delivery.take() }

// Minimum shares of the mix (clause 5.2.3), in percent.
var minMix = map[string]float64{Payment: 43, OrderStatus: 4, Delivery: 4, StockLevel: 4}

// IntervalHeader implements workload.Reporter.
func (wl *Workload) IntervalHeader() string {
	if wl.cfg.Shape == ShapeTpccMySQL {
		return shapeLine(wl.cfg.Shape) + "\n" + tpccMySQLHeader
	}
	return shapeLine(wl.cfg.Shape) + "\n" + "  time, then per type New-Order, Payment, Order-Status, Delivery, Stock-Level: successes(late):p90|max (ms)"
}

// FormatInterval implements workload.Reporter: tpcc-mysql's line, the
// seconds since measuring began and, per type, successes(late):p90|max in
// milliseconds.
func (wl *Workload) FormatInterval(iv workload.IntervalReport) string {
	if wl.cfg.Shape == ShapeTpccMySQL {
		return wl.tpccMySQLInterval(iv)
	}
	var b strings.Builder
	secs := int((iv.End + time.Millisecond/2) / time.Second)
	if iv.Warmup {
		fmt.Fprintf(&b, "%4d (warm-up)", secs)
	} else {
		fmt.Fprintf(&b, "%4d", secs)
	}
	for _, t := range txTypes {
		ti := iv.PerType[t]
		fmt.Fprintf(&b, ", %d(%d):%.3f|%.3f", ti.Count, ti.Late, ms(ti.P90), ms(ti.Max))
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Summarize implements workload.Reporter: TpmC (New-Order successes per
// minute, rolled-back ones included as clause 2.4.2.3 counts them), the
// transaction-percentage checks (clause 5.2.3) and the 90th-percentile
// response-time checks (clause 5.2.5.3), skipped deliveries (clause
// 2.7.4.2: reported when over 1% or over one, whichever is greater) and,
// with --bind-warehouse and fewer terminals than warehouses, a note.
func (wl *Workload) Summarize(run *summary.Run) {
	// The parameters as the run found them (warehouses, schema, foreign
	// keys), which the run's start could not yet know.
	if run.Params == nil {
		run.Params = map[string]any{}
	}
	for k, v := range wl.Params() {
		run.Params[k] = v
	}
	wl.mu.Lock()
	wl.started = false
	wl.mu.Unlock()
	var total int64
	for _, t := range txTypes {
		total += run.PerType[t].Count
	}
	if run.DurationS > 0 {
		tpmc := float64(run.PerType[NewOrder].Count) / (run.DurationS / 60)
		run.TpmC = &tpmc
	}
	run.Checks = run.Checks[:0]
	for _, t := range []string{Payment, OrderStatus, Delivery, StockLevel} {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(run.PerType[t].Count) / float64(total)
		}
		run.Checks = append(run.Checks, summary.Check{Name: "mix_pct " + t, OK: pct >= minMix[t], Value: pct, Limit: minMix[t]})
	}
	limits := wl.ResponseLimits()
	for _, t := range txTypes {
		pt := run.PerType[t]
		lim := ms(limits[t])
		run.Checks = append(run.Checks, summary.Check{Name: "p90_ms " + t, OK: pt.LatencyMS.P90 <= lim, Value: pt.LatencyMS.P90, Limit: lim})
	}
	delivered, skipped := wl.delivery.take()
	if run.Figures == nil {
		run.Figures = map[string]float64{}
	}
	run.Figures[FigureDeliveredDistricts] = float64(delivered)
	run.Figures[FigureSkippedDistricts] = float64(skipped)
	run.Checks = append(run.Checks, skippedCheck(delivered, skipped))
	for _, n := range wl.Notes(run.Threads) {
		if !slices.Contains(run.Notes, n) {
			run.Notes = append(run.Notes, n)
		}
	}
}

// skippedCheck passes when skipped districts are at most 1% of the
// delivered ones, or at most one (clause 2.7.4.2).
func skippedCheck(delivered, skipped int64) summary.Check {
	pct := 0.0
	if delivered > 0 {
		pct = 100 * float64(skipped) / float64(delivered)
	} else if skipped > 0 {
		pct = 100
	}
	return summary.Check{Name: CheckSkippedDeliveries, OK: skipped <= 1 || pct <= maxSkippedPct, Value: pct, Limit: maxSkippedPct}
}

// FormatSummary implements workload.Reporter: tpcc-mysql's final report.
func (wl *Workload) FormatSummary(run *summary.Run) string {
	if shape, _ := run.Params["shape"].(string); shape == ShapeTpccMySQL {
		return tpccMySQLSummary(run)
	}
	var b strings.Builder
	if shape, _ := run.Params["shape"].(string); shape != "" {
		fmt.Fprintf(&b, "\n%s\n", shapeLine(shape))
	}
	fmt.Fprintln(&b, "\nTPC-C (sc: successes within the response-time limit, lt: late, rt: retries, fl: failures)")
	for i, t := range txTypes {
		pt := run.PerType[t]
		fmt.Fprintf(&b, "  [%d] sc:%d  lt:%d  rt:%d  fl:%d  %s\n", i, pt.Count-pt.Late, pt.Late, pt.Retries, pt.Errors, t)
	}
	fmt.Fprintf(&b, " in %.0f sec.\n", run.DurationS)
	fmt.Fprintln(&b, "\n (all must be [OK])\n [transaction percentage]")
	checks := map[string]summary.Check{}
	for _, c := range run.Checks {
		checks[c.Name] = c
	}
	ok := func(v bool) string {
		if v {
			return "[OK]"
		}
		return "[NG]"
	}
	for _, t := range []string{Payment, OrderStatus, Delivery, StockLevel} {
		c := checks["mix_pct "+t]
		fmt.Fprintf(&b, "  %13s: %5.2f%% (>=%4.1f%%) %s\n", t, c.Value, c.Limit, ok(c.OK))
	}
	fmt.Fprintln(&b, " [response time (at least 90% passed)]")
	for _, t := range txTypes {
		pt := run.PerType[t]
		pass := 100.0
		if pt.Count > 0 {
			pass = 100 * float64(pt.Count-pt.Late) / float64(pt.Count)
		}
		c := checks["p90_ms "+t]
		fmt.Fprintf(&b, "  %13s: %6.2f%%  %s  (p90 %.2f ms, limit %s)\n", t, pass, ok(c.OK), c.Value, formatLimit(c.Limit))
	}
	if _, counted := run.Figures[FigureSkippedDistricts]; counted {
		c := checks[CheckSkippedDeliveries]
		fmt.Fprintln(&b, " [skipped deliveries (at most 1% of delivered districts, or one)]")
		fmt.Fprintf(&b, "  %13s: %.0f skipped, %.0f delivered (%.2f%%)  %s\n", "districts",
			run.Figures[FigureSkippedDistricts], run.Figures[FigureDeliveredDistricts], c.Value, ok(c.OK))
	}
	if run.TpmC != nil {
		w := 1
		switch n := run.Params["warehouses"].(type) {
		case int:
			w = max(n, 1)
		case float64: // a stored summary
			w = max(int(n), 1)
		}
		eff := 100 * *run.TpmC / (tpmCPerWarehouse * float64(w))
		fmt.Fprintf(&b, "\n  %16.3f TpmC  (efficiency %.1f%% of %.2f tpmC x %d warehouses)\n", *run.TpmC, eff, tpmCPerWarehouse, w)
	}
	return b.String()
}

// tpccMySQLHeader explains tpcc_start's interval line.
const tpccMySQLHeader = "  time, trx: New-Orders, 95%/99%/max_rt: their response time (ms), then count|max_rt (ms) of Payment, Order-Status, Delivery, Stock-Level"

// tpccMySQLInterval is tpcc_start's interval line (main.c's
// alarm_handler): seconds since measuring began, New-Orders done, their
// 95th and 99th percentile and maximum response time in milliseconds, and
// count|max of the other four types. The first measured line follows
// "MEASURING START." as in tpcc_start's output, where scripts/analyze.sh
// starts reading; warm-up lines come before it.
func (wl *Workload) tpccMySQLInterval(iv workload.IntervalReport) string {
	var b strings.Builder
	secs := int((iv.End + time.Millisecond/2) / time.Second)
	if iv.Warmup {
		// tpcc_start prints nothing while ramping up; the line says so.
		fmt.Fprintf(&b, "RAMP-UP TIME. trx: %d (warm-up, until %d s before measuring)", iv.PerType[NewOrder].Count, -secs)
		return b.String()
	}
	wl.mu.Lock()
	if !wl.started {
		wl.started = true
		b.WriteString("\nMEASURING START.\n\n")
	}
	wl.mu.Unlock()
	no := iv.PerType[NewOrder]
	fmt.Fprintf(&b, "%4d, trx: %d, 95%%: %.3f, 99%%: %.3f, max_rt: %.3f", secs, no.Count, ms(no.P95), ms(no.P99), ms(no.Max))
	for _, t := range txTypes[1:] {
		ti := iv.PerType[t]
		fmt.Fprintf(&b, ", %d|%.3f", ti.Count, ms(ti.Max))
	}
	return b.String()
}

// EndIntervals is printed after the last interval line: tpcc_start's
// "STOPPING THREADS", where scripts/analyze.sh stops reading (tpcc-mysql
// shape only).
func (wl *Workload) EndIntervals() string {
	if wl.cfg.Shape != ShapeTpccMySQL {
		return ""
	}
	return "\nSTOPPING THREADS\n"
}

// tpccMySQLSummary is tpcc_start's final report: <Raw Results> (avg_rt in
// ms, the late limit in its unit, ms), <Raw Results2(sum ver.)>,
// <Constraint Check> and <TpmC>, in its formats; then what dbarena adds
// (the shape, skipped deliveries).
func tpccMySQLSummary(run *summary.Run) string {
	var b strings.Builder
	limit := func(t string) float64 {
		switch v := run.Params["rt_limit_ms "+t].(type) {
		case float64:
			return v
		case int:
			return float64(v)
		}
		return 0
	}
	fmt.Fprintf(&b, "\n%s\n", shapeLine(ShapeTpccMySQL))
	fmt.Fprintln(&b, "\n<Raw Results>")
	for i, t := range txTypes {
		pt := run.PerType[t]
		fmt.Fprintf(&b, "  [%d] sc:%d lt:%d  rt:%d  fl:%d avg_rt: %.1f (%g)\n", i, pt.Count-pt.Late, pt.Late, pt.Retries,
			pt.Errors, pt.LatencyMS.Avg, limit(t))
	}
	fmt.Fprintf(&b, " in %.0f sec.\n", run.DurationS)
	fmt.Fprintln(&b, "\n<Raw Results2(sum ver.)>")
	for i, t := range txTypes {
		pt := run.PerType[t]
		fmt.Fprintf(&b, "  [%d] sc:%d  lt:%d  rt:%d  fl:%d \n", i, pt.Count-pt.Late, pt.Late, pt.Retries, pt.Errors)
	}
	var total int64
	for _, t := range txTypes {
		total += run.PerType[t].Count
	}
	ok := func(v bool) string {
		if v {
			return " [OK]"
		}
		return " [NG] *"
	}
	fmt.Fprintln(&b, "\n<Constraint Check> (all must be [OK])\n [transaction percentage]")
	for _, t := range txTypes[1:] {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(run.PerType[t].Count) / float64(total)
		}
		fmt.Fprintf(&b, "%15s: %3.2f%% (>=%4.1f%%)%s\n", t, pct, minMix[t], ok(pct >= minMix[t]))
	}
	fmt.Fprintln(&b, " [response time (at least 90% passed)]")
	for _, t := range txTypes {
		pt := run.PerType[t]
		pct := 100.0
		if pt.Count > 0 {
			pct = 100 * float64(pt.Count-pt.Late) / float64(pt.Count)
		}
		fmt.Fprintf(&b, "%15s: %3.2f%% %s\n", t, pct, ok(pct >= 90))
	}
	if _, counted := run.Figures[FigureSkippedDistricts]; counted {
		fmt.Fprintf(&b, " [skipped deliveries (at most 1%% of delivered districts, or one)]\n%15s: %.0f skipped, %.0f delivered\n",
			"districts", run.Figures[FigureSkippedDistricts], run.Figures[FigureDeliveredDistricts])
	}
	if run.TpmC != nil {
		fmt.Fprintf(&b, "\n<TpmC>\n                 %.3f TpmC\n", *run.TpmC)
	}
	return b.String()
}
