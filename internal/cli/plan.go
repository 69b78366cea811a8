package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/catalog"
	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/hostinfo"
	"github.com/dbarena/dbarena/internal/plan"
	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/sandbox"
	"github.com/dbarena/dbarena/internal/stats"
	"github.com/dbarena/dbarena/internal/steady"
	"github.com/dbarena/dbarena/internal/store"
	"github.com/dbarena/dbarena/internal/summary"
	"github.com/dbarena/dbarena/internal/target"
	"github.com/dbarena/dbarena/internal/workload"
)

const planUsage = `dbarena plan COMMAND

  check FILE                      validate a plan without running it
  run FILE [--resume] [--scale F] [--results PATH]
                                  run every cell of the plan, store each round
  show NAME [--results PATH] [--json]
                                  per-cell statistics of the plan's latest session
  cells FILE [--scale F]          list the runs in schedule order
`

// Tags that place a run in a plan session (beside summary.Run.Plan).
const (
	tagPlan    = "plan"
	tagCell    = "plan.cell"
	tagRound   = "plan.round"
	tagSession = "plan.session"
)

func (a *App) plan(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("name a plan command: check, run, show, cells")
	}
	switch args[0] {
	case "check":
		return a.planCheck(args[1:])
	case "run":
		return a.planRun(ctx, args[1:])
	case "show":
		return a.planShow(ctx, args[1:])
	case "cells":
		return a.planCells(args[1:])
	}
	return usagef("unknown plan command %q (want check, run, show, cells)", args[0])
}

// loadPlan reads, parses and checks a plan file; every problem names the
// file and line (exit 2).
func (a *App) loadPlan(path string, scale float64) (*plan.Plan, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, usagef("%s: %w", path, err)
	}
	p, errs := plan.Parse(path, data)
	if p != nil {
		p.Scale(scale)
		errs = append(errs, a.checkWorkloads(p)...)
	}
	if len(errs) > 0 {
		return nil, nil, validate(errs)
	}
	warnings := a.expandCatalog(p)
	return p, warnings, nil
}

