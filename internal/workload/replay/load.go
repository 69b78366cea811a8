package replay

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/workload/replay/fingerprint"
)

// Event kinds, compacted.
const (
	kConnect uint8 = iota
	kQuery
	kPrepare
	kExecute
	kClose
	kQuit
)

var kindOf = map[string]uint8{
	capture.KindConnect: kConnect, capture.KindQuery: kQuery, capture.KindPrepare: kPrepare,
	capture.KindExecute: kExecute, capture.KindClose: kClose, capture.KindQuit: kQuit,
}

// Statement classes, as workload.Queries counts them.
const (
	cRead uint8 = iota
	cWrite
	cOther
)

// event is one captured event, ready to replay.
type event struct {
	tus     int64
	kind    uint8
	class   uint8
	ordered bool  // the statement has ORDER BY: its result is compared in order
	acct    uint8 // an account statement, never sent: its kind's index in Capture.AcctKinds plus 1
	fp      int32 // index in Capture.FPs; -1 for connect, quit, close
	ord     int32 // statement ordinal in the capture (query, execute); -1 otherwise
	durUS   int64 // captured duration; -1 unknown
	sql     string
	name    string
	params  []*string
	db      string
}

// session is one captured client connection.
type session struct {
	id         string
	hash       uint32
	start, end int64 // t_us of its first and last events
	// busy is when the session last needs its connection: its last
	// statement's start plus its captured duration where known (a logged
	// quit can come long after, when the server gets round to it).
	busy int64
	// firstSeq and lastSeq are the capture's event numbers of its first
	// event and its last statement; firstTick and busyTick the whole
	// seconds its first event and its last statement were logged in.
	firstSeq, lastSeq   int
	firstTick, busyTick int64
	lastTick            int64 // the second its last statement was logged in
	events              []event
}

// FP is one fingerprint: the normalised text and up to 3 example statements.
type FP struct {
	ID       string
	Text     string
	Examples []string
}

// Capture is a capture file read into memory, grouped by session.
type Capture struct {
	Header     Header
	Sessions   []*session
	FPs        []FP
	Statements int   // query and execute events
	Span       int64 // t_us of the last event
	// WholeSeconds is set when the log's clock had whole seconds
	// (MariaDB's general and slow logs): order within a second is then
	// only known from the order of the lines. A slow log gives each
	// statement's start as its end second less its duration, and the
	// statements of a second without a "# Time" line start where the
	// previous one did: only some events then end on a whole second, where
	// a log with microseconds has next to none.
	WholeSeconds bool
	// AcctKinds names the kinds of the account and privilege statements
	// the capture holds (see accountKind), and kindCopyStdin, which a
	// replay skips.
	AcctKinds []string
}

// Header is the capture's header.
type Header = capture.Header

// maxExamples is how many example statements a fingerprint keeps.
const maxExamples = 3

// Load reads the capture file name.
func Load(name string) (*Capture, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, name)
}

