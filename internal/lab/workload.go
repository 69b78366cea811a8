package lab

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/plan"
	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/steady"
	"github.com/dbarena/dbarena/internal/target"
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

// Workload is the job's workload from reg with the step's parameters set
// and validated (a MySQL storage engine is left out on other families).
func (j Job) Workload(reg *workload.Registry) (workload.Workload, error) {
	w, err := reg.New(j.Step.Workload)
	if err != nil {
		return nil, err
	}
	fs := flagSet(j.Step.Workload)
	w.Flags(fs)
	for _, kv := range j.Step.Params {
		if kv.Key == "mysql-storage-engine" && j.Target.Family() != target.MySQL {
			continue
		}
		if err := fs.Set(kv.Key, kv.Value); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", kv.Key, kv.Value, err)
		}
	}
	if errs := w.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return w, nil
}

// Config is the runner configuration of the job: its threads and the
// plan's duration, warm-up (ended at steady state for warmup: auto) and
// report interval. It is not validated.
func (j Job) Config() runner.Config {
	p := j.Plan
	cfg := runner.DefaultConfig()
	cfg.Threads = j.Threads()
	cfg.Duration = p.Duration
	cfg.Warmup = p.Warmup
	cfg.ReportInterval = p.ReportInterval
	if p.AutoWarmup {
		det := steady.Detector{}
		cfg.WarmupUntil = func(ivs []runner.Interval) bool {
			xs := make([]float64, len(ivs))
			for i, iv := range ivs {
				if secs := (iv.End - iv.Start).Seconds(); secs > 0 {
					xs[i] = float64(iv.Events) / secs
				}
			}
			return det.Steady(xs)
		}
	}
	return cfg
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

// oneLine folds whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
