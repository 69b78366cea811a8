package runner

import "testing"

// Two workers sharing an outbox (a poller group's): the records of both
// are taken; the final take returns each one's running event and closes
// both, so nothing either puts afterwards counts.
func TestOutboxShared(t *testing.T) {
	var a, b slot
	ob := &outbox{}
	a.join(ob)
	b.join(ob)
	a.begin(5, true)
	a.put(record{end: 7}, true)
	b.begin(9, false)
	b.put(record{end: 10, kind: kRetry}, false) // b's event goes on
	if recs, run := ob.take(false); len(recs) != 2 || run != nil {
		t.Fatalf("take: %d records, %v running; want 2, none", len(recs), run)
	}
	a.begin(11, true)
	a.put(record{end: 12, kind: kRetry}, false)
	recs, run := ob.take(true)
	if len(recs) != 1 || recs[0].end != 12 {
		t.Errorf("final take: records %+v, want the one that ended at 12", recs)
	}
	want := []running{{start: 11, measured: true}, {start: 9, measured: false}}
	if len(run) != 2 || run[0] != want[0] || run[1] != want[1] {
		t.Errorf("final take: running %+v, want %+v", run, want)
	}
	a.put(record{end: 13}, true)
	b.put(record{end: 14}, true)
	if recs, run := ob.take(true); len(recs) != 0 || run != nil {
		t.Errorf("after the final take: %d records, %v running; want none", len(recs), run)
	}
}