// checkWorkloads checks workload names and parameters against the
// workloads' own flags and validation.
func (a *App) checkWorkloads(p *plan.Plan) []error {
	var errs []error
	for _, wl := range p.Workloads {
		w, err := a.Registry.New(wl.Name)
		if err != nil {
			errs = append(errs, p.Errorf(wl.Line, "unknown workload %q (see `dbarena workloads`)", wl.Name))
			continue
		}
		fs := newFlagSet(wl.Name)
		w.Flags(fs)
		set := func(line int, k, v string) {
			if fs.Lookup(k) == nil && fs.Lookup(strings.ReplaceAll(k, "_", "-")) == nil {
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

var labelUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)

// expandCatalog replaces "catalog: FLAVOR" servers with every catalogued
// server of that flavor, and the system binary of that flavor when there
// is one. It returns warnings for catalogue names the plan uses that the
// catalogue does not hold.
func (a *App) expandCatalog(p *plan.Plan) []string {
	cat, _ := catalog.Open(a.home()).List()
	var warnings []string
	var out []plan.Server
	for _, s := range p.Servers {
		switch {
		case s.Catalog != "":
			want, _ := target.ParseFlavor(s.Catalog)
			found := false
			for _, e := range cat {
				if e.Flavor.Family() == want.Family() && (want.Family() == target.Postgres || e.Flavor == want) {
					c := s
					c.Catalog, c.Server, c.Name = "", e.Name, labelUnsafe.ReplaceAllString(e.Name, "-")
					out, found = append(out, c), true
				}
			}
			bins, _ := sandbox.NewManager(a.home()).Discover()
			for _, b := range bins {
				if b.Flavor == want || (want.Family() == target.Postgres && b.Flavor.Family() == target.Postgres) {
					c := s
					c.Catalog, c.Flavor, c.Name = "", string(b.Flavor), "system-"+string(b.Flavor)
					out, found = append(out, c), true
					break
				}
			}
			if !found {
				warnings = append(warnings, fmt.Sprintf("%s:%d: no %s server in the catalogue or on the system", p.File, s.Line, s.Catalog))
			}
		case s.Server != "":
			if !slices.ContainsFunc(cat, func(e catalog.Entry) bool { return e.Name == s.Server }) {
				warnings = append(warnings, fmt.Sprintf("%s:%d: server %q is not in the catalogue: its cells will fail (scripts/fetch-servers, dbarena server import)", p.File, s.Line, s.Server))
			}
			out = append(out, s)
		default:
			out = append(out, s)
		}
	}
	p.Servers = out
	if len(p.Baseline) == 0 && len(out) > 0 {
		p.Baseline = []plan.Param{{Key: "server", Value: out[0].Name}}
	}
	return warnings
}

func planFlags(name string) (*planOptions, *pflag.FlagSet) {
	o := &planOptions{}
	fs := newFlagSet("plan " + name)
	fs.Float64Var(&o.scale, "scale", 1, "scale durations and data sizes by this factor (0 < F <= 1) for a quick run")
	fs.StringVar(&o.results, "results", "", "results store (SQLite file); default $DBARENA_HOME/results.db")
	fs.BoolVar(&o.resume, "resume", false, "continue the plan's latest session, skipping rounds already complete")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	fs.BoolVar(&o.keep, "keep-servers", false, "leave the plan's sandboxes running at the end")
	return o, fs
}

type planOptions struct {
	scale   float64
	results string
	resume  bool
	asJSON  bool
	keep    bool
}

func (a *App) planArgs(name string, args []string) (*planOptions, string, error) {
	o, fs := planFlags(name)
	if err := parseFlags(fs, args); err != nil {
		return nil, "", err
	}
	if fs.NArg() != 1 {
		return nil, "", usagef("plan %s needs exactly one plan FILE", name)
	}
	if o.scale <= 0 || o.scale > 1 {
		return nil, "", usagef("--scale must be > 0 and <= 1, got %g", o.scale)
	}
	return o, fs.Arg(0), nil
}

func (a *App) planCheck(args []string) error {
	o, file, err := a.planArgs("check", args)
	if err != nil {
		return err
	}
	p, warnings, err := a.loadPlan(file, o.scale)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(a.Stdout, "warning:", w)
	}
	steps := p.Schedule()
	est := time.Duration(len(steps)) * (p.Duration + p.Warmup)
	fmt.Fprintf(a.Stdout, "Plan %s: %d servers, %d cells, %d rounds, %d runs, at most %s of measurement and warm-up\n",
		p.Name, len(p.Variants()), len(p.Cells()), p.Rounds, len(steps), est)
	return nil
}

func (a *App) planCells(args []string) error {
	o, file, err := a.planArgs("cells", args)
	if err != nil {
		return err
	}
	p, _, err := a.loadPlan(file, o.scale)
	if err != nil {
		return err
	}
	for i, s := range p.Schedule() {
		fmt.Fprintf(a.Stdout, "%4d round %d %s\n", i+1, s.Round, s.ID)
	}
	return nil
}

// labState is what plan run knows of each variant's server.
type labState struct {
	target   target.Target
	err      error  // the server could not be started
	settings string // settings applied at the last start
	data     string // DataKey of the data loaded, "" for none
	started  bool
}

func (a *App) planRun(ctx context.Context, args []string) error {
	o, file, err := a.planArgs("run", args)
	if err != nil {
		return err
	}
	p, warnings, err := a.loadPlan(file, o.scale)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(a.Stderr, "warning:", w)
	}
	st, err := store.Open(ctx, a.resultsPath(o.results))
	if err != nil {
		return usagef("--results: %w", err)
	}
	defer st.Close()

	session := time.Now().UTC().Format("20060102T150405Z")
	done := map[string]bool{}
	if o.resume {
		latest, err := latestSession(ctx, st, p.Name)
		if err != nil {
			return failed(err)
		}
		if latest != "" {
			session = latest
			runs, err := st.List(ctx, store.Filter{Tags: map[string]string{tagPlan: p.Name, tagSession: session}})
			if err != nil {
				return failed(err)
			}
			for _, r := range runs {
				if r.Status == summary.StatusComplete {
					done[r.Tags[tagCell]+"#"+r.Tags[tagRound]] = true
				}
			}
		}
	}
	steps := p.Schedule()
	variants := p.Variants()
	fmt.Fprintf(a.Stdout, "Plan %s (session %s): %d servers, %d cells x %d rounds = %d runs",
		p.Name, session, len(variants), len(p.Cells()), p.Rounds, len(steps))
	if len(done) > 0 {
		fmt.Fprintf(a.Stdout, ", %d already complete", len(done))
	}
	fmt.Fprintln(a.Stdout)

	ctx, stop := a.Interrupts(ctx)
	defer stop()
	m := sandbox.NewManager(a.home())
	labs := make([]*labState, len(variants))
	for i := range labs {
		labs[i] = &labState{}
	}
	defer func() {
		if o.keep {
			return
		}
		for i, l := range labs {
			if l.started {
				_ = m.Stop(context.WithoutCancel(ctx), sandboxName(variants[i]))
			}
		}
	}()
	host := hostinfo.Collect()
	var (
		ran, skipped, failedRuns int
		spent                    time.Duration
		notes                    = map[string]bool{}
		lastBlock                string
	)
	note := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if !notes[msg] {
			notes[msg] = true
			fmt.Fprintln(a.Stdout, "note:", msg)
		}
	}
	for i, step := range steps {
		if done[step.ID+"#"+strconv.Itoa(step.Round)] {
			skipped++
			continue
		}
		if ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		v := variants[step.Variant]
		lab := labs[step.Variant]
		block := fmt.Sprintf("%d/%d", step.Round, step.Variant)
		if block != lastBlock {
			lastBlock = block
			if step.Round > 1 {
				a.betweenRounds(ctx, m, p, v, lab, note)
			}
		}
		run := a.planStep(ctx, st, m, p, session, step, v, lab, host)
		spent += time.Since(t0)
		ran++
		remaining := len(steps) - i - 1
		eta := time.Duration(0)
		if ran > 0 {
			eta = (spent / time.Duration(ran) * time.Duration(remaining)).Round(time.Second)
		}
		line := fmt.Sprintf("[%d/%d] round %d %s: ", i+1, len(steps), step.Round, step.ID)
		switch run.Status {
		case summary.StatusComplete:
			line += fmt.Sprintf("tps %.2f p95 %.2f ms p99 %.2f ms warm-up %.0fs", run.Throughput.TPS, run.LatencyMS.P95, run.LatencyMS.P99, run.WarmupS)
		default:
			failedRuns++
			line += run.Status + ": " + oneLine(run.Error)
		}
		if run.ID > 0 {
			line += fmt.Sprintf(" (run %d)", run.ID)
		}
		fmt.Fprintf(a.Stdout, "%s; ETA %s\n", line, eta)
		if run.Status == summary.StatusInterrupted {
			break
		}
	}
	if ctx.Err() != nil {
		return failed(fmt.Errorf("interrupted: finish with `dbarena plan run %s --resume`", file))
	}
	fmt.Fprintf(a.Stdout, "\nPlan %s: %d runs done, %d skipped (already complete), %d failed\n\n", p.Name, ran, skipped, failedRuns)
	if err := a.printPlanStats(ctx, st, p.Name, session, p.Baseline, p.NoisyCV, false); err != nil {
		return err
	}
	if failedRuns > 0 {
		return failed(fmt.Errorf("%d of %d runs failed (stored with their errors)", failedRuns, ran))
	}
	return nil
}

