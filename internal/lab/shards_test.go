package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// fakeShards runs a sharded step as its shards' runs in the fake store,
// each tagged as a shard of its run (as `dbarena run --shard` stores
// them); degrade makes shard 1 of the named steps' first attempt abort,
// running leaves it running (its process alive).
type fakeShards struct {
	w       *world
	keys    map[string]int // sharded runs in the store: key -> shards
	degrade map[string]bool
	running map[string]bool
}

func (f *fakeShards) Run(ctx context.Context, j Job, key string) (*summary.Run, error) {
	f.w.log = append(f.w.log, fmt.Sprintf("shards %d %s %s", j.Shards(), short(j), key))
	f.keys[key] = j.Shards()
	for i := range j.Shards() {
		r := &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: j.Step.Workload,
			Plan: j.Ref(), Tags: map[string]string{shard.TagRun: key, shard.TagIndex: strconv.Itoa(i)}, StartedAt: time.Now(),
			Shard: &summary.Shard{Index: i, Count: j.Shards()}, RunKey: key}
		if i == 1 && f.degrade[short(j)] && strings.HasSuffix(key, "-1") {
			r.Status = summary.StatusAborted
		}
		if i == 1 && f.running[short(j)] && strings.HasSuffix(key, "-1") {
			r.Status = summary.StatusRunning
		}
		for _, kv := range j.Tags() {
			r.Tags[kv[0]] = kv[1]
		}
		if _, err := (*fakeStore)(f.w).SaveRun(ctx, r); err != nil {
			return nil, err
		}
	}
	return f.Load(ctx, key)
}

// Load merges the stored shard runs of key, as shard.Load does.
func (f *fakeShards) Load(ctx context.Context, key string) (*summary.Run, error) {
	n, ok := f.keys[key]
	if !ok {
		return nil, fmt.Errorf("sharded run %s: %w", key, store.ErrNotFound)
	}
	runs := map[int]*summary.Run{}
	for _, r := range f.w.runs {
		if r.Tags[shard.TagRun] == key {
			i, _ := strconv.Atoi(r.Tags[shard.TagIndex])
			runs[i] = r
		}
	}
	return shard.Merge(&store.ShardRun{Key: key, Count: n}, runs)
}

const shardedPlan = `name: sp
servers: [{name: a, flavor: mariadb}]
workloads:
  - name: w1
    shards: 2
  - w2
axes:
  threads: [2]
rounds: 2
warmup: 0
duration: 1s
`

