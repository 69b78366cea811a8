// Package stats summarises repeated measurements: mean, spread, 95%
// confidence intervals (Student's t) and ratios against a baseline with
// their confidence intervals (delta method, Welch–Satterthwaite degrees of
// freedom).
package stats

import "math"

// Summary describes a sample of repeated measurements (rounds).
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// SD is the sample standard deviation (n-1); 0 when N < 2.
	SD float64 `json:"sd"`
	// CV is the coefficient of variation SD/Mean; 0 when Mean is 0.
	CV float64 `json:"cv"`
	// CILow and CIHigh bound the 95% confidence interval of the mean;
	// both equal Mean when N < 2 (no interval can be given).
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// HasCI reports whether the summary carries a real confidence interval.
func (s Summary) HasCI() bool { return s.N >= 2 }

// Noisy reports whether the coefficient of variation exceeds maxCV.
func (s Summary) Noisy(maxCV float64) bool { return s.N >= 2 && s.CV > maxCV }

// Describe summarises xs.
func Describe(xs []float64) Summary {
	s := Summary{N: len(xs)}
	if s.N == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	s.CILow, s.CIHigh = s.Mean, s.Mean
	if s.N < 2 {
		return s
	}
	var ss float64
	for _, x := range xs {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.SD = math.Sqrt(ss / float64(s.N-1))
	if s.Mean != 0 {
		s.CV = s.SD / math.Abs(s.Mean)
	}
	half := TQuantile975(float64(s.N-1)) * s.SD / math.Sqrt(float64(s.N))
	s.CILow, s.CIHigh = s.Mean-half, s.Mean+half
	return s
}

// Ratio is a measurement relative to a baseline: Value = mean/baseline mean.
type Ratio struct {
	Value float64 `json:"value"`
	// Low and High bound the 95% confidence interval of the ratio; they
	// equal Value when either side has fewer than two rounds.
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// HasCI reports whether Low and High are a real interval.
	HasCI bool `json:"has_ci"`
	// Significant is true when the interval excludes 1.0. Without an
	// interval nothing is significant.
	Significant bool `json:"significant"`
}

// Relative compares sample xs with baseline sample base.
func Relative(xs, base []float64) Ratio {
	a, b := Describe(xs), Describe(base)
	if a.N == 0 || b.N == 0 || b.Mean == 0 {
		return Ratio{Value: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	r := Ratio{Value: a.Mean / b.Mean}
	r.Low, r.High = r.Value, r.Value
	if a.N < 2 || b.N < 2 {
		return r
	}
	// Delta method on the log of the ratio: var(ln A/B) ≈ varA/(nA·A²) +
	// varB/(nB·B²). The interval is exp(ln r ± t·se): asymmetric, and never
	// below zero as the interval of r itself can be with few noisy rounds.
	va := a.SD * a.SD / float64(a.N)
	vb := b.SD * b.SD / float64(b.N)
	rel := va/(a.Mean*a.Mean) + vb/(b.Mean*b.Mean)
	df := welchDF(va, vb, a.N, b.N)
	half := TQuantile975(df) * math.Sqrt(rel)
	if r.Value <= 0 { // a sign change: no log scale; the linear interval
		se := math.Abs(r.Value) * math.Sqrt(rel)
		r.Low, r.High, r.HasCI = r.Value-TQuantile975(df)*se, r.Value+TQuantile975(df)*se, true
	} else {
		r.Low, r.High, r.HasCI = r.Value*math.Exp(-half), r.Value*math.Exp(half), true
	}
	r.Significant = r.Low > 1 || r.High < 1
	return r
}

// welchDF is the Welch–Satterthwaite degrees of freedom of two variances of
// the mean va, vb from samples of na and nb.
func welchDF(va, vb float64, na, nb int) float64 {
	num := (va + vb) * (va + vb)
	den := va*va/float64(na-1) + vb*vb/float64(nb-1)
	if den == 0 {
		return float64(na + nb - 2)
	}
	return num / den
}

// t975 holds the 0.975 quantile of Student's t for 1..30 degrees of freedom.
var t975 = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// TQuantile975 returns the two-sided 95% critical value of Student's t with
// df degrees of freedom (fractional df interpolated; beyond 30 a
// Cornish–Fisher expansion around the normal quantile).
func TQuantile975(df float64) float64 {
	switch {
	case df < 1:
		return t975[0]
	case df <= 30:
		lo := int(math.Floor(df))
		if float64(lo) == df || lo >= 30 {
			return t975[lo-1]
		}
		f := df - float64(lo)
		return t975[lo-1]*(1-f) + t975[lo]*f
	}
	const z = 1.959964
	g1 := (z*z*z + z) / 4
	g2 := (5*math.Pow(z, 5) + 16*z*z*z + 3*z) / 96
	return z + g1/df + g2/(df*df)
}