// sandboxName is the sandbox a plan variant runs in.
func sandboxName(v plan.Variant) string {
	n := "lab-" + strings.NewReplacer(".", "_").Replace(v.Label())
	if len(n) > 32 {
		n = n[:32]
	}
	return n
}

// betweenRounds applies the plan's actions before a variant's round.
func (a *App) betweenRounds(ctx context.Context, m *sandbox.Manager, p *plan.Plan, v plan.Variant, lab *labState, note func(string, ...any)) {
	if p.Reload {
		lab.data = ""
	}
	for _, act := range p.BetweenRounds {
		switch act.Name {
		case "restart":
			if v.Server.DSN != "" {
				note("server %s is a DSN: not restarted between rounds", v.Server.Name)
				continue
			}
			if lab.started && lab.err == nil {
				if _, err := m.Restart(ctx, sandboxName(v)); err != nil {
					lab.err = err
				}
			}
		case "drop-caches":
			if err := dropCaches(); err != nil {
				note("drop-caches not permitted here (%v): page cache kept between rounds", err)
			}
		}
	}
}

// dropCaches flushes dirty pages and drops the kernel's page cache.
func dropCaches() error {
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString("3\n")
	return err
}

// planTarget starts (or reuses) the variant's server with the cell's settings.
func (a *App) planTarget(ctx context.Context, m *sandbox.Manager, v plan.Variant, cell plan.Cell, lab *labState) (target.Target, error) {
	s := v.Server
	if s.DSN != "" {
		if lab.target.Host == "" && lab.target.Socket == "" {
			t, err := target.ParseDSN(s.DSN)
			if err != nil {
				return t, err
			}
			lab.target = t
		}
		return lab.target, nil
	}
	var parts []string
	spec := sandbox.Spec{Name: sandboxName(v), Profile: s.Profile, BufferPool: s.BufferPool, Allocator: s.Allocator}
	if spec.Allocator == "" {
		spec.Allocator = "system"
	}
	if spec.Profile == "" {
		spec.Profile = sandbox.ProfileDefault
	}
	for _, kv := range cell.Settings {
		spec.Settings = append(spec.Settings, sandbox.Setting{Key: kv.Key, Value: kv.Value})
		parts = append(parts, kv.Key+"="+kv.Value)
	}
	key := strings.Join(parts, ",")
	if lab.started && lab.err == nil && lab.settings == key {
		return lab.target, nil
	}
	switch {
	case s.Server != "":
		e, err := catalog.Open(a.home()).Get(s.Server)
		if err != nil {
			return target.Target{}, err
		}
		spec.Basedir = e.Basedir
	case s.Flavor != "":
		f, err := target.ParseFlavor(s.Flavor)
		if err != nil {
			return target.Target{}, err
		}
		spec.Flavor = f
	}
	sb, err := m.Start(ctx, spec)
	lab.started = true
	if err != nil {
		lab.err = err
		return target.Target{}, err
	}
	lab.err, lab.settings, lab.target = nil, key, sb.Target()
	return lab.target, nil
}

