package stats

import (
	"math"
	"testing"
)

func TestDifference(t *testing.T) {
	// A: 10, 12, 14 (mean 12, sd 2); B: 4, 5, 6 (mean 5, sd 1).
	// va = 4/3, vb = 1/3; se = sqrt(5/3) = 1.290994; Welch df =
	// (5/3)^2 / ((4/3)^2/2 + (1/3)^2/2) = 2.777778/0.944444 = 2.941176;
	// t = 4.303*(1-0.941176) + 3.182*0.941176 = 3.247941; half 4.193079.
	d := Difference([]float64{10, 12, 14}, []float64{4, 5, 6})
	if !d.HasCI || !near(d.Value, 7, 1e-12) || !near(d.Low, 7-4.193079, 1e-4) || !near(d.High, 7+4.193079, 1e-4) || !d.Significant {
		t.Fatalf("got %+v", d)
	}
	// Overlapping samples: the interval holds 0.
	if d := Difference([]float64{1, 5}, []float64{2, 3}); !d.HasCI || d.Significant || d.Low > 0 || d.High < 0 {
		t.Fatalf("noisy: %+v", d)
	}
	// One round on a side: no interval, never significant.
	if d := Difference([]float64{9}, []float64{1, 2}); d.HasCI || d.Significant || d.Value != 7.5 || d.Low != 7.5 {
		t.Fatalf("single: %+v", d)
	}
	if d := Difference(nil, []float64{1}); !math.IsNaN(d.Value) {
		t.Fatalf("empty: %+v", d)
	}
	// Identical constant rounds: a zero-width interval at the difference.
	if d := Difference([]float64{3, 3}, []float64{1, 1}); !d.HasCI || d.Low != 2 || d.High != 2 || !d.Significant {
		t.Fatalf("constant: %+v", d)
	}
}
