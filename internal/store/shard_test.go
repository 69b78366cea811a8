package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestShardBarrier: no start until every shard joined; then one common
// start that every shard reads back; a used run id cannot be joined again.
func TestShardBarrier(t *testing.T) {
	for _, name := range backendNames {
		t.Run(name, func(t *testing.T) {
			s, _ := openBackend(t, name)
			ctx := context.Background()
			if err := s.JoinShard(ctx, "r1", 0, 3, "h0"); err != nil {
				t.Fatal(err)
			}
			if err := s.JoinShard(ctx, "r1", 2, 3, "h2"); err != nil {
				t.Fatal(err)
			}
			if err := s.JoinShard(ctx, "r1", 1, 4, "h1"); err == nil {
				t.Fatal("joined with another shard count")
			}
			if at, err := s.ShardStart(ctx, "r1", time.Second); err != nil || !at.IsZero() {
				t.Fatalf("start with 2 of 3 shards = %v, %v; want none yet", at, err)
			}
			if err := s.JoinShard(ctx, "r1", 1, 3, "h1"); err != nil {
				t.Fatal(err)
			}
			var (
				wg     sync.WaitGroup
				starts [3]time.Time
				errs   [3]error
			)
			for i := range starts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					starts[i], errs[i] = s.ShardStart(ctx, "r1", time.Duration(i+1)*time.Second)
				}()
			}
			wg.Wait()
			for i := range starts {
				if errs[i] != nil || starts[i].IsZero() || !starts[i].Equal(starts[0]) {
					t.Fatalf("starts %v, errors %v; want one common start", starts, errs)
				}
			}
			if err := s.ShardStarted(ctx, "r1", 1, 1500*time.Microsecond); err != nil {
				t.Fatal(err)
			}
			r, err := s.ShardRun(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if r.Count != 3 || !r.StartAt.Equal(starts[0]) || len(r.Members) != 3 {
				t.Fatalf("ShardRun = %+v", r)
			}
			if m := r.Members[1]; m.Index != 1 || m.Host != "h1" || !m.Started || m.SkewMS != 1.5 || r.Members[0].Started {
				t.Errorf("members %+v", r.Members)
			}
			if err := s.JoinShard(ctx, "r1", 0, 3, "h0"); !errors.Is(err, ErrShardStarted) {
				t.Errorf("join after the start = %v, want ErrShardStarted", err)
			}
			if _, err := s.ShardRun(ctx, "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("ShardRun(nope) = %v, want ErrNotFound", err)
			}
		})
	}
}
