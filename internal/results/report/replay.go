package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload/replay"
)

// DefaultThreshold is how much slower or faster (20%) a statement must be
// to count as slower or faster in a replay comparison.
const DefaultThreshold = 0.20

// ReplayFP is one fingerprint of two replays set side by side.
type ReplayFP struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// CountA and CountB are successful executions; ErrorsA and ErrorsB
	// failed ones.
	CountA  int64 `json:"count_a"`
	CountB  int64 `json:"count_b"`
	ErrorsA int64 `json:"errors_a"`
	ErrorsB int64 `json:"errors_b"`
	// ErrorsOnly is "A" or "B" when only that side had errors.
	ErrorsOnly string `json:"errors_only,omitempty"`
	// MeanA and MeanB are the geometric mean latencies in ms; Ratio is
	// B over A with its 95% interval (Welch's t on the log latencies).
	MeanA float64     `json:"mean_a_ms"`
	MeanB float64     `json:"mean_b_ms"`
	Ratio stats.Ratio `json:"ratio"`
	// DeltaMS is the time B lost (> 0) or gained (< 0) over A's
	// executions: (mean B - mean A) x count A, arithmetic means.
	DeltaMS float64 `json:"delta_ms"`
	// Slower and Faster count statements (paired by capture position,
	// with --record-results on both sides) beyond the threshold; -1 when
	// the runs cannot be paired.
	Slower int64 `json:"slower"`
	Faster int64 `json:"faster"`
	// RowsA and RowsB are the rows returned or changed.
	RowsA int64 `json:"rows_a"`
	RowsB int64 `json:"rows_b"`
	// ResultDiffs counts statements whose results differ (both sides with
	// --record-results; -1 otherwise), Example is the first such statement.
	ResultDiffs int64  `json:"result_diffs"`
	Example     string `json:"example,omitempty"`
}

// ReplayComparison is the per-fingerprint comparison of two replays of
// the same capture, sorted by time lost or gained (largest first).
type ReplayComparison struct {
	Threshold float64    `json:"threshold"`
	FPs       []ReplayFP `json:"fingerprints"`
	// Paired is true when both sides recorded results (statement pairs).
	Paired bool `json:"paired"`
	// Note says what could not be compared.
	Note string `json:"note,omitempty"`
}

// logMoments sums a fingerprint's histograms: count, mean and variance of
// the log latency, and the arithmetic mean in ms.
type logMoments struct {
	n             int64
	sum, sum2, us float64
}

func (m *logMoments) add(t summary.Type) {
	bs, err := replay.DecodeHist(t.Histogram)
	if err != nil {
		return
	}
	for _, b := range bs {
		x := math.Log(max(b.US, 1))
		m.n += b.Count
		m.sum += x * float64(b.Count)
		m.sum2 += x * x * float64(b.Count)
		m.us += b.US * float64(b.Count)
	}
}

func (m *logMoments) mean() float64 { return m.sum / float64(m.n) }
func (m *logMoments) variance() float64 {
	if m.n < 2 {
		return 0
	}
	mu := m.mean()
	return max((m.sum2-float64(m.n)*mu*mu)/float64(m.n-1), 0)
}

