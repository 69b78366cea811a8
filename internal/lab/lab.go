// Package lab runs experiment plans: every step of a plan's schedule in
// order, each variant's server in its own sandbox (started, restarted with
// a cell's settings, stopped at the end), the actions between rounds, data
// prepared once per variant and data size (or a plan's dump loaded once per
// variant, through a Loader), servers of one fixed port run in turn, resume of a session's incomplete
// rounds, and a cell that cannot run stored as a failed run while the plan
// goes on.
//
// The lab reaches the outside world through small interfaces: Store (the
// results store), Sandboxes (the servers), Pipeline (preparing and running
// one step) and ShardRunner (running a step of shards: N > 1 as one
// sharded run), so it is tested with fakes; Local is the Sandboxes of a
// real sandbox manager, LocalShards runs shards as local processes and
// *store.Store is a Store. Progress goes to an
// Observer; the lab prints nothing.
package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/gate"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Store is the results store as the lab needs it. *store.Store is one.
type Store interface {
	// List returns the runs selected by f, newest first.
	List(ctx context.Context, f store.Filter) ([]store.RunRow, error)
	// SaveRun stores run and sets its ID.
	SaveRun(ctx context.Context, run *summary.Run) (int64, error)
}

// Sandboxes starts and stops the variants' servers. Local is the real one.
type Sandboxes interface {
	// Start starts sandbox name for server s with settings, replacing the
	// settings of a sandbox already running, and returns its target (with
	// no TLS parameters) and, for a sandbox with TLS on (s.TLS), the CA
	// certificate file that verifies its server.
	Start(ctx context.Context, name string, s plan.Server, settings []plan.Param) (t target.Target, tlsCA string, err error)
	// Restart restarts a running sandbox.
	Restart(ctx context.Context, name string) error
	// Stop stops a sandbox.
	Stop(ctx context.Context, name string) error
	// DropCaches drops the kernel's page cache.
	DropCaches() error
}

// Pipeline prepares and runs one step. Both get a Job whose Target is up.
type Pipeline interface {
	// Prepare drops and loads the step's data.
	Prepare(ctx context.Context, j Job) error
	// Run runs the step once, stores it (with j.Tags and j.Ref) and
	// returns it; an error means it could not run (the lab stores it as a
	// failed run).
	Run(ctx context.Context, j Job) (*summary.Run, error)
}

// Observer hears the lab's progress, in order, from the goroutine of Run.
type Observer interface {
	// Began is called once the session is known; complete runs of it
	// (resume) are skipped.
	Began(session string, complete int)
	// Noted is something the plan asks that cannot be done here, once per
	// distinct message.
	Noted(msg string)
	// Ran reports step i (0-based) of n, its run and the estimated time
	// left.
	Ran(i, n int, step plan.Step, run *summary.Run, eta time.Duration)
}

// Lab runs plans. Store, Sandboxes and Pipeline are required.
type Lab struct {
	Store     Store
	Sandboxes Sandboxes
	Pipeline  Pipeline
	// Observer hears progress; nil hears nothing.
	Observer Observer
	// Stamp, if set, fills in the host and program fields of a failed run
	// (the pipeline fills them in for the runs it makes).
	Stamp func(run *summary.Run, t target.Target)
	// Loader loads the dumps of plans with data; nil fails their cells.
	Loader Loader
	// Shards runs the steps of shards: N > 1 (LocalShards); nil fails
	// them.
	Shards ShardRunner
	// Judged, if set, hears each step run that judged thresholds (a
	// workload's thresholds:), its results in Run.Thresholds.
	Judged func(run *summary.Run)
	// Registry, if set, makes the workloads of the plan's steps for the
	// estimate of the time left (StepEstimates): their event limits.
	Registry *workload.Registry
}

// Options are how a plan is run.
type Options struct {
	// Resume continues the plan's latest session, skipping its complete
	// rounds; a plan with no session starts one.
	Resume bool
	// Keep leaves the plan's sandboxes running at the end.
	Keep bool
	// Session names a new session; "" names it after the start time.
	Session string
}

// Result is what a plan run did.
type Result struct {
	Session string
	// Ran counts the steps run, Skipped those complete before (resume),
	// Failed the steps run whose status is not complete.
	Ran, Skipped, Failed int
	// Judged counts the steps run that judged thresholds (a workload's
	// thresholds:), GateFailed those where one failed.
	Judged, GateFailed int
	// Interrupted: the context was cancelled or a run was interrupted
	// before the schedule's end.
	Interrupted bool
}