// planStep runs one step and stores its result; a step that cannot run is
// stored as a failed run.
func (a *App) planStep(ctx context.Context, st *store.Store, m *sandbox.Manager, p *plan.Plan, session string,
	step plan.Step, v plan.Variant, lab *labState, host summary.Host) *summary.Run {
	ref := &summary.PlanRef{Name: p.Name, Cell: step.ID, Coords: step.CoordMap(), Round: step.Round}
	tags := [][2]string{{tagPlan, p.Name}, {tagCell, step.ID}, {tagRound, strconv.Itoa(step.Round)},
		{tagSession, session}, {"round", strconv.Itoa(step.Round)}}
	fail := func(t target.Target, err error) *summary.Run {
		run := &summary.Run{
			Schema: summary.Schema, Status: summary.StatusFailed, StartedAt: time.Now().UTC(), EndedAt: time.Now().UTC(),
			Workload: step.Workload, Threads: max(step.Threads, 1), Plan: ref, Tags: map[string]string{}, Host: host,
			Target:  summary.Target{Flavor: string(t.Flavor), Version: t.Version, DSN: t.MaskedDSN(), Sandbox: t.Sandbox},
			Dbarena: summary.Dbarena{Version: Version, Command: maskArgs(a.Args, t)},
			Error:   t.Mask(oneLine(err.Error())),
		}
		if ctx.Err() != nil {
			run.Status = summary.StatusInterrupted
		}
		for _, kv := range tags {
			run.Tags[kv[0]] = kv[1]
		}
		if _, serr := st.SaveRun(context.WithoutCancel(ctx), run); serr != nil {
			run.Error += "; store: " + serr.Error()
		}
		return run
	}
	if lab.err != nil && lab.started && v.Server.DSN == "" {
		// Try again: a failed start may have been the settings of one cell.
		lab.started = false
	}
	t, err := a.planTarget(ctx, m, v, step.Cell, lab)
	if err != nil {
		return fail(t, fmt.Errorf("server %s: %w", v.Server.Name, err))
	}
	w, err := a.Registry.New(step.Workload)
	if err != nil {
		return fail(t, err)
	}
	fs := newFlagSet(step.Workload)
	w.Flags(fs)
	for _, kv := range step.Params {
		if kv.Key == "mysql-storage-engine" && t.Family() != target.MySQL {
			continue
		}
		if err := fs.Set(kv.Key, kv.Value); err != nil {
			return fail(t, fmt.Errorf("%s=%s: %w", kv.Key, kv.Value, err))
		}
	}
	if errs := w.Validate(); len(errs) > 0 {
		return fail(t, errors.Join(errs...))
	}
	threads := max(step.Threads, 1)
	if lab.data != step.DataKey {
		if err := a.planPrepare(ctx, t, w); err != nil {
			lab.data = ""
			return fail(t, fmt.Errorf("prepare: %w", err))
		}
		lab.data = step.DataKey
	}
	setThreads(w, threads)
	r, ok := w.(workload.Runner)
	if !ok {
		return fail(t, fmt.Errorf("workload %s has no run step", w.Name()))
	}
	ro := runOptions{results: "", rounds: 1, tags: tags, plan: ref, quiet: true}
	ro.cfg = runner.DefaultConfig()
	ro.cfg.Threads = threads
	ro.cfg.Duration = p.Duration
	ro.cfg.Warmup = p.Warmup
	ro.cfg.ReportInterval = p.ReportInterval
	if p.AutoWarmup {
		det := steady.Detector{}
		ro.cfg.WarmupUntil = func(ivs []runner.Interval) bool {
			xs := make([]float64, len(ivs))
			for i, iv := range ivs {
				if secs := (iv.End - iv.Start).Seconds(); secs > 0 {
					xs[i] = float64(iv.Events) / secs
				}
			}
			return det.Steady(xs)
		}
	}
	if errs := ro.cfg.Validate(); len(errs) > 0 {
		return fail(t, errors.Join(errs...))
	}
	s, err := connect(ctx, t, dialect.OpenOptions{MaxConns: threads})
	if err != nil {
		return fail(t, err)
	}
	run, err := a.runOnce(ctx, st, s, w, r, &ro, step.Round, host)
	s.Close()
	if err != nil {
		return fail(t, err)
	}
	return run
}

