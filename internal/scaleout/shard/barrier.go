package shard

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// Barrierer is the part of the results store the start barrier uses
// (*store.Store implements it).
type Barrierer interface {
	JoinShard(ctx context.Context, key string, index, count int, host string) error
	ShardStart(ctx context.Context, key string, lead time.Duration) (time.Time, error)
	ShardStarted(ctx context.Context, key string, index int, skew time.Duration) error
	ShardRun(ctx context.Context, key string) (*store.ShardRun, error)
}

// Barrier is one shard's place at its run's start barrier.
type Barrier struct {
	St    Barrierer
	Key   string
	Index int
	Count int
	Host  string
	// Timeout bounds the wait for the other shards (DefaultTimeout if 0).
	Timeout time.Duration
	// Poll is the time between two looks at the store (DefaultPoll if 0).
	Poll time.Duration
	// Lead is how far ahead of the moment the last shard is seen the
	// common start is set (DefaultLead if 0): more than Poll plus a
	// store round trip, so that every shard reads it before it passes.
	Lead time.Duration
	// Waiting, if set, is called with the shards not ready yet, at most
	// every few seconds while the barrier waits (progress).
	Waiting func(missing []int)

	// Skew is how late this shard's clock started after the common start,
	// set once Wait returned nil.
	Skew time.Duration
	// StartAt is the common start.
	StartAt time.Time
}

// Defaults of Barrier's timings.
const (
	DefaultTimeout = 10 * time.Minute
	DefaultPoll    = 100 * time.Millisecond
	DefaultLead    = time.Second
	waitingEvery   = 5 * time.Second
)

// Join registers the shard at the barrier. Call it before connecting, so
// that a used run id or a wrong shard count fails at once.
func (b *Barrier) Join(ctx context.Context) error {
	return b.St.JoinShard(ctx, b.Key, b.Index, b.Count, b.Host)
}

// Wait waits until every shard joined, then until the common start (set by
// the first shard that sees them all), records how late this shard
// started and returns. It is runner.Config.Barrier.
func (b *Barrier) Wait(ctx context.Context) error {
	timeout, poll, lead := b.Timeout, b.Poll, b.Lead
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if poll <= 0 {
		poll = DefaultPoll
	}
	if lead <= 0 {
		lead = DefaultLead
	}
	deadline := time.Now().Add(timeout)
	lastSaid := time.Now()
	for {
		at, err := b.St.ShardStart(ctx, b.Key, lead)
		if err != nil {
			return err
		}
		if !at.IsZero() {
			b.StartAt = at
			break
		}
		if time.Now().After(deadline) {
			missing, _ := b.missing(ctx)
			return fmt.Errorf("start barrier of run %q: shards %s not ready after %v", b.Key, formatInts(missing), timeout)
		}
		if b.Waiting != nil && time.Since(lastSaid) >= waitingEvery {
			if missing, err := b.missing(ctx); err == nil {
				b.Waiting(missing)
			}
			lastSaid = time.Now()
		}
		if err := poller.Sleep(ctx, poll); err != nil {
			return err
		}
	}
	if err := poller.Sleep(ctx, time.Until(b.StartAt)); err != nil {
		return err
	}
	b.Skew = time.Since(b.StartAt)
	return b.St.ShardStarted(ctx, b.Key, b.Index, b.Skew)
}

// missing lists the shards that have not joined.
func (b *Barrier) missing(ctx context.Context) ([]int, error) {
	r, err := b.St.ShardRun(ctx, b.Key)
	if err != nil {
		return nil, err
	}
	joined := make([]bool, b.Count)
	for _, m := range r.Members {
		if m.Index >= 0 && m.Index < b.Count {
			joined[m.Index] = true
		}
	}
	var out []int
	for i, ok := range joined {
		if !ok {
			out = append(out, i)
		}
	}
	return out, nil
}

func formatInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