// Run runs every step of p's schedule not yet complete in the session and
// stops the sandboxes it started (unless o.Keep). The error is only for a
// store that cannot be read; failed cells are in the store and Result.
func (l *Lab) Run(ctx context.Context, p *plan.Plan, o Options) (Result, error) {
	obs := l.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	res := Result{Session: o.Session}
	if res.Session == "" {
		res.Session = time.Now().UTC().Format("20060102T150405Z")
	}
	done := map[string]bool{}
	if o.Resume {
		var err error
		if res.Session, done, err = l.resume(ctx, p, res.Session); err != nil {
			return res, err
		}
	}
	obs.Began(res.Session, len(done))

	variants := p.Variants()
	servers := make([]*server, len(variants))
	for i, v := range variants {
		servers[i] = &server{v: v, name: SandboxName(v)}
	}
	linkPorts(servers)
	defer func() {
		if o.Keep {
			return
		}
		for _, s := range servers {
			if s.started && s.v.Server.DSN == "" {
				_ = l.Sandboxes.Stop(context.WithoutCancel(ctx), s.name)
			}
		}
	}()
	noted := map[string]bool{}
	note := func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !noted[msg] {
			noted[msg] = true
			obs.Noted(msg)
		}
	}
	steps := p.Schedule()
	eta := NewETA(StepEstimates(p, l.Registry))
	var todo []int // steps not complete before, in order
	for i, step := range steps {
		if !done[roundKey(step.ID, strconv.Itoa(step.Round))] {
			todo = append(todo, i)
		}
	}
	starter, _ := obs.(Starter)
	var lastBlock string
	for i, step := range steps {
		if done[roundKey(step.ID, strconv.Itoa(step.Round))] {
			res.Skipped++
			continue
		}
		if ctx.Err() != nil {
			break
		}
		todo = todo[1:] // step i
		if starter != nil {
			starter.Starting(i, len(steps), step, eta.Left(append([]int{i}, todo...)))
		}
		t0 := time.Now()
		s := servers[step.Variant]
		// A block is one variant's share of a round: the actions between
		// rounds come before each block after the first round.
		if block := fmt.Sprintf("%d/%d", step.Round, step.Variant); block != lastBlock {
			lastBlock = block
			if d := p.DataFor(s.v.Server); d != nil && d.Reload == plan.ReloadAlways {
				s.data = "" // a fresh load before every round of every workload
			}
			if step.Round > 1 {
				l.betweenRounds(ctx, p, s, note)
			}
		}
		run := l.step(ctx, p, res.Session, step, s, note)
		eta.Ran(i, time.Since(t0))
		res.Ran++
		if run.Status != summary.StatusComplete {
			res.Failed++
		}
		if len(run.Thresholds) > 0 {
			res.Judged++
			if gate.Failed(run.Thresholds) {
				res.GateFailed++
			}
			if l.Judged != nil {
				l.Judged(run)
			}
		}
		obs.Ran(i, len(steps), step, run, max(0, eta.Left(todo)))
		if run.Status == summary.StatusInterrupted {
			res.Interrupted = true
			break
		}
	}
	res.Interrupted = res.Interrupted || ctx.Err() != nil
	return res, nil
}

// ErrResumeScale is resume's error when the latest session ran at
// another --scale than the one asked for: its rounds and the new ones
// would be unlike work in one session.
var ErrResumeScale = errors.New("the latest session ran at another --scale")

// resume returns p's latest session (or session when it has none) and the
// cell rounds complete in it; ErrResumeScale when that session's runs
// were of another scale than p's.
func (l *Lab) resume(ctx context.Context, p *plan.Plan, session string) (string, map[string]bool, error) {
	name := p.Name
	done := map[string]bool{}
	latest, err := LatestSession(ctx, l.Store, name)
	if err != nil || latest == "" {
		return session, done, err
	}
	runs, err := l.Store.List(ctx, store.Filter{Tags: map[string]string{TagPlan: name, TagSession: latest}})
	if err != nil {
		return latest, nil, err
	}
	want := ScaleTag(p.ScaleFactor)
	for _, r := range runs {
		if s := r.Tags[TagScale]; s != "" && s != want {
			return latest, nil, fmt.Errorf("plan %s: --resume: %w: session %s ran at --scale %s, not %s; resume it with --scale %s, or run without --resume for a new session",
				name, ErrResumeScale, latest, s, want, s)
		}
	}
	sharded := map[string][]string{} // round key: its sharded runs' keys
	for _, r := range runs {
		rk := roundKey(r.Tags[TagCell], r.Tags[TagRound])
		if key := r.Tags[shard.TagRun]; key != "" {
			// A shard's own run: its step is done when its merged run is
			// complete (every shard is).
			if !slices.Contains(sharded[rk], key) {
				sharded[rk] = append(sharded[rk], key)
			}
			continue
		}
		if r.Status == summary.StatusComplete {
			done[rk] = true
		}
	}
	if err := l.shardedDone(ctx, sharded, done); err != nil {
		return latest, nil, err
	}
	return latest, done, nil
}