// planPrepare drops and loads the workload's data.
func (a *App) planPrepare(ctx context.Context, t target.Target, w workload.Workload) error {
	const loaders = 2
	s, err := connect(ctx, t, dialect.OpenOptions{MaxConns: loaders + 1})
	if err != nil {
		return err
	}
	defer s.Close()
	if cl, ok := w.(workload.Cleaner); ok {
		if err := cl.Cleanup(ctx, s.env()); err != nil {
			return errors.New(t.Mask(err.Error()))
		}
	}
	p, ok := w.(workload.Preparer)
	if !ok {
		return nil
	}
	setThreads(w, loaders)
	if err := p.Prepare(ctx, s.env(), loaders, discardProgress{}); err != nil {
		return errors.New(t.Mask(err.Error()))
	}
	return nil
}

// latestSession is the newest session of plan name in the store, "" if none.
func latestSession(ctx context.Context, st *store.Store, name string) (string, error) {
	runs, err := st.List(ctx, store.Filter{Tags: map[string]string{tagPlan: name}, Limit: 1})
	if err != nil || len(runs) == 0 {
		return "", err
	}
	return runs[0].Tags[tagSession], nil
}

func (a *App) planShow(ctx context.Context, args []string) error {
	var baseline [][2]string
	o, fs := planFlags("show")
	fs.Var(keyValues{&baseline}, "baseline", "baseline coordinate KEY=VALUE (default: server of the first cell)")
	var session string
	var noisy float64
	fs.StringVar(&session, "session", "", "plan session (default: the latest)")
	fs.Float64Var(&noisy, "noisy-cv", 0.10, "flag cells whose throughput CV exceeds this")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("plan show needs exactly one plan NAME")
	}
	st, err := store.Open(ctx, a.resultsPath(o.results))
	if err != nil {
		return usagef("--results: %w", err)
	}
	defer st.Close()
	name := fs.Arg(0)
	if session == "" {
		if session, err = latestSession(ctx, st, name); err != nil {
			return failed(err)
		}
		if session == "" {
			return usagef("no runs of plan %q in %s", name, a.resultsPath(o.results))
		}
	}
	var base []plan.Param
	for _, kv := range baseline {
		base = append(base, plan.Param{Key: kv[0], Value: kv[1]})
	}
	return a.printPlanStats(ctx, st, name, session, base, noisy, o.asJSON)
}

