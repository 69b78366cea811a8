package convert

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
)

// TestCollectorSortsAndWritesInOrder feeds records out of start order,
// over several encoding batches, and reads them back sorted, each session
// in its order.
func TestCollectorSortsAndWritesInOrder(t *testing.T) {
	var st capture.Stats
	c := NewCollector(capture.Filter{}, &st)
	const n = 20000
	for i := 0; i < n; i++ {
		// Two sessions; session "b" is logged late (end order).
		at := int64(i)
		s := "a"
		if i%2 == 1 {
			s, at = "b", int64(i)-1000
		}
		c.Add(&capture.Record{At: 1e12 + at, Event: capture.Event{Session: s, Kind: capture.KindQuery, SQL: strconv.Itoa(i)}})
	}
	var buf bytes.Buffer
	h, err := c.Write(&buf, capture.Header{Source: "x"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.NewReader(&buf, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Header.Start.Equal(h.Start) || h.Start.UnixMicro() != 1e12-999 {
		t.Fatalf("start %v", h.Start)
	}
	last, lastBySession, count := int64(-1), map[string]int{"a": -1, "b": -1}, 0
	for {
		var e capture.Event
		if err := r.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		count++
		i, _ := strconv.Atoi(e.SQL)
		if e.TUS < last || i <= lastBySession[e.Session] {
			t.Fatalf("out of order at %+v", e)
		}
		last, lastBySession[e.Session] = e.TUS, i
	}
	if count != n {
		t.Fatalf("%d events, want %d", count, n)
	}
}

// TestCollectorSessionTimeNeverGoesBack: a start computed from a rounded
// end time minus a duration may fall before the session's previous one.
func TestCollectorSessionTimeNeverGoesBack(t *testing.T) {
	var st capture.Stats
	var buf bytes.Buffer
	c := NewCollector(capture.Filter{}, &st)
	c.Add(&capture.Record{At: 100, Event: capture.Event{Session: "s", Kind: capture.KindQuery, SQL: "a"}})
	c.Add(&capture.Record{At: 90, Event: capture.Event{Session: "s", Kind: capture.KindQuery, SQL: "b"}})
	c.Add(&capture.Record{At: 95, Event: capture.Event{Session: "t", Kind: capture.KindQuery, SQL: "c"}})
	c.Write(&buf, capture.Header{})
	// b is raised to a's start (100); c, another session, keeps 95.
	if !strings.Contains(buf.String(), `"session":"s","t_us":5,"kind":"query","sql":"b"`) ||
		!strings.Contains(buf.String(), `"session":"t","t_us":0,`) {
		t.Fatalf("b not raised to a's start:\n%s", buf.String())
	}
}

// TestCollectorRefusesTimesOutOfRange: a log whose events span more than
// capture.MaxTUS (an entry dated 9999 among ones of 2024) is refused with
// the file and line of the far entry (issue 33, item 9).
func TestCollectorRefusesTimesOutOfRange(t *testing.T) {
	log := "2024-11-22T22:50:01.000100Z\t    8 Query\tSELECT 1\n" +
		"9999-11-22T22:50:01.000100Z\t    8 Query\tSELECT 2\n"
	var st capture.Stats
	c := NewCollector(capture.Filter{}, &st)
	if err := Parse(strings.NewReader(log), "g.log", Options{From: MySQLGeneral}, c); err != nil {
		t.Fatal(err)
	}
	_, err := c.Write(io.Discard, capture.Header{})
	if err == nil || !strings.HasPrefix(err.Error(), "g.log:2: ") || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("want g.log:2: ... out of range, got %v", err)
	}
}