// Read reads a capture from r (name is used in errors).
func Read(r io.Reader, name string) (*Capture, error) {
	rd, err := capture.NewReader(r, name)
	if err != nil {
		return nil, err
	}
	c := &Capture{Header: rd.Header}
	flavor := fingerprint.MySQL
	if pgCapture(rd.Header.Flavor) {
		flavor = fingerprint.Postgres
	}
	bySession := map[string]*session{}
	fpIndex := map[string]int32{}
	prepared := map[string]map[string]string{} // session -> name -> SQL, for executes without text
	var e capture.Event
	base := rd.Header.Start.UnixMicro()
	var whole, timed int64 // events logged on a whole second, and all
	for seq := 0; ; seq++ {
		if err := rd.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		s := bySession[e.Session]
		if s == nil {
			h := fnv.New32a()
			h.Write([]byte(e.Session))
			s = &session{id: e.Session, hash: h.Sum32(), start: e.TUS, busy: e.TUS, firstSeq: seq, lastSeq: seq}
			bySession[e.Session] = s
			c.Sessions = append(c.Sessions, s)
		}
		if e.TUS < s.end {
			return nil, fmt.Errorf("%s:%d: session %s goes back in time (t_us %d after %d)", name, rd.Line(), e.Session, e.TUS, s.end)
		}
		s.end = e.TUS
		c.Span = max(c.Span, e.TUS)
		ev := event{tus: e.TUS, kind: kindOf[e.Kind], fp: -1, ord: -1, durUS: -1, sql: e.SQL, name: e.Name, params: e.Params, db: e.DB}
		if e.DurUS != nil {
			ev.durUS = *e.DurUS
		}
		// When the log wrote the line: a slow log writes a statement's end.
		logged := base + e.TUS + max(ev.durUS, 0)
		timed++
		if logged%1e6 == 0 {
			whole++
		}
		// The nearest second: a statement whose start was derived from
		// its end second is a little off it, either way.
		tick := (logged + 5e5) / 1e6
		if len(s.events) == 0 {
			s.firstTick = tick
		}
		if ev.kind != kConnect && ev.kind != kQuit {
			s.busy, s.lastSeq, s.busyTick = e.TUS+max(ev.durUS, 0), seq, tick
		}
		s.lastTick = tick
		text := e.SQL
		switch ev.kind {
		case kPrepare:
			if prepared[e.Session] == nil {
				prepared[e.Session] = map[string]string{}
			}
			prepared[e.Session][e.Name] = e.SQL
		case kExecute:
			if text == "" {
				text = prepared[e.Session][e.Name]
				ev.sql = text
				if text == "" {
					return nil, fmt.Errorf("%s:%d: execute of %q, which session %s never prepared, without sql", name, rd.Line(), e.Name, e.Session)
				}
			}
		}
		if ev.kind == kQuery || ev.kind == kExecute || ev.kind == kPrepare {
			fp := fingerprint.Fingerprint(text, flavor)
			i, ok := fpIndex[fp]
			if !ok {
				i = int32(len(c.FPs))
				fpIndex[fp] = i
				c.FPs = append(c.FPs, FP{ID: fingerprint.ID(fp), Text: fp})
			}
			ev.fp = i
			k := accountKind(text, flavor == fingerprint.Postgres)
			if k == "" && capture.CopyFromStdin(text) {
				k = kindCopyStdin
			}
			if k != "" {
				j := slices.Index(c.AcctKinds, k)
				if j < 0 {
					j = len(c.AcctKinds)
					c.AcctKinds = append(c.AcctKinds, k)
				}
				ev.acct = uint8(min(j+1, 255))
			}
			ev.class = classify(fp)
			ev.ordered = strings.Contains(fp, "order by")
			if ev.kind != kPrepare {
				ev.ord = int32(c.Statements)
				c.Statements++
				if x := &c.FPs[i]; len(x.Examples) < maxExamples && !slices.Contains(x.Examples, text) {
					x.Examples = append(x.Examples, text)
				}
			}
		}
		s.events = append(s.events, ev)
	}
	c.WholeSeconds = whole >= 2 && whole*1000 >= timed
	return c, nil
}

// kindCopyStdin is the AcctKinds entry of COPY ... FROM STDIN: a capture
// does not hold the rows a client sends after it (a log never does), so
// the statement is never sent: it would wait for them for ever.
const kindCopyStdin = "COPY FROM STDIN"

// classify sorts a fingerprint into sysbench's read, write and other.
func classify(fp string) uint8 {
	w, _, _ := strings.Cut(fp, " ")
	switch w {
	case "select", "show", "with", "values", "table", "explain", "describe", "desc":
		return cRead
	case "insert", "update", "delete", "replace", "merge", "copy", "load", "truncate":
		return cWrite
	}
	return cOther
}

// slot is the sessions one connection replays, one after another.
type slot struct {
	sessions []*session
}

// follows reports whether s may run after prev on prev's connection: s
// starts once prev no longer needs it (its last statement done, whatever
// its logged quit says), or, in a log of whole seconds, s comes after prev
// (see after).
func follows(s, prev *session, wholeSeconds bool) bool {
	return s.start >= prev.busy || wholeSeconds && after(s, prev)
}

// after reports whether, in a log of whole seconds, s was logged all in the
// second prev's last statement was, after it: s began after prev was done
// although the times overlap.
func after(s, prev *session) bool {
	return s.firstTick == prev.busyTick && s.lastTick == prev.busyTick && s.firstSeq > prev.lastSeq
}