// printPlanStats prints the per-cell table of a plan session.
func (a *App) printPlanStats(ctx context.Context, st *store.Store, name, session string, base []plan.Param, noisyCV float64, asJSON bool) error {
	rows, err := st.List(ctx, store.Filter{Tags: map[string]string{tagPlan: name, tagSession: session}})
	if err != nil {
		return failed(err)
	}
	slices.Reverse(rows) // oldest first: cells in schedule order
	var runs []*summary.Run
	for _, r := range rows {
		run, err := st.Run(ctx, r.ID)
		if err != nil {
			return failed(err)
		}
		runs = append(runs, run)
	}
	if len(base) == 0 {
		for _, r := range runs {
			if r.Plan != nil {
				base = []plan.Param{{Key: "server", Value: r.Plan.Coords["server"]}}
				break
			}
		}
	}
	cells := plan.Summarise(runs, base, noisyCV)
	if asJSON {
		return a.printJSON(struct {
			Plan     string           `json:"plan"`
			Session  string           `json:"session"`
			Baseline []plan.Param     `json:"baseline"`
			Cells    []plan.CellStats `json:"cells"`
		}{name, session, base, cells})
	}
	var bl []string
	for _, b := range base {
		bl = append(bl, b.Key+"="+b.Value)
	}
	fmt.Fprintf(a.Stdout, "Plan %s, session %s: mean over rounds ± 95%% CI half-width; baseline %s; noisy above CV %.0f%%\n",
		name, session, strings.Join(bl, ","), noisyCV*100)
	tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tN\tTPS\tCV\tP95 MS\tP99 MS\tWARM-UP\tVS BASELINE\tNOTE")
	for _, c := range cells {
		label := cellLabel(c.Cell)
		if c.Runs == 0 {
			fmt.Fprintf(tw, "%s\t0/%d\t-\t-\t-\t-\t-\t-\tfailed: %s\n", label, c.Failed, truncate(oneLine(c.Error), 60))
			continue
		}
		n := strconv.Itoa(c.Runs)
		if c.Failed > 0 {
			n += fmt.Sprintf("/%d", c.Runs+c.Failed)
		}
		var notes []string
		if c.Noisy {
			notes = append(notes, "noisy")
		}
		rel := "-"
		switch {
		case plan.IsBaseline(c.Coords, base):
			rel = "baseline"
		case c.Relative != nil:
			rel = fmt.Sprintf("%.3f", c.Relative.Value)
			if c.Relative.HasCI {
				rel += fmt.Sprintf(" [%.3f, %.3f]", c.Relative.Low, c.Relative.High)
			}
			if !c.Relative.Significant {
				notes = append(notes, "no significant difference")
			}
		}
		if c.Failed > 0 {
			notes = append(notes, fmt.Sprintf("%d failed", c.Failed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%s\t%s\t%.0fs\t%s\t%s\n", label, n, pm(c.TPS), c.TPS.CV*100,
			pm(c.P95), pm(c.P99), c.WarmupS, rel, strings.Join(notes, ", "))
	}
	return tw.Flush()
}

// pm renders mean ± CI half-width.
func pm(s stats.Summary) string {
	if !s.HasCI() {
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, (s.CIHigh-s.CILow)/2)
}

// cellLabel drops the workload coordinate's key names for a compact table.
func cellLabel(id string) string {
	var parts []string
	for _, kv := range strings.Split(id, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "workload", "server", "engine":
			parts = append(parts, v)
		default:
			parts = append(parts, kv)
		}
	}
	return strings.Join(parts, " ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// discardProgress ignores load progress (plan run prints a line per cell).
type discardProgress struct{}

func (discardProgress) SetTotal(int64)   {}
func (discardProgress) Add(int64, int64) {}
