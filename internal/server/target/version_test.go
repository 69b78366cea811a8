package target

import "testing"

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"10.11.19", "10.6.2", 1},
		{"8.0.36", "8.0.36", 0},
		{"8.0.36-28", "8.0.36", 1},
		{"5.7", "5.7.44", -1},
		{"15.18", "9.6.24", 1},
	}
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
