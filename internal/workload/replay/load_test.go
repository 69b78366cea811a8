package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
)

func TestAssignAndShard(t *testing.T) {
	// Sessions (first event, last statement, logged quit): a (0,8,10),
	// b (5,12,15), c (9,18,20), d (16,25,30). A session needs its
	// connection until its last statement, not until its quit is logged
	// (PostgreSQL logs it when the backend exits): c follows a although
	// a's quit comes later, so two connections, not three.
	b := &builder{flavor: "mysql"}
	for _, s := range []struct {
		id               string
		start, last, end int64
	}{{"a", 0, 8, 10}, {"b", 5, 12, 15}, {"c", 9, 18, 20}, {"d", 16, 25, 30}} {
		b.add(s.id, s.start, capture.KindConnect, "")
		b.add(s.id, s.last, capture.KindQuery, "SELECT "+s.id)
		b.add(s.id, s.end, capture.KindQuit, "")
	}
	c, err := Load(b.file(t))
	if err != nil {
		t.Fatal(err)
	}
	slots := assign(c.Sessions, 0, c.WholeSeconds)
	var got []string
	for _, s := range slots {
		var ids []string
		for _, x := range s.sessions {
			ids = append(ids, x.id)
		}
		got = append(got, strings.Join(ids, ""))
	}
	if fmt.Sprint(got) != "[ac bd]" {
		t.Errorf("slots %v, want [ac bd]", got)
	}
	if n := len(assign(c.Sessions, 1, c.WholeSeconds)); n != 1 {
		t.Errorf("--sessions 1: %d slots", n)
	}
	if c.Statements != 4 || len(c.FPs) != 4 {
		t.Errorf("statements %d fingerprints %d", c.Statements, len(c.FPs))
	}

	// Two shards split the sessions between them.
	seen := map[string]int{}
	for i := range 2 {
		wl := New().(*Workload)
		wl.SetCapture(c)
		if err := wl.Shard(i, 2); err != nil {
			t.Fatal(err)
		}
		for _, s := range wl.mine() {
			seen[s.id]++
		}
	}
	if len(seen) != 4 || seen["a"]+seen["b"]+seen["c"]+seen["d"] != 4 {
		t.Errorf("shards: %v", seen)
	}
}

func TestLoadErrors(t *testing.T) {
	b := &builder{flavor: "postgres"}
	e := b.add("s", 0, capture.KindExecute, "")
	e.Name = "never"
	if _, err := Load(b.file(t)); err == nil || !strings.Contains(err.Error(), `:2: execute of "never"`) {
		t.Errorf("execute of an unknown statement: %v", err)
	}
}

func TestInline(t *testing.T) {
	one, quote := "1", "it's"
	for _, c := range []struct {
		q    string
		pg   bool
		want string
	}{
		{"SELECT a FROM t WHERE id = $1 AND s = $2 AND x = '$1'", true, "SELECT a FROM t WHERE id = '1' AND s = 'it''s' AND x = '$1'"},
		{"SELECT a FROM t WHERE id = ? AND s = ? AND x = '?' AND y = ?", false, "SELECT a FROM t WHERE id = '1' AND s = 'it''s' AND x = '?' AND y = NULL"},
	} {
		if got := inline(c.q, []*string{&one, &quote}, c.pg); got != c.want {
			t.Errorf("inline(%q)\n got %q\nwant %q", c.q, got, c.want)
		}
	}
}

// TestSpeedOutOfRange: a slow --speed over a long capture would overflow
// the schedule; it is refused naming the flag (issue 33, item 9).
func TestSpeedOutOfRange(t *testing.T) {
	b := &builder{flavor: "mysql"}
	b.add("s", 0, capture.KindQuery, "SELECT 1")
	b.add("s", 300_000_000_000, capture.KindQuery, "SELECT 2") // ms: 9.5 years
	wl := New().(*Workload)
	wl.file, wl.speedFlag = b.file(t), "0.0001"
	errs := wl.Validate()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "--speed 0.0001") {
		t.Fatalf("errs %v, want one naming --speed", errs)
	}
	wl.speedFlag = "1"
	if errs := wl.Validate(); len(errs) != 0 {
		t.Fatalf("speed 1: %v", errs)
	}
}