// logRatio is exp(mean ln B - mean ln A) with its 95% interval.
func logRatio(a, b *logMoments) stats.Ratio {
	if a.n == 0 || b.n == 0 {
		return stats.Ratio{Value: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	d := b.mean() - a.mean()
	r := stats.Ratio{Value: math.Exp(d)}
	r.Low, r.High = r.Value, r.Value
	if a.n < 2 || b.n < 2 {
		return r
	}
	va, vb := a.variance()/float64(a.n), b.variance()/float64(b.n)
	df := float64(a.n + b.n - 2)
	if den := va*va/float64(a.n-1) + vb*vb/float64(b.n-1); den > 0 {
		df = (va + vb) * (va + vb) / den
	}
	half := stats.TQuantile975(df) * math.Sqrt(va+vb)
	r.Low, r.High, r.HasCI = math.Exp(d-half), math.Exp(d+half), true
	r.Significant = r.Low > 1 || r.High < 1
	return r
}

// pairs are one side's per-statement figures, by capture ordinal.
type pairs struct {
	digests []uint64
	lats    []uint32
	fps     []uint32 // fingerprint index by ordinal
	ids     []string // fingerprint id by index
}

func pairsOf(r *summary.Run) *pairs {
	rp := r.Replay
	if rp == nil || rp.Results == "" {
		return nil
	}
	p := &pairs{ids: rp.FPs}
	var err error
	if p.digests, err = replay.DecodeDigests(rp.Results); err != nil {
		return nil
	}
	if p.lats, err = replay.DecodeUint32s(rp.Latencies); err != nil || len(p.lats) != len(p.digests) {
		return nil
	}
	if p.fps, err = replay.DecodeUint32s(rp.Ordinals); err != nil || len(p.fps) != len(p.digests) {
		return nil
	}
	return p
}

// CompareReplay sets B's replay runs against A's, fingerprint by
// fingerprint; statements are paired between the first run of each side
// when both recorded results of the same capture. It returns nil unless
// both sides' first runs have summary.SectionFingerprints.
func CompareReplay(a, b []*summary.Run, threshold float64) *ReplayComparison {
	if len(a) == 0 || len(b) == 0 || !a[0].HasSection(summary.SectionFingerprints) || !b[0].HasSection(summary.SectionFingerprints) {
		return nil
	}
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	rc := &ReplayComparison{Threshold: threshold}
	type side struct {
		lm            logMoments
		count, errors int64
		rows          int64
		t             summary.Type
		seen          bool
	}
	fps := map[string]*[2]side{}
	for i, runs := range [2][]*summary.Run{a, b} {
		for _, r := range runs {
			for id, t := range r.PerType {
				f := fps[id]
				if f == nil {
					f = &[2]side{}
					fps[id] = f
				}
				s := &f[i]
				s.lm.add(t)
				s.count += t.Count
				s.errors += t.Errors
				s.rows += t.Rows
				s.t, s.seen = t, true
			}
		}
	}
	pa, pb := pairsOf(a[0]), pairsOf(b[0])
	rc.Paired = pa != nil && pb != nil && len(pa.digests) == len(pb.digests) && slices.Equal(pa.ids, pb.ids)
	if !rc.Paired && (pa != nil || pb != nil) {
		rc.Note = "statements are paired only when both runs replayed the same capture with --record-results"
	}
	type pairStats struct {
		slower, faster, diffs int64
		first                 int
	}
	byFP := map[string]*pairStats{}
	if rc.Paired {
		for ord := range pa.digests {
			da, db := pa.digests[ord], pb.digests[ord]
			if da == 0 || db == 0 {
				continue
			}
			id := pa.ids[pa.fps[ord]]
			ps := byFP[id]
			if ps == nil {
				ps = &pairStats{first: -1}
				byFP[id] = ps
			}
			la, lb := float64(pa.lats[ord]), float64(pb.lats[ord])
			switch {
			case lb > la*(1+threshold):
				ps.slower++
			case lb*(1+threshold) < la:
				ps.faster++
			}
			if da != db {
				ps.diffs++
				if ps.first < 0 {
					ps.first = ord
				}
			}
		}
	}
	var capt *replay.Capture // for the text of a differing statement, if the file is still there
	if rc.Paired && a[0].Replay.Capture != "" {
		capt, _ = replay.Load(a[0].Replay.Capture)
	}
	for id, f := range fps {
		sa, sb := &f[0], &f[1]
		t := sa.t
		if !sa.seen {
			t = sb.t
		}
		row := ReplayFP{ID: id, Text: t.Text, CountA: sa.count, CountB: sb.count, ErrorsA: sa.errors, ErrorsB: sb.errors,
			RowsA: sa.rows, RowsB: sb.rows, Ratio: logRatio(&sa.lm, &sb.lm), Slower: -1, Faster: -1, ResultDiffs: -1}
		switch {
		case sa.errors == 0 && sb.errors > 0:
			row.ErrorsOnly = "B"
		case sb.errors == 0 && sa.errors > 0:
			row.ErrorsOnly = "A"
		}
		if sa.lm.n > 0 {
			row.MeanA = math.Exp(sa.lm.mean()) / 1000
		}
		if sb.lm.n > 0 {
			row.MeanB = math.Exp(sb.lm.mean()) / 1000
		}
		if sa.lm.n > 0 && sb.lm.n > 0 {
			row.DeltaMS = (sb.lm.us/float64(sb.lm.n) - sa.lm.us/float64(sa.lm.n)) / 1000 * float64(sa.lm.n)
		}
		if rc.Paired {
			row.Slower, row.Faster, row.ResultDiffs = 0, 0, 0
			if ps := byFP[id]; ps != nil {
				row.Slower, row.Faster, row.ResultDiffs = ps.slower, ps.faster, ps.diffs
				if ps.first >= 0 {
					if capt != nil {
						row.Example = capt.Statement(ps.first)
					}
					if row.Example == "" && len(t.Examples) > 0 {
						row.Example = t.Examples[0]
					}
					row.Example = fmt.Sprintf("#%d: %s", ps.first, row.Example)
				}
			}
		}
		rc.FPs = append(rc.FPs, row)
	}
	slices.SortFunc(rc.FPs, func(x, y ReplayFP) int {
		ax, ay := math.Abs(x.DeltaMS), math.Abs(y.DeltaMS)
		switch {
		case ax > ay:
			return -1
		case ax < ay:
			return 1
		}
		return strings.Compare(x.ID, y.ID)
	})
	return rc
}

// Changed counts fingerprints with a significant latency change, errors on
// one side only, a row-count difference or a result difference.
func (rc *ReplayComparison) Changed() int {
	n := 0
	for _, f := range rc.FPs {
		if f.Ratio.Significant || f.ErrorsOnly != "" || f.RowsA != f.RowsB || f.ResultDiffs > 0 {
			n++
		}
	}
	return n
}

// maxReplayRows bounds the fingerprints the terminal table shows.
const maxReplayRows = 30

// Write prints the comparison as a terminal table.
func (rc *ReplayComparison) Write(b *strings.Builder) {
	fmt.Fprintf(b, "Replay by fingerprint (%d fingerprints, %d changed; sorted by time lost or gained; slower/faster: statements beyond %.0f%%):\n",
		len(rc.FPs), rc.Changed(), rc.Threshold*100)
	if rc.Note != "" {
		fmt.Fprintf(b, "Note: %s.\n", rc.Note)
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tlost ms\tB/A latency [95% CI]\tcount A/B\terrors A/B\trows A/B\tslower/faster\tresult diffs\tstatement")
	dash := func(n int64) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	for i, f := range rc.FPs {
		if i == maxReplayRows {
			fmt.Fprintf(tw, "... %d more\n", len(rc.FPs)-i)
			break
		}
		ratio := "-"
		if !math.IsNaN(f.Ratio.Value) {
			ratio = fmt.Sprintf("%.2fx", f.Ratio.Value)
			if f.Ratio.HasCI {
				ratio += fmt.Sprintf(" [%.2f, %.2f]", f.Ratio.Low, f.Ratio.High)
			}
			if f.Ratio.Significant {
				ratio += " *"
			}
		}
		errs := fmt.Sprintf("%d/%d", f.ErrorsA, f.ErrorsB)
		if f.ErrorsOnly != "" {
			errs += " (" + f.ErrorsOnly + " only)"
		}
		rows := fmt.Sprintf("%d/%d", f.RowsA, f.RowsB)
		if f.RowsA != f.RowsB {
			rows += " !"
		}
		text := f.Text
		if len(text) > 60 {
			text = text[:57] + "..."
		}
		fmt.Fprintf(tw, "%s\t%+.1f\t%s\t%d/%d\t%s\t%s\t%s/%s\t%s\t%s\n", f.ID, f.DeltaMS, ratio, f.CountA, f.CountB, errs, rows,
			dash(f.Slower), dash(f.Faster), dash(f.ResultDiffs), text)
	}
	tw.Flush()
	for _, f := range rc.FPs {
		if f.ResultDiffs > 0 {
			ex := f.Example
			if len(ex) > 200 {
				ex = ex[:197] + "..."
			}
			fmt.Fprintf(b, "Results differ for %s (%d statements), e.g. %s\n", f.ID, f.ResultDiffs, ex)
		}
	}
}

// maxFingerprintRows bounds a report's fingerprint table.
const maxFingerprintRows = 50

// Table renders the comparison (B against baseline A) as a report table,
// the fingerprints that lost or gained most time first.
func (rc *ReplayComparison) Table(id, title string) Table {
	t := Table{ID: id, Title: title,
		Columns: []Column{{Name: "Fingerprint"}, {Name: "Lost ms", Numeric: true, Help: "time lost (+) or gained (-) over the baseline's executions"},
			{Name: "Latency vs baseline", Numeric: true, Help: "ratio of geometric mean latencies"}, {Name: "95% CI"},
			{Name: "Count", Numeric: true}, {Name: "Errors"}, {Name: "Rows"},
			{Name: "Slower/faster", Help: fmt.Sprintf("statements beyond %.0f%%", rc.Threshold*100)},
			{Name: "Result diffs", Numeric: true}, {Name: "Statement"}}}
	dash := func(n int64) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	for i, f := range rc.FPs {
		if i == maxFingerprintRows {
			t.Note = fmt.Sprintf("%d more fingerprints not shown.", len(rc.FPs)-i)
			break
		}
		ratio, ci := num(f.Ratio.Value, 2), txt("")
		if f.Ratio.HasCI {
			ci = txt(fmt.Sprintf("[%.2f, %.2f]", f.Ratio.Low, f.Ratio.High))
		}
		if f.Ratio.Significant {
			if f.Ratio.Value > 1 {
				ratio.Class = "worse"
			} else {
				ratio.Class = "better"
			}
		}
		errs := fmt.Sprintf("%d/%d", f.ErrorsA, f.ErrorsB)
		if f.ErrorsOnly != "" {
			errs += " (" + f.ErrorsOnly + " only)"
		}
		text := f.Text
		if len(text) > 80 {
			text = text[:77] + "..."
		}
		t.Rows = append(t.Rows, []Entry{txt(f.ID), num(f.DeltaMS, 1), ratio, ci, txt(fmt.Sprintf("%d/%d", f.CountA, f.CountB)),
			txt(errs), txt(fmt.Sprintf("%d/%d", f.RowsA, f.RowsB)), txt(dash(f.Slower) + "/" + dash(f.Faster)),
			txt(dash(f.ResultDiffs)), txt(text)})
	}
	if rc.Note != "" {
		t.Note = strings.TrimSpace(t.Note + " " + rc.Note + ".")
	}
	return t
}

// fingerprintTables compare each series' capture replays with the
// baseline series', fingerprint by fingerprint: one table per series.
func (rep *Report) fingerprintTables() []Table {
	runs := map[string][]*summary.Run{}
	for _, c := range rep.Cells {
		for _, r := range c.Runs {
			if r.HasSection(summary.SectionFingerprints) {
				runs[c.Series] = append(runs[c.Series], r)
			}
		}
	}
	base := runs[rep.Baseline]
	if len(base) == 0 {
		return nil
	}
	var out []Table
	for i, s := range rep.Series {
		if s == rep.Baseline || len(runs[s]) == 0 {
			continue
		}
		rc := CompareReplay(base, runs[s], DefaultThreshold)
		if rc == nil {
			continue
		}
		out = append(out, rc.Table(fmt.Sprintf("fingerprints-%d", i), fmt.Sprintf("Replay by fingerprint: %s vs %s", s, rep.Baseline)))
	}
	return out
}
