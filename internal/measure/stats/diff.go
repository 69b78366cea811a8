package stats

import "math"

// Diff is a measurement minus a baseline: Value = mean - baseline mean,
// for figures compared by difference rather than ratio (shares of time in
// percentage points).
type Diff struct {
	Value float64 `json:"value"`
	// Low and High bound the 95% confidence interval of the difference
	// (Welch's t interval); they equal Value when either side has fewer
	// than two rounds.
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// HasCI reports whether Low and High are a real interval.
	HasCI bool `json:"has_ci"`
	// Significant is true when the interval excludes 0. Without an
	// interval nothing is significant.
	Significant bool `json:"significant"`
}

// Difference compares sample xs with baseline sample base: the difference
// of their means with Welch's 95% interval (unequal variances,
// Welch–Satterthwaite degrees of freedom, as Relative). Two empty samples
// give a NaN difference.
func Difference(xs, base []float64) Diff {
	a, b := Describe(xs), Describe(base)
	if a.N == 0 || b.N == 0 {
		return Diff{Value: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	d := Diff{Value: a.Mean - b.Mean}
	d.Low, d.High = d.Value, d.Value
	if a.N < 2 || b.N < 2 {
		return d
	}
	va := a.SD * a.SD / float64(a.N)
	vb := b.SD * b.SD / float64(b.N)
	half := TQuantile975(welchDF(va, vb, a.N, b.N)) * math.Sqrt(va+vb)
	d.Low, d.High, d.HasCI = d.Value-half, d.Value+half, true
	d.Significant = d.Low > 0 || d.High < 0
	return d
}
