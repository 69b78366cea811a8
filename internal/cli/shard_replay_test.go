package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/results/store"
)

// shardReplaySessions is how many sessions writeShardCapture captures.
const shardReplaySessions = 12

// writeShardCapture writes a MariaDB capture of shardReplaySessions
// sessions, three open at once, each inserting two rows into
// shard_replay and reading them back.
func writeShardCapture(t *testing.T) string {
	t.Helper()
	var evs []capture.Event
	for s := range shardReplaySessions {
		id, t0 := fmt.Sprint(100+s), int64(s/3)*1000+int64(s%3)*10
		evs = append(evs,
			capture.Event{Session: id, TUS: t0, Kind: capture.KindConnect},
			capture.Event{Session: id, TUS: t0 + 100, Kind: capture.KindQuery, SQL: fmt.Sprintf("INSERT INTO shard_replay (s, v) VALUES (%d, 1)", s)},
			capture.Event{Session: id, TUS: t0 + 200, Kind: capture.KindQuery, SQL: fmt.Sprintf("INSERT INTO shard_replay (s, v) VALUES (%d, 2)", s)},
			capture.Event{Session: id, TUS: t0 + 300, Kind: capture.KindQuery, SQL: fmt.Sprintf("SELECT SUM(v) FROM shard_replay WHERE s = %d", s)},
			capture.Event{Session: id, TUS: t0 + 400, Kind: capture.KindQuit})
	}
	// The writer wants events in time order.
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].TUS < evs[j-1].TUS; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	return writeCaptureFile(t, "shard.capture", "mysql", evs)
}

// TestShardedReplay: a replay spread over three local shard processes
// (sessions by hash) does the work of one process: the same statements,
// fingerprint by fingerprint, and the same rows written.
func TestShardedReplay(t *testing.T) {
	needServers(t)
	db := openTarget(t, suite.mariadb.Target())
	defer db.Close()
	for _, q := range []string{"DROP TABLE IF EXISTS shard_replay", "CREATE TABLE shard_replay (s INT NOT NULL, v INT NOT NULL)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows := func() int64 {
		var n int64
		if err := db.QueryRow("SELECT COUNT(*) FROM shard_replay").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	file := writeShardCapture(t)
	results := filepath.Join(t.TempDir(), "r.db")
	common := []string{"run", "replay", "--capture", file, "--speed", "max", "--results", results, "--monitor", "none"}

	one := jsonPath(t)
	dbarena(t, append(common, "--json", one)...).mustSucceed(t)
	single := readSummary(t, one)
	if n := rows(); n != 2*shardReplaySessions {
		t.Fatalf("one process wrote %d rows, want %d", n, 2*shardReplaySessions)
	}

	js := jsonPath(t)
	dbarena(t, append(common, "--shards", "3", "--local", "--run-id", "replay-3", "--json", js)...).mustSucceed(t)
	merged := readSummary(t, js)
	if n := rows(); n != 4*shardReplaySessions {
		t.Errorf("the shards wrote %d rows, want %d", n-2*shardReplaySessions, 2*shardReplaySessions)
	}

	want := int64(3 * shardReplaySessions)
	if single.Status != "complete" || merged.Status != "complete" {
		t.Fatalf("status: one process %s, sharded %s", single.Status, merged.Status)
	}
	if single.Totals.Queries.Total != want || merged.Totals.Queries.Total != want || merged.Totals.Events != single.Totals.Events {
		t.Errorf("statements: one process %d (%d events), sharded %d (%d events); want %d",
			single.Totals.Queries.Total, single.Totals.Events, merged.Totals.Queries.Total, merged.Totals.Events, want)
	}
	if single.Totals.Errors+merged.Totals.Errors != 0 {
		t.Errorf("errors: one process %d, sharded %d", single.Totals.Errors, merged.Totals.Errors)
	}
	// Per fingerprint, the shards' own runs add up to the one process's.
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sum := map[string]int64{}
	busy := 0
	for _, s := range merged.Shards {
		r, err := st.Run(context.Background(), s.Run)
		if err != nil {
			t.Fatal(err)
		}
		if r.Totals.Events > 0 {
			busy++
		}
		for fp, ty := range r.PerType {
			sum[fp] += ty.Count
		}
	}
	if len(single.PerType) != 2 || len(sum) != len(single.PerType) || busy < 2 {
		t.Errorf("fingerprints: one process %d, shards %d; %d shards replayed sessions", len(single.PerType), len(sum), busy)
	}
	for fp, ty := range single.PerType {
		if sum[fp] != ty.Count || merged.PerType[fp].Count != ty.Count {
			t.Errorf("%s: one process %d, shards add up to %d, merged %d", fp, ty.Count, sum[fp], merged.PerType[fp].Count)
		}
	}
}
