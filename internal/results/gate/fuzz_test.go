package gate

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// FuzzParse: no threshold or --fail-on text panics; an accepted threshold
// evaluates on any run, and its outcome is valid JUnit XML.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"p95<5ms", "p(99.9)<50ms", "tps>=1000", "errors<0.1%", "lag_p99<100ms",
		"type:new_order p90<5ms", "tps:-5%,p95:+10%", "errors<=3", "p95<1e400ms", "type:\xff p90<1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if th, err := Parse(s); err == nil {
			if strings.ContainsAny(th.Op, "=") && len(th.Op) == 1 {
				t.Fatalf("op %q", th.Op)
			}
			run := testRun()
			run.Thresholds = EvalAll([]Threshold{th}, run)
			var b bytes.Buffer
			if err := WriteJUnit(&b, []Suite{RunSuite(run)}); err != nil {
				t.Fatal(err)
			}
			var doc junitSuites
			if err := xml.Unmarshal(b.Bytes(), &doc); err != nil && strings.ToValidUTF8(s, "") == s {
				t.Fatalf("junit of %q: %v", s, err)
			}
		} else if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of %q spans lines: %v", s, err)
		}
		if ls, err := ParseLimits(s); err == nil {
			for _, l := range ls {
				Judge(l, runs(1, 2, 3), runs(2, 3, 4))
			}
		}
	})
}