// TestShardedSteps: a step of shards: 2 runs as one sharded run (not
// through the pipeline), under a run id of its session and step; resume
// skips a step whose sharded run is complete and reruns a degraded one
// under a fresh run id.
func TestShardedSteps(t *testing.T) {
	p := mustParse(t, shardedPlan)
	w := newWorld()
	fs := &fakeShards{w: w, keys: map[string]int{}, degrade: map[string]bool{"a threads=2 r1": true}}
	l := w.lab()
	l.Shards = fs
	res, err := l.Run(context.Background(), p, Options{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Session: "s1", Ran: 4, Failed: 1}); res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	steps := p.Schedule()
	k := func(i, attempt int) string { return shardKey("sp", "s1", steps[i], attempt) }
	equal(t, "log", w.logged("run", "shards"), []string{
		"shards 2 a threads=2 r1 " + k(0, 1), "shards 2 a threads=2 r2 " + k(1, 1),
		"run a threads=2 r1", "run a threads=2 r2",
	})
	equal(t, "lines", w.lines, []string{"1/4 a r1 degraded", "2/4 a r2 complete", "3/4 a r1 complete", "4/4 a r2 complete"})

	w.log = nil
	res, err = l.Run(context.Background(), p, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Session: "s1", Ran: 1, Skipped: 3}); res != want {
		t.Errorf("resume: result %+v, want %+v", res, want)
	}
	equal(t, "resume log", w.logged("run", "shards"), []string{"shards 2 a threads=2 r1 " + k(0, 2)})

	w.log = nil
	res, err = l.Run(context.Background(), p, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Session: "s1", Skipped: 4}); res != want || len(w.logged("run", "shards")) != 0 {
		t.Errorf("complete session: result %+v, log %q", res, w.log)
	}

	// Without a ShardRunner the step fails, stored with its error.
	w = newWorld()
	res, err = w.lab().Run(context.Background(), p, Options{Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 2 || w.runs[0].Status != summary.StatusFailed || !strings.Contains(w.runs[0].Error, "runs no shards") {
		t.Errorf("no shard runner: result %+v, first run %s %q", res, w.runs[0].Status, w.runs[0].Error)
	}
}

// TestResumeShardsRunning: a resume while a sharded step's earlier
// attempt still runs refuses, naming it, rather than starting the step
// again beside it.
func TestResumeShardsRunning(t *testing.T) {
	p := mustParse(t, shardedPlan)
	w := newWorld()
	fs := &fakeShards{w: w, keys: map[string]int{}, running: map[string]bool{"a threads=2 r2": true}}
	l := w.lab()
	l.Shards = fs
	if _, err := l.Run(context.Background(), p, Options{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	w.log = nil
	_, err := l.Run(context.Background(), p, Options{Resume: true})
	key := shardKey("sp", "s1", p.Schedule()[1], 1)
	if !errors.Is(err, ErrShardsRunning) || !strings.Contains(err.Error(), "sharded run "+key+" of this session is still running: shards 1 (run ") {
		t.Errorf("resume: %v, want %s still running", err, key)
	}
	if got := w.logged("run", "shards"); len(got) != 0 {
		t.Errorf("resume ran %q", got)
	}
}

func TestShardKey(t *testing.T) {
	p := mustParse(t, shardedPlan)
	steps := p.Schedule()
	seen := map[string]bool{}
	long := strings.Repeat("n", 64)
	for _, name := range []string{"sp", long} {
		for _, session := range []string{"20260101T000000Z", "odd session/name", strings.Repeat("s", 100)} {
			for i := range steps {
				for attempt := 1; attempt <= 2; attempt++ {
					key := shardKey(name, session, steps[i], attempt)
					if err := shard.CheckKey(key); err != nil {
						t.Fatalf("shardKey: %v", err)
					}
					if seen[key] {
						t.Errorf("key %s given twice", key)
					}
					seen[key] = true
				}
			}
		}
	}
	if k := shardKey("sp", "s1", steps[0], 1); k != shardKey("sp", "s1", steps[0], 1) || !strings.HasPrefix(k, "plan-sp-s1-") {
		t.Errorf("key %s: not stable, or not named after its plan and session", k)
	}
}

// splitToy is a toy that splits its rows in shards.
type splitToy struct{ toy }

func (s *splitToy) Shard(i, n int) error {
	if s.rows < n {
		return fmt.Errorf("--table-size %d: fewer rows than shards (%d)", s.rows, n)
	}
	return nil
}

func TestCheckShards(t *testing.T) {
	split := workload.NewRegistry(func() workload.Workload { return &splitToy{} })
	const head = "name: c\nservers: [{name: a, flavor: mariadb}]\nwarmup: 0\n"
	for _, tc := range []struct {
		reg  *workload.Registry
		plan string
		want string // "" for none
	}{
		{split, head + "shards: 2\nworkloads: [toy]\naxes:\n  threads: [2, 4]\n", ""},
		{split, head + "workloads: [toy]\n", ""},
		{toys, head + "workloads:\n  - name: toy\n    shards: 2\naxes:\n  threads: [2]\n",
			"p.yaml:6: shards 2: workload toy: cannot be split in shards"},
		{split, head + "shards: 3\nworkloads: [toy]\naxes:\n  threads: [4, 2]\n",
			"p.yaml:4: shards 3: workload toy: --threads 2: fewer threads than --shards 3; each shard needs one"},
		{split, head + "shards: 2\nworkloads: [toy]\n",
			"p.yaml:4: shards 2: workload toy: --threads 1: fewer threads than --shards 2"},
		{split, head + "shards: 2\nworkloads:\n  - {name: toy, params: {table-size: 1}}\naxes:\n  threads: [2]\n",
			"p.yaml:4: shards 2: workload toy: --table-size 1: fewer rows than shards (2)"},
		{split, head + "shards: 2\nworkloads: [toy]\naxes:\n  threads: [2]\n  table-size: [5, 1]\n",
			"p.yaml:4: shards 2: workload toy: table-size 1: --table-size 1: fewer rows than shards (2)"},
	} {
		p := mustParse(t, tc.plan)
		var got []string
		for _, e := range Check(p, tc.reg) {
			got = append(got, e.Error())
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%q: %q", tc.plan, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%q:\n got %q\nwant %q", tc.plan, got, tc.want)
		}
	}
}

// TestStepData: a shard gets the step as data and makes of it the job the
// lab's pipeline runs: the same workload parameters, runner settings,
// tags and place in the plan; its target without a password.
func TestStepData(t *testing.T) {
	p := mustParse(t, `name: ra
servers: [{name: a, flavor: postgres}]
shards: 2
workloads:
  - {name: toy, params: {table-size: 50, mysql-storage-engine: MyISAM}, jobs: 2}
axes:
  threads: [4]
  connect: [every=3]
  tls: [on]
warmup: 2s
duration: 1.5
report_interval: 500ms
`)
	step := p.Schedule()[0]
	j := Job{Plan: p, Step: step, Session: "s", Target: target.Target{Flavor: target.FlavorPostgres, Host: "127.0.0.1", Port: 5433,
		User: "dbarena", Password: "pw&secret", Database: "sbtest", Sandbox: "lab-a",
		Params: map[string]string{"sslmode": "verify-full", "sslrootcert": "/ca/a.pem"}}}
	d, pw := j.Data("results.db")
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "pw&secret") || pw != "pw&secret" {
		t.Errorf("the password must go apart: %s, %q", b, pw)
	}
	back, err := ParseStepData(string(b))
	if err != nil {
		t.Fatal(err)
	}
	got := back.Job(j.Target)
	if !reflect.DeepEqual(got.Step, j.Step) || got.Session != "s" || back.Results != "results.db" {
		t.Errorf("step %+v, session %q, results %q", got.Step, got.Session, back.Results)
	}
	if !reflect.DeepEqual(got.Ref(), j.Ref()) || !reflect.DeepEqual(got.Tags(), j.Tags()) {
		t.Errorf("ref %+v tags %v; want %+v %v", got.Ref(), got.Tags(), j.Ref(), j.Tags())
	}
	w1, w2 := &toy{}, &toy{}
	c1, err1 := j.RunConfig(w1)
	c2, err2 := got.RunConfig(w2)
	c1.WarmupUntil, c2.WarmupUntil = nil, nil
	if err1 != nil || err2 != nil || !reflect.DeepEqual(c1, c2) || c2.Threads != 4 || c2.Jobs != 2 || c2.Duration != 1500*time.Millisecond {
		t.Errorf("config %+v (%v); want %+v (%v)", c2, err2, c1, err1)
	}
	if _, err := ParseStepData(`{"plan":{}}`); err == nil {
		t.Error("an empty step is accepted")
	}
	arg, pw := j.TargetArg()
	if arg != "postgres://dbarena@127.0.0.1:5433/sbtest?sslmode=verify-full&sslrootcert=%2Fca%2Fa.pem" || pw != "pw&secret" {
		t.Errorf("TLS target %q, password %q", arg, pw)
	}
	tb, err := target.ParseDSN(arg)
	if err != nil || tb.Params["sslrootcert"] != "/ca/a.pem" || tb.Password != "" || d.Target != arg {
		t.Errorf("target reads back as %+v, %v (data %q)", tb, err, d.Target)
	}
	j.Step.TLS = false
	if arg, pw := j.TargetArg(); arg != "sandbox:lab-a" || pw != "" {
		t.Errorf("sandbox target %q, password %q", arg, pw)
	}
}
