package lab

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/plan"
	"github.com/dbarena/dbarena/internal/workload"
)

// Check checks the plan's workload names and parameters (fixed ones and
// every axis value) against the workloads' own flags and validation; each
// error names the plan file and line.
func Check(p *plan.Plan, reg *workload.Registry) []error {
	var errs []error
	for _, wl := range p.Workloads {
		w, err := reg.New(wl.Name)
		if err != nil {
			errs = append(errs, p.Errorf(wl.Line, "unknown workload %q (see `dbarena workloads`)", wl.Name))
			continue
		}
		fs := flagSet(wl.Name)
		w.Flags(fs)
		set := func(line int, k, v string) {
			if fs.Lookup(k) == nil {
				errs = append(errs, p.Errorf(line, "workload %s has no parameter %q (see `dbarena help run %s`)", wl.Name, k, wl.Name))
				return
			}
			if err := fs.Set(k, v); err != nil {
				errs = append(errs, p.Errorf(line, "%s: %q: %v", k, v, err))
			}
		}
		for _, kv := range wl.Params {
			set(kv.Line, kv.Key, kv.Value)
		}
		for _, ax := range p.Axes {
			if ax.Name == plan.AxisThreads || strings.HasPrefix(ax.Name, plan.ServerAxisPrefix) {
				continue
			}
			for _, v := range ax.Values {
				set(v.Line, ax.Name, v.Value)
			}
		}
		for _, e := range w.Validate() {
			errs = append(errs, p.Errorf(wl.Line, "workload %s: %v", wl.Name, e))
		}
	}
	return errs
}

// flagSet is a silent flag set that takes parameters spelled with '_' or
// '-' alike, as the CLI's does.
func flagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	return fs
}
