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
	slots := assign(c.Sessions, 0)
	if len(slots) != 1 || len(slots[0].sessions) != 2 || slots[0].sessions[0].id != "a" {
		t.Errorf("%d slots, want one: a then b", len(slots))
	}
}
