package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDescribe(t *testing.T) {
	// Hand-computed: mean 5, sample sd sqrt(32/7)=2.13809, t(7)=2.365,
	// half-width 2.365*2.13809/sqrt(8) = 1.78776.
	s := Describe([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if s.N != 8 || !near(s.Mean, 5, 1e-12) || !near(s.SD, 2.13809, 1e-5) || !near(s.CV, 0.427618, 1e-5) {
		t.Fatalf("got %+v", s)
	}
	if !near(s.CILow, 5-1.78776, 1e-4) || !near(s.CIHigh, 5+1.78776, 1e-4) {
		t.Fatalf("CI = [%v, %v]", s.CILow, s.CIHigh)
	}
	if !s.Noisy(0.4) || s.Noisy(0.5) {
		t.Fatalf("Noisy thresholds wrong for CV %v", s.CV)
	}
	one := Describe([]float64{3})
	if one.HasCI() || one.CILow != 3 || one.CIHigh != 3 || one.SD != 0 {
		t.Fatalf("single value: %+v", one)
	}
	if empty := Describe(nil); empty.N != 0 || empty.Mean != 0 {
		t.Fatalf("empty: %+v", empty)
	}
}

func TestRelative(t *testing.T) {
	tests := []struct {
		name             string
		xs, base         []float64
		value, low, high float64
		significant      bool
	}{
		// A: mean 110, sd 1 (n=3); B: mean 100, sd 1 (n=3). va=vb=1/3.
		// rel = (1/3)/12100 + (1/3)/10000; se(ln r) = sqrt(rel) = 0.0078166;
		// df = (2/3)^2 / (2*(1/9)/2) = 4, t = 2.776, half = 0.021699 on the
		// log scale: [1.1·e^-half, 1.1·e^half].
		{"clear gain", []float64{109, 110, 111}, []float64{99, 100, 101}, 1.1, 1.1 * math.Exp(-0.0216990), 1.1 * math.Exp(0.0216990), true},
		{"noise", []float64{90, 110, 100}, []float64{95, 105, 100}, 1.0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Relative(tt.xs, tt.base)
			if !near(r.Value, tt.value, 1e-9) || !r.HasCI || r.Significant != tt.significant {
				t.Fatalf("got %+v", r)
			}
			if tt.low != 0 && (!near(r.Low, tt.low, 1e-4) || !near(r.High, tt.high, 1e-4)) {
				t.Fatalf("CI = [%v, %v], want [%v, %v]", r.Low, r.High, tt.low, tt.high)
			}
			if !tt.significant && (r.Low > 1 || r.High < 1) {
				t.Fatalf("interval [%v, %v] should contain 1", r.Low, r.High)
			}
		})
	}
	if r := Relative([]float64{5}, []float64{4}); r.HasCI || r.Significant || r.Value != 1.25 {
		t.Fatalf("single rounds: %+v", r)
	}
}

func TestTQuantile(t *testing.T) {
	for _, tt := range []struct{ df, want float64 }{{1, 12.706}, {4, 2.776}, {30, 2.042}, {60, 2.000}, {120, 1.980}, {1e6, 1.960}, {4.5, (2.776 + 2.571) / 2}} {
		if got := TQuantile975(tt.df); !near(got, tt.want, 0.002) {
			t.Errorf("t(%v) = %v, want %v", tt.df, got, tt.want)
		}
	}
}
