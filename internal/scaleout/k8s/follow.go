package k8s

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// Follow follows a sharded run its Job's pods write to a results store:
// the run's progress in the store and the Job's status, printed to Log as
// they change, until every shard ended, the Job failed or Timeout passed.
type Follow struct {
	Client *Client
	Store  *store.Store
	Job    string // the Job's name
	Key    string // the sharded run's key (--run-id)
	Shards int
	// ResultsKey is the Secret's key the pods read the store from (for
	// the error when the Job ends and the store has no run).
	ResultsKey string
	Timeout    time.Duration
	// Barrier is the shards' --barrier-timeout: a pod pending for longer
	// while shards wait at the start barrier (counted from the later of
	// the pod first seen pending and the first shard seen at the barrier)
	// ends the follow: the shards at the barrier give up by then. 0
	// leaves it to Timeout.
	Barrier time.Duration
	Every   time.Duration // how often to read the store and the Job
	Log     io.Writer     // progress lines, each "dbarena: ..."
}

// Run follows until the run ended and returns the merged run. The error
// says why following stopped otherwise; the run is returned with it when
// the store has one (a failed Job's shards).
func (f Follow) Run(ctx context.Context) (*summary.Run, error) {
	ns := f.Client.Namespace
	deadline := time.Now().Add(f.Timeout)
	last := ""
	jw := &jobWatch{cl: f.Client, name: f.Job, key: f.Key, w: f.Log, pods: map[string]string{}, pendingSince: map[string]time.Time{}}
	var barrierSince time.Time // when a shard was first seen at the barrier
	for {
		run, ended, line, waiting := f.step(ctx)
		started := run != nil
		if waiting > 0 && barrierSince.IsZero() {
			barrierSince = time.Now()
		}
		if line != last {
			fmt.Fprintln(f.Log, "dbarena: "+line)
			last = line
		}
		if !ended {
			js := jw.poll(ctx)
			if js.FailedJob || js.Complete {
				// The pods are gone: read what they left in the store.
				run, ended, _, _ = f.step(ctx)
			}
			switch {
			case ended:
			case js.FailedJob && run == nil:
				return nil, fmt.Errorf("Job %s/%s failed before any shard reached the results store: %s", ns, f.Job, jw.why(js))
			case js.FailedJob:
				return run, fmt.Errorf("Job %s/%s failed: %s; run %s is %s", ns, f.Job, jw.why(js), f.Key, run.Status)
			case js.Complete:
				return nil, fmt.Errorf("Job %s/%s completed but run %s has not ended in %s: does the Secret's %q key name this results store?",
					ns, f.Job, f.Key, f.Store.Location(), f.ResultsKey)
			case !started && f.Barrier > 0 && !barrierSince.IsZero():
				if why, d := jw.stuck(time.Now(), barrierSince, f.Barrier); why != "" {
					return nil, fmt.Errorf("%s; pending for %v while shards wait at the start barrier, longer than --barrier-timeout %v: run %s cannot start (the shards at the start barrier give up); Job %s/%s is left as it is (`kubectl delete job %s -n %s` removes it)",
						why, d.Round(time.Second), f.Barrier, f.Key, ns, f.Job, f.Job, ns)
				}
			}
		}
		if ended {
			return run, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("run %s did not end within --follow-timeout %v; `dbarena results show %s` reads it later", f.Key, f.Timeout, f.Key)
		}
		if err := poller.Sleep(ctx, f.Every); err != nil {
			return nil, fmt.Errorf("stopped following run %s; Job %s/%s goes on (`kubectl delete job %s -n %s` stops it)", f.Key, ns, f.Job, f.Job, ns)
		}
	}
}

// step reads the run's progress: the merged run once every shard stored
// one, whether every shard ended, a progress line, and how many shards
// wait at the start barrier.
func (f Follow) step(ctx context.Context) (*summary.Run, bool, string, int) {
	br, err := f.Store.ShardRun(ctx, f.Key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, "waiting for the first pod", 0
	}
	if err != nil {
		return nil, false, oneLine(err.Error()), 0
	}
	if br.StartAt.IsZero() {
		return nil, false, fmt.Sprintf("%d of %d shards at the start barrier", len(br.Members), f.Shards), len(br.Members)
	}
	run, err := shard.Load(ctx, f.Store, f.Key)
	if err != nil {
		return nil, false, oneLine(err.Error()), 0
	}
	ended := 0
	for _, s := range run.Shards {
		if s.Status != "missing" && s.Status != summary.StatusRunning {
			ended++
		}
	}
	line := fmt.Sprintf("%d of %d shards ended; %d events so far", ended, f.Shards, run.Totals.Events)
	return run, ended == f.Shards, line, 0
}

// jobWatch prints what the cluster says of the Job as it changes: failed
// pods and pods waiting on an error (the Job's failure ends the follow).
type jobWatch struct {
	cl        *Client
	name, key string
	w         io.Writer
	failed    int32
	pods      map[string]string // the last line printed per pod
	lastErr   string
	lastPod   string // the last pod trouble printed
	// pendingSince is when each pending pod was first seen pending, and
	// pending what the last poll said of them.
	pendingSince map[string]time.Time
	pending      map[string]string
}

// stuck is the first pod pending for longer than bound since it was first
// seen pending or since from, whichever is later, and for how long; ""
// when none is.
func (j *jobWatch) stuck(now, from time.Time, bound time.Duration) (string, time.Duration) {
	for _, pod := range slices.Sorted(maps.Keys(j.pending)) {
		since := j.pendingSince[pod]
		if from.After(since) {
			since = from
		}
		if d := now.Sub(since); d > bound {
			return j.pending[pod], d
		}
	}
	return "", 0
}

// poll reads the Job's status and prints what is new.
func (j *jobWatch) poll(ctx context.Context) Status {
	js, err := j.cl.JobStatus(ctx, j.name, j.key)
	if err == nil {
		err = js.PodsErr
	}
	if err != nil {
		if msg := oneLine(err.Error()); msg != j.lastErr && ctx.Err() == nil {
			fmt.Fprintf(j.w, "dbarena: %s\n", msg)
			j.lastErr = msg
		}
	}
	if js.Failed > j.failed {
		fmt.Fprintf(j.w, "dbarena: Job %s: %d pod(s) failed (%d active, %d succeeded)\n", j.name, js.Failed, js.Active, js.Succeeded)
		j.failed = js.Failed
	}
	if js.PodsErr == nil && err == nil {
		now := time.Now()
		for pod := range j.pendingSince {
			if _, ok := js.Pending[pod]; !ok {
				delete(j.pendingSince, pod)
			}
		}
		for pod := range js.Pending {
			if _, ok := j.pendingSince[pod]; !ok {
				j.pendingSince[pod] = now
			}
		}
		j.pending = js.Pending
	}
	for _, pod := range slices.Sorted(maps.Keys(js.Pods)) {
		if line := js.Pods[pod]; j.pods[pod] != line {
			j.pods[pod] = line
			j.lastPod = line
			fmt.Fprintf(j.w, "dbarena: %s\n", line)
		}
	}
	return js
}

// why is the Job's failure and the last pod trouble seen.
func (j *jobWatch) why(js Status) string {
	s := js.Reason
	if s == "" {
		s = "Failed"
	}
	if j.lastPod != "" {
		s += "; " + j.lastPod
	}
	return s
}

// oneLine folds s onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
