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

// TestFailShardRun: the coordinator's verdict is stored on the sharded
// run, joined or not yet.
func TestFailShardRun(t *testing.T) {
	for _, name := range backendNames {
		t.Run(name, func(t *testing.T) {
			s, _ := openBackend(t, name)
			ctx := context.Background()
			if err := s.JoinShard(ctx, "r1", 0, 2, "h0"); err != nil {
				t.Fatal(err)
			}
			if err := s.FailShardRun(ctx, "r1", 2, "shard 1 stopped answering"); err != nil {
				t.Fatal(err)
			}
			if err := s.FailShardRun(ctx, "r2", 3, "shard 0 stopped answering"); err != nil { // none joined
				t.Fatal(err)
			}
			for key, want := range map[string]string{"r1": "shard 1 stopped answering", "r2": "shard 0 stopped answering"} {
				r, err := s.ShardRun(ctx, key)
				if err != nil || r.Error != want {
					t.Errorf("ShardRun(%s) = %+v, %v; want error %q", key, r, err, want)
				}
			}
			if r, _ := s.ShardRun(ctx, "r2"); r.Count != 3 || len(r.Members) != 0 {
				t.Errorf("r2 = %+v", r)
			}
		})
	}
}
