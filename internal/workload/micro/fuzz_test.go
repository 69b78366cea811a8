package micro

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// FuzzTests: any --tests and --scale either fail Validate with errors or
// give known groups in suite order and a positive plan.
func FuzzTests(f *testing.F) {
	f.Add("connect,select", "1")
	f.Add("wisconsin,,insert", "0.5")
	f.Add("select,select", "1e9")
	f.Add("", "NaN")
	f.Fuzz(func(t *testing.T, tests, scale string) {
		wl := New().(*Workload)
		fs := pflag.NewFlagSet("micro", pflag.ContinueOnError)
		wl.Flags(fs)
		if fs.Parse([]string{"--tests=" + tests, "--scale=" + scale}) != nil {
			return
		}
		if len(wl.Validate()) > 0 {
			return
		}
		for i, g := range wl.groups {
			if !slices.Contains(Groups, g) || i > 0 && index(wl.groups[i-1]) >= index(g) {
				t.Fatalf("groups %q", wl.groups)
			}
		}
		if wl.Planned(1) <= 0 {
			t.Fatalf("planned %d", wl.Planned(1))
		}
	})
}
