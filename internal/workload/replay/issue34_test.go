package replay

import (
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestReplayMariaDBAffectedRows: a MySQL-family replay records the rows a
// write changed (issue 34 item 10: UPDATE and REPLACE recorded 0 rows),
// as text and as a server-side prepared statement.
func TestReplayMariaDBAffectedRows(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	setupDB(t, env, "rp_rows", 20)
	b := &builder{flavor: "mysql"}
	c := b.add("s1", 0, capture.KindConnect, "")
	c.DB = "rp_rows"
	b.add("s1", 1, capture.KindQuery, "UPDATE items SET v = v + 1 WHERE id IN (1, 2, 3)")
	// REPLACE of an existing row deletes and inserts: 2 each, 1 for a new one.
	b.add("s1", 2, capture.KindQuery, "/* app */ REPLACE INTO items VALUES (1, 5), (2, 6), (99, 7)")
	b.add("s1", 3, capture.KindQuery, "INSERT INTO seqlog (sess, k, kv) VALUES ('a', 1, 1), ('a', 2, 2)")
	b.add("s1", 4, capture.KindQuery, "DELETE FROM seqlog WHERE sess = 'nobody'")
	p := b.add("s1", 5, capture.KindPrepare, "UPDATE items SET v = ? WHERE id >= 11")
	p.Name = "up"
	e := b.add("s1", 6, capture.KindExecute, "UPDATE items SET v = ? WHERE id >= 11")
	e.Name, e.Params = "up", []*string{str("9")}
	b.add("s1", 7, capture.KindQuery, "SELECT id FROM items WHERE id <= 3")
	b.add("s1", 8, capture.KindQuit, "")
	run, res := replayRun(t, env, b.file(t), "--speed", "max")
	if res.Errors != 0 {
		t.Fatalf("errors: %v", res.ErrorsByCode)
	}
	for prefix, want := range map[string]int64{
		"update items set v = v + ?": 3, "replace into items": 5, "insert into seqlog": 2,
		"delete from seqlog": 0, "update items set v = ? where id >= ?": 5, "select id from items": 3,
	} {
		if ty := fpByText(t, run, prefix); ty.Rows != want || ty.Count != 1 {
			t.Errorf("%s: rows %d (count %d), want %d", prefix, ty.Rows, ty.Count, want)
		}
	}
}

// TestReplayCopyFromStdin: a capture holding COPY ... FROM STDIN (no rows:
// a log never has them) replays without waiting for them: the statement is
// skipped and counted (issue 34 item 10: the replay hung).
func TestReplayCopyFromStdin(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	setupDB(t, env, "rp_copy", 20)
	b := &builder{flavor: "postgres"}
	c := b.add("s1", 0, capture.KindConnect, "")
	c.DB = "rp_copy"
	b.add("s1", 1, capture.KindQuery, "COPY items (id, v) FROM STDIN")
	b.add("s1", 2, capture.KindQuery, "SELECT count(*) FROM items")
	b.add("s1", 2, capture.KindQuery, "COPY items TO STDOUT")
	e := b.add("s1", 3, capture.KindExecute, "copy items from stdin with (format csv)")
	e.Params = []*string{}
	b.add("s1", 4, capture.KindQuit, "")
	run, res := replayRun(t, env, b.file(t), "--speed", "max")
	if res.Errors != 0 {
		t.Fatalf("errors: %v", res.ErrorsByCode)
	}
	if run.Replay == nil || run.Replay.Skipped[skipCopy] != 2 || run.Replay.Sent != 2 {
		t.Fatalf("replay %+v", run.Replay)
	}
}

func TestChangesRows(t *testing.T) {
	for q, want := range map[string]bool{
		"UPDATE t SET a = 1":                     true,
		"  /* app */ replace into t values (1)":  true,
		"-- x\nDELETE FROM t;":                   true,
		"INSERT INTO t SELECT * FROM u":          true,
		"LOAD DATA INFILE 'x' INTO TABLE t":      true,
		"INSERT INTO t VALUES (1) RETURNING id":  false,
		"DELETE FROM t; SELECT 1":                false,
		"SELECT 1":                               false,
		"/*!40000 ALTER TABLE t DISABLE KEYS */": false,
		"CALL p()":                               false,
		"UPDATE":                                 true,
		"":                                       false,
	} {
		if got := changesRows(q); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}
