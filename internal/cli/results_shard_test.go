package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// shardedFixture makes a store file holding sharded run "sh-2": its start
// barrier and its two shards' runs.
func shardedFixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for i := range 2 {
		if err := st.JoinShard(ctx, "sh-2", i, 2, "h"); err != nil {
			t.Fatal(err)
		}
	}
	at, err := st.ShardStart(ctx, "sh-2", 0)
	if err != nil {
		t.Fatal(err)
	}
	h := hist.New()
	for i := range 100 {
		h.Record(time.Duration(i+1) * time.Millisecond)
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := st.ShardStarted(ctx, "sh-2", i, time.Duration(i)*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		r := &summary.Run{
			Schema: summary.Schema, Status: summary.StatusComplete, Workload: "oltp_read_write", Threads: 2,
			StartedAt: at, EndedAt: at.Add(time.Minute), RunKey: "sh-2", DurationS: 60,
			Shard:     &summary.Shard{Index: i, Count: 2},
			Target:    summary.Target{Flavor: "mariadb", Version: "10.11", DSN: "mysql://u:***@h/db"},
			Totals:    summary.Totals{Events: 100 + int64(i)},
			Tags:      map[string]string{"shard_of": "sh-2", "shard": itoa(int64(i))},
			Histogram: enc,
		}
		if _, err := st.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestResultsExportImportSharded: a sharded run used to be refused by
// export ("is not a run ID") and to lose its run id when its shards were
// imported; importing a file twice duplicated its runs. Now it moves whole
// and a second import stores nothing.
func TestResultsExportImportSharded(t *testing.T) {
	src := shardedFixture(t)
	dir := t.TempDir()
	out, dst := filepath.Join(dir, "sh.jsonl"), filepath.Join(dir, "dst.db")
	dbarena(t, "results", "export", "sh-2", "-o", out, "--results", src).mustSucceed(t)
	r := dbarena(t, "results", "import", out, "--results", dst).mustSucceed(t)
	if !strings.Contains(r.stdout, "Imported 2 runs") || !strings.Contains(r.stdout, "Sharded run sh-2 imported") {
		t.Errorf("import said %q", r.stdout)
	}
	shown := func(results string) map[string]any {
		r := dbarena(t, "results", "show", "sh-2", "--json", "--results", results).mustSucceed(t)
		var m map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "shards") // their run numbers differ
		return m
	}
	a, _ := json.Marshal(shown(src))
	b, _ := json.Marshal(shown(dst))
	if string(a) != string(b) {
		t.Errorf("sharded run changed on the way:\n%s\n%s", a, b)
	}
	if !strings.Contains(string(b), `"run_key":"sh-2"`) || !strings.Contains(string(b), `"status":"complete"`) {
		t.Errorf("imported sharded run: %s", b)
	}

	r = dbarena(t, "results", "import", out, "--results", dst).mustSucceed(t)
	if !strings.Contains(r.stdout, "Imported 0 runs") || !strings.Contains(r.stdout, "Skipped 2 runs already in the store") ||
		!strings.Contains(r.stdout, "Sharded run sh-2 already in the store") {
		t.Errorf("second import said %q", r.stdout)
	}
	list := dbarena(t, "results", "list", "--json", "--results", dst).mustSucceed(t)
	var rows []store.RunRow
	if err := json.Unmarshal([]byte(list.stdout), &rows); err != nil || len(rows) != 2 {
		t.Errorf("%d runs after importing twice (%v), want 2", len(rows), err)
	}

	// Another sharded run under that run id: refused, exit 2.
	other := shardedFixture(t)
	st, err := store.Open(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.JoinShard(context.Background(), "sh-3", 0, 3, "h"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out3 := filepath.Join(dir, "sh3.jsonl")
	dbarena(t, "results", "export", "sh-3", "-o", out3, "--results", other).mustSucceed(t)
	st2, _ := store.Open(context.Background(), dst)
	if err := st2.JoinShard(context.Background(), "sh-3", 0, 2, "x"); err != nil {
		t.Fatal(err)
	}
	st2.Close()
	r = dbarena(t, "results", "import", out3, "--results", dst)
	if r.code != ExitUsage || !strings.Contains(r.stderr, `sharded run "sh-3"`) {
		t.Errorf("import over another sh-3: exit %d %q", r.code, r.stderr)
	}
}
