package steady

import (
	"math"
	"math/rand"
	"testing"
)

func series(n int, f func(i int) float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = f(i)
	}
	return xs
}

func TestFind(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	tests := []struct {
		name   string
		xs     []float64
		want   int
		steady bool
	}{
		{"flat", series(20, func(int) float64 { return 1000 }), 5, true},
		{"flat with 1% jitter", series(20, func(i int) float64 { return 1000 + 10*math.Sin(float64(i)) }), 5, true},
		{"ramp never settles", series(30, func(i int) float64 { return 100 + 50*float64(i) }), 0, false},
		{"noisy never settles", series(30, func(i int) float64 { return 1000 * (0.5 + rng.Float64()) }), 0, false},
		// 100 for 3 intervals, then 200: steady once the window holds only 200s.
		{"step", series(20, func(i int) float64 {
			if i < 3 {
				return 100
			}
			return 200
		}), 8, true},
		// Ramp up to a plateau at interval 10.
		{"ramp then plateau", series(25, func(i int) float64 { return 100 * math.Min(float64(i+1), 10) }), 14, true},
		{"too short", []float64{5, 5, 5}, 0, false},
		{"stalled", series(10, func(int) float64 { return 0 }), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Detector{}.Find(tt.xs)
			if ok != tt.steady || got != tt.want {
				t.Errorf("Find = %d, %v; want %d, %v", got, ok, tt.want, tt.steady)
			}
		})
	}
}

func TestMeasure(t *testing.T) {
	// 1,2,3,4,5: mean 3, slope 1, drift 1*4/3, sd sqrt(2.5).
	w := Measure([]float64{1, 2, 3, 4, 5})
	if math.Abs(w.Mean-3) > 1e-12 || math.Abs(w.Drift-4.0/3) > 1e-12 || math.Abs(w.CV-math.Sqrt(2.5)/3) > 1e-12 {
		t.Errorf("Measure = %+v", w)
	}
}

func TestLimits(t *testing.T) {
	xs := []float64{100, 101, 102, 103, 104} // drift 4/102 ≈ 3.9%
	if !(Detector{}).Steady(xs) {
		t.Error("default limits: want steady")
	}
	if (Detector{MaxDrift: 0.01}).Steady(xs) {
		t.Error("MaxDrift 1%: want not steady")
	}
	if (Detector{Window: 10}).Steady(xs) {
		t.Error("window longer than the series: want not steady")
	}
}
