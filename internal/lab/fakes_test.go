package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
)

// world is a lab on fakes that writes what happens, in order, to log.
type world struct {
	log   []string
	runs  []*summary.Run // the store, oldest first
	notes []string
	began []string
	lines []string // Ran: "i/n cell round status"

	// Faults: keyed by sandbox name, cell ID or "" for every call.
	startErr   map[string]error
	restartErr error
	dropErr    error
	prepareErr func(j Job) error
	runErr     func(j Job) error
	// onRun, if set, is called before a run is made (to cancel the context).
	onRun func(j Job)
	ctx   context.Context // the context Run is called with, for onRun
}

func newWorld() *world { return &world{startErr: map[string]error{}} }

func (w *world) lab() *Lab {
	return &Lab{Store: (*fakeStore)(w), Sandboxes: (*fakeSandboxes)(w), Pipeline: (*fakePipeline)(w), Observer: (*recorder)(w)}
}

// mustParse parses a plan from YAML text.
func mustParse(t testing.TB, text string) *plan.Plan {
	t.Helper()
	p, errs := plan.Parse("p.yaml", []byte(text))
	if len(errs) > 0 {
		t.Fatalf("plan: %v", errs)
	}
	return p
}

// short names a step for the log: "server threads=N rR".
func short(j Job) string {
	c := j.Step.CoordMap()
	s := c["server"]
	for _, k := range []string{"engine", "threads", "server.x"} {
		if v, ok := c[k]; ok {
			s += " " + k + "=" + v
		}
	}
	return fmt.Sprintf("%s r%d", s, j.Step.Round)
}

type fakeStore world

func (s *fakeStore) List(_ context.Context, f store.Filter) ([]store.RunRow, error) {
	var out []store.RunRow
	for i := len(s.runs) - 1; i >= 0; i-- {
		r := s.runs[i]
		match := true
		for k, v := range f.Tags {
			match = match && r.Tags[k] == v
		}
		if match {
			out = append(out, store.RunRow{ID: r.ID, Status: r.Status, Workload: r.Workload, Tags: r.Tags})
		}
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, nil
}

func (s *fakeStore) SaveRun(_ context.Context, run *summary.Run) (int64, error) {
	run.ID = int64(len(s.runs) + 1)
	s.runs = append(s.runs, run)
	return run.ID, nil
}

type fakeSandboxes world

// Start logs "start NAME SETTINGS" (and " tls" for a TLS sandbox, whose CA
// is /ca/NAME.pem).
func (f *fakeSandboxes) Start(_ context.Context, name string, s plan.Server, settings []plan.Param) (target.Target, string, error) {
	var kv []string
	for _, p := range settings {
		kv = append(kv, p.Key+"="+p.Value)
	}
	line := strings.TrimSpace("start " + name + " " + strings.Join(kv, ","))
	ca := ""
	if s.TLS {
		line, ca = line+" tls", "/ca/"+name+".pem"
	}
	f.log = append(f.log, line)
	if err := f.startErr[name]; err != nil {
		return target.Target{}, "", err
	}
	return target.Target{Flavor: target.Flavor(s.Flavor), Host: "127.0.0.1", Port: 3306, Sandbox: name}, ca, nil
}

func (f *fakeSandboxes) Restart(_ context.Context, name string) error {
	f.log = append(f.log, "restart "+name)
	return f.restartErr
}

func (f *fakeSandboxes) Stop(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f.log = append(f.log, "stop "+name)
	return nil
}

func (f *fakeSandboxes) DropCaches() error {
	f.log = append(f.log, "drop-caches")
	return f.dropErr
}

type fakePipeline world

func (f *fakePipeline) Prepare(_ context.Context, j Job) error {
	f.log = append(f.log, "prepare "+short(j))
	if f.prepareErr != nil {
		return f.prepareErr(j)
	}
	return nil
}

func (f *fakePipeline) Run(ctx context.Context, j Job) (*summary.Run, error) {
	f.log = append(f.log, "run "+short(j))
	if f.onRun != nil {
		f.onRun(j)
	}
	if f.runErr != nil {
		if err := f.runErr(j); err != nil {
			return nil, err
		}
	}
	run := &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: j.Step.Workload,
		Threads: j.Threads(), Plan: j.Ref(), Tags: map[string]string{}, StartedAt: time.Now()}
	if ctx.Err() != nil {
		run.Status = summary.StatusInterrupted
	}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	_, err := (*fakeStore)(f).SaveRun(ctx, run)
	return run, err
}

type recorder world

func (r *recorder) Began(session string, complete int) {
	r.began = append(r.began, fmt.Sprintf("%s %d", session, complete))
}

func (r *recorder) Noted(msg string) { r.notes = append(r.notes, msg) }

func (r *recorder) Ran(i, n int, step plan.Step, run *summary.Run, _ time.Duration) {
	r.lines = append(r.lines, fmt.Sprintf("%d/%d %s r%d %s", i+1, n, step.CoordMap()["server"], step.Round, run.Status))
}

// statuses counts the stored runs by status.
func (w *world) statuses() map[string]int {
	n := map[string]int{}
	for _, r := range w.runs {
		n[r.Status]++
	}
	return n
}

// logged keeps the log lines that start with one of prefixes.
func (w *world) logged(prefixes ...string) []string {
	var out []string
	for _, l := range w.log {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(l, p) }) {
			out = append(out, l)
		}
	}
	return out
}

var errBoom = errors.New("boom")