// roundKey identifies a cell's round in a session.
func roundKey(cell, round string) string { return cell + "#" + round }

// step runs one step; a step that cannot run is stored as a failed run.
func (l *Lab) step(ctx context.Context, p *plan.Plan, session string, step plan.Step, s *server, note func(string, ...any)) *summary.Run {
	j := Job{Plan: p, Step: step, Session: session}
	t, err := l.target(ctx, p, s, step.Cell, note)
	j.Target = t
	if err != nil {
		return l.fail(ctx, j, fmt.Errorf("server %s: %w", s.v.Server.Name, err))
	}
	if s.data != step.DataKey {
		if d := p.DataFor(s.v.Server); d != nil {
			if err := l.load(ctx, j, d, s, note); err != nil {
				s.data = ""
				return l.fail(ctx, j, fmt.Errorf("load: %w", err))
			}
		} else if err := l.Pipeline.Prepare(ctx, j); err != nil {
			s.data = ""
			return l.fail(ctx, j, fmt.Errorf("prepare: %w", err))
		}
		s.data = step.DataKey
	}
	run, err := l.run(ctx, j)
	if err != nil {
		return l.fail(ctx, j, err)
	}
	return run
}

// run runs a step once: in one process (Pipeline), or, for shards: N > 1,
// as one sharded run of N (Shards).
func (l *Lab) run(ctx context.Context, j Job) (*summary.Run, error) {
	if j.Shards() > 1 {
		run, err := l.sharded(ctx, j)
		// The merged run is made from the shards' stored runs when read:
		// its thresholds are judged here, for the plan's verdict.
		if judge := j.Judge(); err == nil && run != nil && judge != nil {
			judge(run)
		}
		return run, err
	}
	return l.Pipeline.Run(ctx, j)
}

// fail stores the failed run of j (interrupted when ctx is cancelled).
func (l *Lab) fail(ctx context.Context, j Job, err error) *summary.Run {
	t := j.Target
	now := time.Now().UTC()
	run := &summary.Run{
		Schema: summary.Schema, Status: summary.StatusFailed, StartedAt: now, EndedAt: now,
		Workload: j.Step.Workload, Threads: j.Threads(), Plan: j.Ref(), Tags: map[string]string{},
		Target: summary.Target{Flavor: string(t.Flavor), Version: t.Version, DSN: t.MaskedDSN(), Sandbox: t.Sandbox},
		Error:  t.Mask(oneLine(err.Error())),
	}
	if ctx.Err() != nil {
		run.Status = summary.StatusInterrupted
	}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	if l.Stamp != nil {
		l.Stamp(run, t)
	}
	if _, err := l.Store.SaveRun(context.WithoutCancel(ctx), run); err != nil {
		run.Error += "; store: " + err.Error()
	}
	return run
}

// Tags that place a run in a plan session (beside summary.Run.Plan).
const (
	TagPlan    = "plan"
	TagCell    = "plan.cell"
	TagRound   = "plan.round"
	TagSession = "plan.session"
	// TagScale is the plan's --scale (ScaleTag): `report --plan` and
	// compare keep runs of one scale apart from another's
	// (report.TagPlanScale).
	TagScale = "plan.scale"
)

// LatestSession is the newest session of plan name in st, "" if none.
func LatestSession(ctx context.Context, st Store, name string) (string, error) {
	runs, err := st.List(ctx, store.Filter{Tags: map[string]string{TagPlan: name}, Limit: 1})
	if err != nil || len(runs) == 0 {
		return "", err
	}
	return runs[0].Tags[TagSession], nil
}

type nopObserver struct{}

func (nopObserver) Began(string, int)                                    {}
func (nopObserver) Noted(string)                                         {}
func (nopObserver) Ran(int, int, plan.Step, *summary.Run, time.Duration) {}

// oneLine folds whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
