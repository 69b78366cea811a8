package store

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestExportImportSharded: a sharded run exported whole (its barrier and
// its shards' runs) is imported under its run id; importing the same file
// again stores nothing new; a run id the store uses for another run is
// refused, storing nothing.
func TestExportImportSharded(t *testing.T) {
	ctx := context.Background()
	src, _ := openBackend(t, "sqlite")
	for i := range 2 {
		if err := src.JoinShard(ctx, "s-1", i, 2, "h"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.ShardStart(ctx, "s-1", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := src.ShardStarted(ctx, "s-1", 1, 2*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 2 {
		r := testRun(i, 2)
		r.RunKey = "s-1"
		r.Tags = map[string]string{"shard_of": "s-1", "shard": string(rune('0' + i))}
		ids = append(ids, save(t, src, r))
	}
	want, err := src.ShardRun(ctx, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := src.ExportSharded(ctx, append(ids, ids[0]), []string{"s-1"}, &buf); err != nil {
		t.Fatal(err)
	}
	for _, name := range backendNames {
		t.Run("into "+name, func(t *testing.T) {
			dst, _ := openBackend(t, name)
			save(t, dst, testRun(7, 1))
			res, err := dst.Import(ctx, bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			// The run listed twice in the file is stored once.
			if len(res.IDs) != 2 || len(res.Skipped) != 0 || !slices.Equal(res.Sharded, []string{"s-1"}) {
				t.Fatalf("first import: %+v", res)
			}
			got, err := dst.ShardRun(ctx, "s-1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Count != 2 || !got.StartAt.Equal(want.StartAt) || len(got.Members) != 2 ||
				got.Members[1].SkewMS != want.Members[1].SkewMS || !got.Members[1].Started || got.Members[0].Host != "h" {
				t.Errorf("imported barrier %+v, want %+v", got, want)
			}
			for i, id := range res.IDs {
				if r := mustRun(t, dst, id); r.Tags["shard_of"] != "s-1" || r.RunKey != "s-1" || !r.StartedAt.Equal(testRun(i, 0).StartedAt) {
					t.Errorf("imported run %d: key %q tags %v", id, r.RunKey, r.Tags)
				}
			}
			again, err := dst.Import(ctx, bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if len(again.IDs) != 0 || !slices.Equal(again.Skipped, []int64{res.IDs[0], res.IDs[1], res.IDs[0]}) ||
				!slices.Equal(again.ShardedSkipped, []string{"s-1"}) {
				t.Errorf("second import: %+v, want everything skipped (runs %v)", again, res.IDs)
			}
			if rows, _ := dst.List(ctx, Filter{}); len(rows) != 3 {
				t.Errorf("%d runs after importing twice, want 3", len(rows))
			}

			// Another sharded run under the same run id: refused whole.
			other, _ := openBackend(t, name)
			if err := other.JoinShard(ctx, "s-1", 0, 3, "x"); err != nil {
				t.Fatal(err)
			}
			if _, err := other.Import(ctx, bytes.NewReader(buf.Bytes())); !errors.Is(err, ErrConflict) {
				t.Errorf("import over another s-1 = %v, want ErrConflict", err)
			}
			if rows, _ := other.List(ctx, Filter{}); len(rows) != 0 {
				t.Errorf("refused import stored %d runs", len(rows))
			}
		})
	}
}

// TestImportShardRunsByNumber: shard runs exported by number (no barrier
// in the file) keep their sharded run's id: Import makes the barrier from
// them, or joins the one the store has.
func TestImportShardRunsByNumber(t *testing.T) {
	ctx := context.Background()
	src, _ := openBackend(t, "sqlite")
	var ids []int64
	for i := range 2 {
		r := testRun(i, 1)
		r.RunKey = "old-2"
		r.Shard = &summary.Shard{Index: i, Count: 2}
		r.Host.Hostname = "h" + string(rune('0'+i))
		r.Tags = map[string]string{"shard_of": "old-2", "shard": string(rune('0' + i))}
		ids = append(ids, save(t, src, r))
	}
	if err := src.JoinShard(ctx, "old-2", 0, 2, "h0"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := src.Export(ctx, ids, &buf); err != nil {
		t.Fatal(err)
	}
	dst, _ := openBackend(t, "sqlite")
	res, err := dst.Import(ctx, bytes.NewReader(buf.Bytes()))
	if err != nil || len(res.IDs) != 2 || !slices.Equal(res.Sharded, []string{"old-2"}) {
		t.Fatalf("Import = %+v, %v", res, err)
	}
	br, err := dst.ShardRun(ctx, "old-2")
	if err != nil || br.Count != 2 || len(br.Members) != 2 || br.Members[1].Host != "h1" || !br.StartAt.Equal(testRun(0, 0).StartedAt) {
		t.Fatalf("implied barrier %+v, %v", br, err)
	}
	// Back into the store they came from: nothing new, no conflict with
	// its own barrier.
	res, err = src.Import(ctx, bytes.NewReader(buf.Bytes()))
	if err != nil || len(res.IDs) != 0 || len(res.Skipped) != 2 || len(res.Sharded) != 0 {
		t.Fatalf("re-import into the source = %+v, %v", res, err)
	}
}
