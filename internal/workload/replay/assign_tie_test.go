package replay

import (
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
)

// TestAssignSameTick: a session that starts in the tick (a log's
// millisecond) another ended goes on its slot, after it, so it sees what
// the other did (the table it created) even at --speed max.
func TestAssignSameTick(t *testing.T) {
	b := &builder{flavor: "postgres"}
	b.add("a", 0, capture.KindConnect, "")
	b.add("a", 1, capture.KindQuery, "CREATE TABLE t (v int)")
	b.add("a", 2, capture.KindQuit, "")
	b.add("b", 2, capture.KindConnect, "")
	b.add("b", 2, capture.KindQuery, "INSERT INTO t VALUES (1)")
	b.add("b", 3, capture.KindQuit, "")
	c, err := Load(b.file(t))
	if err != nil {
		t.Fatal(err)
	}
	slots := assign(c.Sessions, 0, c.WholeSeconds)
	if len(slots) != 1 || len(slots[0].sessions) != 2 || slots[0].sessions[0].id != "a" {
		t.Errorf("%d slots, want one: a then b", len(slots))
	}
}

// TestAssignDuration: a session needs its connection until its last
// statement ends (start plus captured duration), so one starting before
// that runs beside it.
func TestAssignDuration(t *testing.T) {
	b := &builder{flavor: "mysql"}
	b.add("a", 0, capture.KindQuery, "CREATE TABLE t (v int)").DurUS = ptr(int64(5000))
	b.add("b", 3, capture.KindQuery, "SELECT 1")
	b.add("c", 5, capture.KindQuery, "INSERT INTO t VALUES (1)")
	c, err := Load(b.file(t))
	if err != nil {
		t.Fatal(err)
	}
	slots := assign(c.Sessions, 0, c.WholeSeconds)
	if len(slots) != 2 || len(slots[0].sessions) != 2 || slots[0].sessions[1].id != "c" {
		t.Errorf("%d slots, want a then c, and b", len(slots))
	}
}

// TestAssignWholeSeconds: in a log of whole seconds (MariaDB's slow log
// writes a statement's end), a session logged all within the second
// another's last statement was, after it, goes after it on its
// connection; one logged before it does not.
func TestAssignWholeSeconds(t *testing.T) {
	b := &builder{flavor: "mysql"}
	// a: CREATE ending at 1 s; b: INSERT ending at 1 s, logged after a's
	// (it started 200 µs before a ended); e: logged before a's CREATE.
	b.add("a", 0, capture.KindConnect, "")
	b.add("e", 990, capture.KindQuery, "SELECT 1").DurUS = ptr(int64(10000))
	b.add("a", 995, capture.KindQuery, "CREATE TABLE t (v int)").DurUS = ptr(int64(5000))
	b.evs = append(b.evs, capture.Event{Session: "b", TUS: 999800, Kind: capture.KindQuery, SQL: "INSERT INTO t VALUES (1)", DurUS: ptr(int64(200))})
	c, err := Load(b.file(t))
	if err != nil {
		t.Fatal(err)
	}
	if !c.WholeSeconds {
		t.Fatal("not seen as a log of whole seconds")
	}
	got := map[string]int{}
	slots := assign(c.Sessions, 0, c.WholeSeconds)
	for i, s := range slots {
		for j, x := range s.sessions {
			got[x.id] = i*10 + j
		}
	}
	if got["b"] != got["a"]+1 || got["e"]/10 == got["a"]/10 {
		t.Errorf("slots %v: want b right after a, e on another", got)
	}
}

func ptr[T any](v T) *T { return &v }

// TestAssignWholeSecondsMany: sessions logged after another's last
// statement within its second, their lines interleaved, all go after it
// on its connection (as a slow log's test traffic: the table's session,
// then the sessions that insert into it).
func TestAssignWholeSecondsMany(t *testing.T) {
	b := &builder{flavor: "mysql"}
	ev := func(s string, tus, dur int64, sql string) {
		b.evs = append(b.evs, capture.Event{Session: s, TUS: tus, Kind: capture.KindQuery, SQL: sql, DurUS: ptr(dur)})
	}
	ev("x", 0, 1_000_000, "CREATE TABLE t (v int)")
	ev("y", 999_900, 100, "SET @v = 1")
	ev("z", 999_950, 50, "SET @v = 2")
	ev("y", 999_990, 10, "INSERT INTO t VALUES (1)") // a second without "# Time": starts clamped
	ev("z", 999_990, 10, "INSERT INTO t VALUES (2)")
	c, err := Load(b.file(t))
	if err != nil {
		t.Fatal(err)
	}
	if !c.WholeSeconds {
		t.Fatal("not seen as a log of whole seconds")
	}
	slots := assign(c.Sessions, 0, c.WholeSeconds)
	if len(slots) != 1 || slots[0].sessions[0].id != "x" {
		t.Errorf("%d slots, want one, x first", len(slots))
	}
}
