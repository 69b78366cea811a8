package tpcc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// offlineWorker is a terminal without a connection: every transaction
// fails at its BEGIN when Event is given a cancelled context.
func offlineWorker(t testing.TB, wl *Workload, warehouses, id int) *worker {
	t.Helper()
	d, err := dialect.For(target.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	return &worker{wl: wl, info: &runInfo{warehouses: warehouses}, classify: d.Classify, r: newRNG(5, uint64(id)),
		bound: wl.cfg.BindWarehouse, w: id%warehouses + 1, slDistrict: (id/warehouses)%nDist + 1, homeLo: 1, homeHi: warehouses,
		deck: newDeck(wl.cfg.Weights), pos: 1 << 30}
}

// TestFailedEventsKeepTheMix: after a failure the runner does not retry,
// the next event draws the deck's next card, so a hundred decks of failed
// events hold the deck's exact mix; before, every event repeated the
// first failed type.
func TestFailedEventsKeepTheMix(t *testing.T) {
	w := offlineWorker(t, New(), 1, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	counts := map[string]int{}
	for i := 0; i < 23*100; i++ {
		var ev workload.Event
		if err := w.Event(ctx, &ev); !errors.Is(err, context.Canceled) {
			t.Fatalf("event %d: %v, want context.Canceled", i, err)
		}
		counts[ev.Type]++
	}
	want := map[string]int{NewOrder: 1000, Payment: 1000, OrderStatus: 100, Delivery: 100, StockLevel: 100}
	for typ, n := range want {
		if counts[typ] != n {
			t.Errorf("%s: %d of 2300 failed events, want %d (the deck's mix)", typ, counts[typ], n)
		}
	}
}

// TestConflictRerunsTheSameTransaction: a conflict the runner retries
// (deadlock) keeps the card and the home warehouse; any other error moves
// on.
func TestConflictRerunsTheSameTransaction(t *testing.T) {
	w := offlineWorker(t, New(), 50, 0)
	w.next()
	cur, home := w.cur, w.w
	w.settle(&mysql.MySQLError{Number: 1213, Message: "Deadlock found"})
	for i := 0; i < 5; i++ {
		if !w.next() || w.cur != cur || w.w != home {
			t.Fatalf("retry %d after a deadlock: retry %v, type %d warehouse %d; want type %d warehouse %d",
				i, w.retry, w.cur, w.w, cur, home)
		}
	}
	// The runner gives up after its MaxRetries reruns: the next event
	// draws a new card.
	if maxRetries != runner.DefaultConfig().MaxRetries {
		t.Fatalf("maxRetries %d, the runner's %d", maxRetries, runner.DefaultConfig().MaxRetries)
	}
	for i := 5; i < maxRetries; i++ {
		w.settle(&mysql.MySQLError{Number: 1213, Message: "Deadlock found"})
		if !w.next() {
			t.Fatalf("retry %d not taken", i)
		}
	}
	pos := w.pos
	w.settle(&mysql.MySQLError{Number: 1213, Message: "Deadlock found"})
	if w.next() || w.pos != pos+1 {
		t.Fatalf("after the runner gave up: retry %v, deck at %d, want the next card (%d)", w.retry, w.pos, pos+1)
	}
	pos = w.pos
	w.settle(&mysql.MySQLError{Number: 1062, Message: "Duplicate entry"})
	if w.next() || w.pos != pos+1 {
		t.Fatalf("after a duplicate key error: retry %v, deck at %d, want the next card (%d)", w.retry, w.pos, pos+1)
	}
	w.settle(nil)
	if w.next() {
		t.Fatal("a success is followed by a retry")
	}
}

// TestHomeWarehouse: by default every transaction draws its home warehouse
// uniformly over 1..W (and Stock-Level's district over 1..10); with
// --bind-warehouse terminal i keeps warehouse i%W+1.
func TestHomeWarehouse(t *testing.T) {
	const warehouses, draws = 8, 8000
	t.Run("drawn", func(t *testing.T) {
		w := offlineWorker(t, New(), warehouses, 3)
		var homes [warehouses + 1]int
		var districts [nDist + 1]int
		for i := 0; i < draws; i++ {
			w.next()
			homes[w.w]++
			districts[w.slDistrict]++
		}
		for h := 1; h <= warehouses; h++ {
			if n := homes[h]; n < draws/warehouses*8/10 || n > draws/warehouses*12/10 {
				t.Errorf("warehouse %d was home %d times of %d, want about %d", h, n, draws, draws/warehouses)
			}
		}
		for d := 1; d <= nDist; d++ {
			if n := districts[d]; n < draws/nDist*8/10 || n > draws/nDist*12/10 {
				t.Errorf("Stock-Level district %d drawn %d times of %d, want about %d", d, n, draws, draws/nDist)
			}
		}
	})
	t.Run("bound", func(t *testing.T) {
		wl := setup(t, "--bind-warehouse")
		for id := 0; id < 2*warehouses; id++ {
			w := offlineWorker(t, wl, warehouses, id)
			for i := 0; i < 50; i++ {
				w.next()
				if w.w != id%warehouses+1 || w.slDistrict != (id/warehouses)%nDist+1 {
					t.Fatalf("terminal %d: warehouse %d district %d, want %d and %d", id, w.w, w.slDistrict,
						id%warehouses+1, (id/warehouses)%nDist+1)
				}
			}
		}
		if p := wl.Params(); p["bind_warehouse"] != true {
			t.Errorf("params bind_warehouse = %v", p["bind_warehouse"])
		}
	})
}

func TestNotes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		threads int
		want    string // "" for no note
	}{
		{"drawn", []string{"--warehouses", "8"}, 2, ""},
		{"bound, fewer terminals", []string{"--warehouses", "8", "--bind-warehouse"}, 2, "warehouses 3-8 are never a home warehouse"},
		{"bound, one short", []string{"--warehouses", "8", "--bind-warehouse"}, 7, "warehouse 8 are never"},
		{"bound, as many terminals", []string{"--warehouses", "8", "--bind-warehouse"}, 8, ""},
		{"bound, warehouses unknown", []string{"--bind-warehouse"}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := setup(t, tc.args...)
			notes := wl.Notes(tc.threads)
			if tc.want == "" {
				if len(notes) != 0 {
					t.Fatalf("notes %q, want none", notes)
				}
				return
			}
			if len(notes) != 1 || !strings.Contains(notes[0], tc.want) {
				t.Fatalf("notes %q, want one saying %q", notes, tc.want)
			}
			run := &summary.Run{Threads: tc.threads, PerType: map[string]summary.Type{}}
			wl.Summarize(run)
			wl.Summarize(run) // a second call adds no second copy
			if len(run.Notes) != 1 || run.Notes[0] != notes[0] {
				t.Errorf("summary notes %q, want %q", run.Notes, notes)
			}
		})
	}
}

