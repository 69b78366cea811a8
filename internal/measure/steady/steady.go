// Package steady detects when a throughput series has reached a steady
// state, for automatic warm-up (--warmup auto): the last Window intervals
// must neither drift (least-squares slope across the window, relative to
// the mean) nor scatter (coefficient of variation) more than the limits.
package steady

import "math"

// Defaults of a zero Detector field.
const (
	DefaultWindow   = 5
	DefaultMaxDrift = 0.05
	DefaultMaxCV    = 0.10
)

// Detector decides whether a per-interval throughput series is steady. The
// zero value uses the defaults. It holds no state: it may be shared.
type Detector struct {
	// Window is the number of most recent intervals judged (>= 3).
	Window int
	// MaxDrift bounds |slope|·(Window-1)/mean: how much the fitted line
	// rises or falls across the window, relative to the window's mean.
	MaxDrift float64
	// MaxCV bounds the window's coefficient of variation (sd/mean).
	MaxCV float64
}

func (d Detector) window() int {
	if d.Window < 3 {
		return DefaultWindow
	}
	return d.Window
}

func (d Detector) limits() (drift, cv float64) {
	drift, cv = d.MaxDrift, d.MaxCV
	if drift <= 0 {
		drift = DefaultMaxDrift
	}
	if cv <= 0 {
		cv = DefaultMaxCV
	}
	return drift, cv
}

// Window describes one window of a series.
type Window struct {
	Mean  float64
	Drift float64 // |slope|·(n-1)/mean
	CV    float64
}

// Measure describes xs as one window. A mean <= 0 gives infinite drift and
// CV: a stalled series is never steady.
func Measure(xs []float64) Window {
	n := float64(len(xs))
	if n == 0 {
		return Window{Drift: math.Inf(1), CV: math.Inf(1)}
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if mean <= 0 || len(xs) < 2 {
		return Window{Mean: mean, Drift: math.Inf(1), CV: math.Inf(1)}
	}
	// Least squares slope against x = 0..n-1.
	xbar := (n - 1) / 2
	var sxy, sxx, ss float64
	for i, y := range xs {
		dx := float64(i) - xbar
		sxy += dx * (y - mean)
		sxx += dx * dx
		ss += (y - mean) * (y - mean)
	}
	slope := sxy / sxx
	return Window{
		Mean:  mean,
		Drift: math.Abs(slope) * (n - 1) / mean,
		CV:    math.Sqrt(ss/(n-1)) / mean,
	}
}

// Steady reports whether the last Window values of xs are steady.
func (d Detector) Steady(xs []float64) bool {
	n := d.window()
	if len(xs) < n {
		return false
	}
	w := Measure(xs[len(xs)-n:])
	maxDrift, maxCV := d.limits()
	return w.Drift <= maxDrift && w.CV <= maxCV
}

// Find returns the number of leading values of xs after which the series is
// first steady (the warm-up, in intervals), or false if it never is.
func (d Detector) Find(xs []float64) (int, bool) {
	for i := d.window(); i <= len(xs); i++ {
		if d.Steady(xs[:i]) {
			return i, true
		}
	}
	return 0, false
}
