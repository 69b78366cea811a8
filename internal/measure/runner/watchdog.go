package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
)

// stalledSince counts the workers whose running event began at or before
// cutoff (ns since t0).
func (r *run) stalledSince(cutoff int64) (n int) {
	for _, wk := range r.workers {
		if v := wk.inflight.Load(); v != 0 && v>>1-1 <= cutoff {
			n++
		}
	}
	return n
}

// probeTimeout is how long the stall watchdog waits for Config.Probe (at
// most Config.StallTimeout).
const probeTimeout = 5 * time.Second

// probe calls Config.Probe and sends whether the server answered within
// probeTimeout: with an error of its own (too many connections...) it did;
// timed out, or with its connection lost or refused, it did not. Without a
// Probe, it did not.
func (r *run) probe(answered chan<- bool) {
	if r.cfg.Probe == nil {
		answered <- false
		return
	}
	ctx, cancel := context.WithTimeout(r.wctx, r.probeTimeout())
	defer cancel()
	err := r.cfg.Probe(ctx)
	answered <- err == nil || (ctx.Err() == nil && r.classify(err).Kind != flavor.ConnLost)
}

func (r *run) probeTimeout() time.Duration { return min(probeTimeout, r.cfg.StallTimeout) }

// stall ends the run for Config.StallTimeout: n events have been running
// for longer, nothing ended meanwhile, and the server did not answer a
// probe. The workers are cancelled at once (no stop grace: they wait for
// a server that does not answer), which closes the run's connections
// (Config.Abort).
func (r *run) stall(n int) {
	r.fail(fmt.Errorf("%w for %v: no event ended while %d ran (--stall-timeout)", ErrStalled, r.cfg.StallTimeout, n))
	r.cancelWorkers()
}

// watchdog is the coordinator's side of Config.StallTimeout: lastProgress
// is when the workers last made a record, or the server last answered a
// probe; probing is set while a probe is under way. Workloads without a
// database (Detached) have their own time limits, so it is off for them.
type watchdog struct {
	r            *run
	after        int64 // Config.StallTimeout in ns, 0 when off
	lastProgress int64
	probing      bool
	probeBy      int64 // a Probe that ignores its context counts as no answer
	answered     chan bool
}

func (r *run) newWatchdog() watchdog {
	d := watchdog{r: r, after: int64(r.cfg.StallTimeout), answered: make(chan bool, 1)}
	if r.detached != nil {
		d.after = 0
	}
	return d
}

// check is called at every tick, with whether the workers made records
// since the last one. When events have been running for the timeout with
// nothing ended, it probes the server; it returns how many events are
// stalled once the probe went unanswered, else 0.
func (d *watchdog) check(now int64, progressed bool) (stalled int) {
	if progressed {
		d.lastProgress = now
	}
	if d.probing {
		ok, got := false, false
		select {
		case ok = <-d.answered:
			got = true
		default:
			got = now > d.probeBy
		}
		if got {
			d.probing = false
			if ok { // long statements, not a frozen server
				d.lastProgress = now
			} else if now-d.lastProgress >= d.after {
				return d.r.stalledSince(now - d.after)
			}
		}
		return 0
	}
	if d.after > 0 && now-d.lastProgress >= d.after && !d.r.stopped.Load() && d.r.stalledSince(now-d.after) > 0 {
		d.probing, d.probeBy = true, now+int64(d.r.probeTimeout()+time.Second)
		d.answered = make(chan bool, 1) // an abandoned probe answers into the old one
		go d.r.probe(d.answered)
	}
	return 0
}
