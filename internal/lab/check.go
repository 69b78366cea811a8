package lab

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Check checks the plan's workload names and parameters (fixed ones and
// every axis value) against the workloads' own flags and validation, and
// the servers' settings and server axes against what a sandbox accepts;
// each error names the plan file and line.
func Check(p *plan.Plan, reg *workload.Registry) []error {
	errs := checkSettings(p)
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
			if ax.Name == plan.AxisThreads || ax.Name == plan.AxisTLS || ax.Name == plan.AxisConnect || strings.HasPrefix(ax.Name, plan.ServerAxisPrefix) {
				continue
			}
			for _, v := range ax.Values {
				set(v.Line, ax.Name, v.Value)
			}
		}
		for _, e := range w.Validate() {
			errs = append(errs, p.Errorf(wl.Line, "workload %s: %v", wl.Name, e))
		}
		errs = append(errs, checkDetached(p, wl, w)...)
		errs = append(errs, checkShards(p, wl, func(extra []plan.Param) (workload.Workload, error) {
			w, err := reg.New(wl.Name)
			if err != nil {
				return nil, err
			}
			fs := flagSet(wl.Name)
			w.Flags(fs)
			for _, kv := range append(append([]plan.Param(nil), wl.Params...), extra...) {
				if err := fs.Set(kv.Key, kv.Value); err != nil {
					return nil, err
				}
			}
			return w, nil
		})...)
	}
	return errs
}

// checkSettings checks the settings of the servers dbarena starts and the
// server axes' values: names and values a sandbox takes, none it owns, and
// no unsafe one (sandbox.UnsafeSetting) unless the plan says
// allow_unsafe_settings: true. A server of a catalogue name, whose flavor
// is not known yet, is held to every flavor's list.
func checkSettings(p *plan.Plan) []error {
	var errs []error
	const hint = "refused without allow_unsafe_settings: true"
	var flavors []target.Flavor // of the servers dbarena starts
	for _, s := range p.Servers {
		if s.DSN != "" {
			continue
		}
		f := serverFlavor(s)
		flavors = append(flavors, f)
		for _, kv := range s.Settings {
			if _, err := sandbox.ParseSetting(kv.Key + "=" + kv.Value); err != nil {
				errs = append(errs, p.Errorf(kv.Line, "server %s: %v", serverLabel(s), err))
				continue
			}
			if why, bad := sandbox.UnsafeSetting(f, kv.Key, kv.Value); bad && !p.AllowUnsafeSettings {
				errs = append(errs, p.Errorf(kv.Line, "server %s: setting %q %s: %s", serverLabel(s), kv.Key, why, hint))
			}
		}
	}
	for _, ax := range p.Axes {
		key, ok := strings.CutPrefix(ax.Name, plan.ServerAxisPrefix)
		if !ok || key == "" {
			continue
		}
		for _, v := range ax.Values {
			if _, err := sandbox.ParseSetting(key + "=" + v.Value); err != nil {
				errs = append(errs, p.Errorf(v.Line, "axis %s: %v", ax.Name, err))
				continue
			}
			if p.AllowUnsafeSettings {
				continue
			}
			for _, f := range flavors {
				if why, bad := sandbox.UnsafeSetting(f, key, v.Value); bad {
					errs = append(errs, p.Errorf(v.Line, "axis %s: setting %q %s: %s", ax.Name, key, why, hint))
					break
				}
			}
		}
	}
	return errs
}

// serverFlavor is the flavor of a plan server, "" when only its catalogue
// entry knows.
func serverFlavor(s plan.Server) target.Flavor {
	name := s.Flavor
	if name == "" {
		name = s.Catalog
	}
	if strings.EqualFold(name, "postgresql") {
		name = "postgres"
	}
	f, _ := target.ParseFlavor(name)
	return f
}

// serverLabel names a plan server in errors.
func serverLabel(s plan.Server) string {
	if s.Name != "" {
		return s.Name
	}
	if s.Catalog != "" {
		return "catalog " + s.Catalog
	}
	return s.Server
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