// assign spreads sessions over slots: with fold == 0 as many slots as the
// capture had sessions open at once, each session going to the slot whose
// last session it follows that was freed last; with fold > 0 onto fold slots, each session to
// the slot that is free first. A session occupies its slot from its first
// event until its last statement ends (see follows).
//
// Slots are kept in heaps, so that placing a session costs O(log slots),
// not a look at every slot: with fold == 0, the slots a session may follow
// (their last session no longer busy at its start) in one heap by when
// they were freed, latest first, and the others in one by when their last
// session stops being busy; with fold > 0, all by when they are free. A
// slot that moves leaves a stale entry behind, recognised by its version.
func assign(sessions []*session, fold int, wholeSeconds bool) []*slot {
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
	var ver []int                    // each slot's version: heap entries of older ones are stale
	slotOf := map[*session]int{}     // where each session went
	byTick := map[int64][]*session{} // sessions placed, by the second their last statement was logged in
	// fold == 0: busy holds slots whose last session is still busy (by
	// its busy time, earliest first), ready those a session may follow
	// (latest freed first, then the lowest index). fold > 0: ready holds
	// every slot, free first (then the lowest index).
	busy := &slotHeap{less: func(a, b slotEntry) bool { return a.key < b.key || a.key == b.key && a.i < b.i }}
	ready := &slotHeap{less: func(a, b slotEntry) bool {
		if fold > 0 {
			return a.key < b.key || a.key == b.key && a.i < b.i
		}
		return a.key > b.key || a.key == b.key && a.i < b.i
	}}
	place := func(i int) { // (re)files slot i after a change
		ver[i]++
		switch {
		case fold > 0:
			ready.push(slotEntry{key: free[i], i: i, v: ver[i]})
		default:
			busy.push(slotEntry{key: last[i].busy, i: i, v: ver[i]})
		}
	}
	top := func(h *slotHeap) (slotEntry, bool) { // the heap's first valid entry
		for h.len() > 0 {
			e := h.top()
			if e.v == ver[e.i] {
				return e, true
			}
			h.pop()
		}
		return slotEntry{}, false
	}
	for _, s := range sorted {
		best := -1
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
				best = slotOf[pred]
			}
		}
		if fold == 0 && best < 0 {
			// The slots s may follow (follows: their last session's busy
			// time has come; a slot it follows by the log's lines had a
			// pred above), the one freed last.
			for {
				e, ok := top(busy)
				if !ok || e.key > s.start {
					break
				}
				busy.pop()
				ready.push(slotEntry{key: free[e.i], i: e.i, v: e.v})
			}
			if e, ok := top(ready); ok {
				best = e.i
			}
		}
		if fold > 0 {
			if e, ok := top(ready); ok {
				best = e.i
			}
		}
		newSlot := func() int {
			slots = append(slots, &slot{})
			free, last, ver = append(free, 0), append(last, nil), append(ver, 0)
			return len(slots) - 1
		}
		if best < 0 && (fold == 0 || len(slots) < fold) {
			best = newSlot()
		} else if best < 0 {
			best = 0
		}
		if fold > 0 && len(slots) < fold && last[best] != nil && !follows(s, last[best], wholeSeconds) {
			best = newSlot()
		}
		slots[best].sessions = append(slots[best].sessions, s)
		// A session starting at the very time another ended follows it:
		// with a log's millisecond times the next session often starts in
		// the tick its predecessor's last statement ran, and may depend on
		// what it did.
		free[best], last[best] = max(free[best], s.busy), s
		place(best)
		slotOf[s] = best
		if wholeSeconds {
			byTick[s.busyTick] = append(byTick[s.busyTick], s)
		}
	}
	return slots
}

// slotEntry is a slot in a slotHeap: its key, index and version.
type slotEntry struct {
	key  int64
	i, v int
}

// slotHeap is a binary heap of slots ordered by less.
type slotHeap struct {
	e    []slotEntry
	less func(a, b slotEntry) bool
}

func (h *slotHeap) len() int         { return len(h.e) }
func (h *slotHeap) top() slotEntry   { return h.e[0] }
func (h *slotHeap) push(e slotEntry) { h.e = append(h.e, e); h.up(len(h.e) - 1) }

func (h *slotHeap) pop() {
	n := len(h.e) - 1
	h.e[0] = h.e[n]
	h.e = h.e[:n]
	if n > 0 {
		h.down(0)
	}
}

func (h *slotHeap) up(j int) {
	for j > 0 {
		p := (j - 1) / 2
		if !h.less(h.e[j], h.e[p]) {
			return
		}
		h.e[j], h.e[p] = h.e[p], h.e[j]
		j = p
	}
}

func (h *slotHeap) down(j int) {
	for {
		l := 2*j + 1
		if l >= len(h.e) {
			return
		}
		m := l
		if r := l + 1; r < len(h.e) && h.less(h.e[r], h.e[l]) {
			m = r
		}
		if !h.less(h.e[m], h.e[j]) {
			return
		}
		h.e[j], h.e[m] = h.e[m], h.e[j]
		j = m
	}
}
