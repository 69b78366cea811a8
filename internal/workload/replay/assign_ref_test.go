package replay

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// assignRef is the first assign, which looked at every slot for every
// session (quadratic), with its loop's early break limited to a session
// placed after its pred (as its comment says: the slot freed last): the
// reference the heap version must agree with.
// It spreads sessions over slots: with fold == 0 as many slots as the
// capture had sessions open at once, each session going to the slot whose
// last session it follows that was freed last; with fold > 0 onto fold slots, each session to
// the slot that is free first. A session occupies its slot from its first
// event until its last statement ends (see follows).
func assignRef(sessions []*session, fold int, wholeSeconds bool) []*slot {
	sorted := slices.Clone(sessions)
	slices.SortStableFunc(sorted, func(a, b *session) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	var slots []*slot
	var free []int64                 // when each slot's last session stopped needing it
	var last []*session              // each slot's last session
	slotOf := map[*session]int{}     // where each session went
	byTick := map[int64][]*session{} // sessions placed, by the second their last statement was logged in
	for _, s := range sorted {
		best := -1
		byPred := false
		if fold == 0 && wholeSeconds {
			// s must come after a session it overlaps in time but follows
			// by the log's lines: on its connection, after it (and after
			// whatever came there since). The latest such session wins.
			var pred *session
			for _, p := range byTick[s.firstTick] {
				if s.start < p.busy && after(s, p) && (pred == nil || p.lastSeq > pred.lastSeq) {
					pred = p
				}
			}
			if pred != nil {
				best, byPred = slotOf[pred], true
			}
		}
		for i, f := range free {
			if byPred { // (the first assign broke here at the first slot s follows, not only after a pred: first fit, not the slot freed last its comment promises)
				break
			}
			// Folded, the slot free first; otherwise the one freed last
			// of those s may follow: most likely the session s depends on.
			if fold > 0 && (best < 0 || f < free[best]) || fold == 0 && follows(s, last[i], wholeSeconds) && (best < 0 || f > free[best]) {
				best = i
			}
		}
		if best < 0 && (fold == 0 || len(slots) < fold) {
			slots = append(slots, &slot{})
			free, last = append(free, 0), append(last, nil)
			best = len(slots) - 1
		} else if best < 0 {
			best = 0
		}
		if fold > 0 && len(slots) < fold && last[best] != nil && !follows(s, last[best], wholeSeconds) {
			slots = append(slots, &slot{})
			free, last = append(free, 0), append(last, nil)
			best = len(slots) - 1
		}
		slots[best].sessions = append(slots[best].sessions, s)
		// A session starting at the very time another ended follows it:
		// with a log's millisecond times the next session often starts in
		// the tick its predecessor's last statement ran, and may depend on
		// what it did.
		free[best], last[best] = max(free[best], s.busy), s
		slotOf[s] = best
		if wholeSeconds {
			byTick[s.busyTick] = append(byTick[s.busyTick], s)
		}
	}
	return slots
}

// TestAssignMatchesReference: on random captures (overlapping sessions,
// whole-second logs, folds) assign places every session where the
// quadratic reference did.
func TestAssignMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		n := 1 + r.IntN(60)
		whole := round%2 == 1
		var ss []*session
		for i := 0; i < n; i++ {
			start := int64(r.IntN(40)) * 100000
			busy := start + int64(r.IntN(5))*100000
			tick := start / 1000000
			ss = append(ss, &session{id: string(rune('a' + i%26)), start: start, busy: busy, firstSeq: i * 2, lastSeq: i*2 + r.IntN(3),
				firstTick: tick, busyTick: busy / 1000000, lastTick: busy / 1000000})
		}
		for _, fold := range []int{0, 1, 3, n} {
			got, want := assign(ss, fold, whole), assignRef(ss, fold, whole)
			if len(got) != len(want) {
				t.Fatalf("round %d fold %d: %d slots, reference %d", round, fold, len(got), len(want))
			}
			for i := range got {
				if !slices.Equal(got[i].sessions, want[i].sessions) {
					t.Fatalf("round %d fold %d: slot %d differs from the reference", round, fold, i)
				}
			}
		}
	}
}