// TestSkippedDeliveries: Summarize reports the districts Deliveries
// skipped and checks them against clause 2.7.4.2's 1% (or one).
func TestSkippedDeliveries(t *testing.T) {
	for _, tc := range []struct {
		name               string
		delivered, skipped int64
		ok                 bool
		pct                float64
	}{
		{"none skipped", 1000, 0, true, 0},
		{"one skipped", 10, 1, true, 10},
		{"1%", 1000, 10, true, 1},
		{"over 1%", 1000, 11, false, 1.1},
		{"nothing to deliver", 0, 20, false, 100},
		{"no delivery", 0, 0, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := New()
			wl.delivery.delivered.Add(tc.delivered)
			wl.delivery.skipped.Add(tc.skipped)
			run := &summary.Run{DurationS: 10, PerType: map[string]summary.Type{}}
			wl.Summarize(run)
			if run.Figures[FigureSkippedDistricts] != float64(tc.skipped) || run.Figures[FigureDeliveredDistricts] != float64(tc.delivered) {
				t.Errorf("figures %v", run.Figures)
			}
			var c *summary.Check
			for i := range run.Checks {
				if run.Checks[i].Name == CheckSkippedDeliveries {
					c = &run.Checks[i]
				}
			}
			if c == nil || c.OK != tc.ok || c.Value != tc.pct || c.Limit != 1 {
				t.Fatalf("check %+v, want ok %v value %v limit 1", c, tc.ok, tc.pct)
			}
			want := "[OK]"
			if !tc.ok {
				want = "[NG]"
			}
			out := wl.FormatSummary(run)
			if !strings.Contains(out, "districts: ") || !strings.Contains(out, "skipped") ||
				!strings.Contains(out, want) {
				t.Errorf("final report lacks the skipped districts with %s:\n%s", want, out)
			}
			// The counts start over for the next round.
			if d, s := wl.delivery.take(); d != 0 || s != 0 {
				t.Errorf("counts after Summarize: %d delivered, %d skipped", d, s)
			}
		})
	}
}

func TestDemand(t *testing.T) {
	// tpcc-mysql's shape: its 35 statements less stmt 20 (the same count
	// as stmt 13).
	d := New().Demand(64)
	if d.Connections != 64 || d.PreparedPerConn != 34 || d.Tables != 9 {
		t.Errorf("demand %+v, want 64 connections, 34 statements each, 9 tables", d)
	}
	// Batched: 30 statements of the five transactions, 11 order line inserts.
	wl := New()
	wl.Config().Shape = ShapeBatched
	if d := wl.Demand(64); d.PreparedPerConn != 41 {
		t.Errorf("batched demand %+v, want 41 statements each", d)
	}
}
