package replay

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
)

// setupCapture is a capture of n sessions, each a connect, two statements
// and a quit, all open at once (a connection storm: the replay needs n
// connections), as the 25k-100k session captures.
func setupCapture(tb testing.TB, n int, overlap bool) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.Header{Flavor: "mysql", Source: "bench", Start: time.Unix(0, 0).UTC()})
	if err != nil {
		tb.Fatal(err)
	}
	at := func(s, k int) int64 {
		if overlap {
			return int64(k*n + s) // every session open at once
		}
		return int64(s*10 + k) // one after the other
	}
	kinds := []string{capture.KindConnect, capture.KindQuery, capture.KindQuery, capture.KindQuit}
	for k, kind := range kinds {
		for s := 0; s < n; s++ {
			e := capture.Event{Session: fmt.Sprint(s), TUS: at(s, k), Kind: kind}
			if kind == capture.KindQuery {
				e.SQL = fmt.Sprintf("SELECT %d FROM t WHERE id = %d", k, s)
			}
			if !overlap {
				continue
			}
			if err := w.Write(&e); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if !overlap {
		for s := 0; s < n; s++ {
			for k, kind := range kinds {
				e := capture.Event{Session: fmt.Sprint(s), TUS: at(s, k), Kind: kind}
				if kind == capture.KindQuery {
					e.SQL = fmt.Sprintf("SELECT %d FROM t WHERE id = %d", k, s)
				}
				if err := w.Write(&e); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// setup is what a replay does before its first statement: read the
// capture, pick its threads, assign the sessions to slots.
func setup(tb testing.TB, data []byte) *Workload {
	c, err := Read(bytes.NewReader(data), "bench")
	if err != nil {
		tb.Fatal(err)
	}
	wl := New().(*Workload)
	wl.SetCapture(c)
	wl.speed = 1
	d := wl.RunDefaults()
	wl.SetThreads(d.Threads)
	wl.mu.Lock()
	wl.plan()
	wl.mu.Unlock()
	return wl
}

// BenchmarkReplaySetup measures a replay's set-up (read, threads, slots)
// for 25k, 50k and 100k sessions open at once, and one after another.
func BenchmarkReplaySetup(b *testing.B) {
	for _, overlap := range []bool{true, false} {
		for _, n := range []int{25000, 50000, 100000} {
			name := fmt.Sprintf("sessions=%d/at-once=%v", n, overlap)
			data := setupCapture(b, n, overlap)
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					setup(b, data)
				}
			})
		}
	}
}

// TestReplaySetupSlots: the set-up gives one slot per session open at once,
// or one for sessions one after another.
func TestReplaySetupSlots(t *testing.T) {
	if wl := setup(t, setupCapture(t, 300, true)); len(wl.slots) != 300 {
		t.Errorf("at once: %d slots, want 300", len(wl.slots))
	}
	if wl := setup(t, setupCapture(t, 300, false)); len(wl.slots) != 1 {
		t.Errorf("one after another: %d slots, want 1", len(wl.slots))
	}
}
