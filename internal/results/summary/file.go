package summary

import (
	"encoding/json"

	"github.com/dbarena/dbarena/internal/secret"
)

// WriteFile writes run as the JSON of docs/CLI.md (--json) to path, mode
// 0600, without its encoded histograms (the store keeps those).
func WriteFile(path string, run *Run) error {
	out := *run
	out.Histogram, out.TypeHistograms = "", nil
	out.Intervals = WithoutHistograms(out.Intervals)
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	return secret.WriteFile(path, append(b, '\n'))
}

// WithoutHistograms returns a copy of ivs without their encoded histograms,
// whole and per type (a shard's run keeps them for the merge), for output.
func WithoutHistograms(ivs []Interval) []Interval {
	if ivs == nil {
		return nil
	}
	out := make([]Interval, len(ivs))
	for i, iv := range ivs {
		iv.Histogram = ""
		if iv.PerType != nil {
			pt := make(map[string]IntervalType, len(iv.PerType))
			for name, t := range iv.PerType {
				t.Histogram = ""
				pt[name] = t
			}
			iv.PerType = pt
		}
		out[i] = iv
	}
	return out
}
