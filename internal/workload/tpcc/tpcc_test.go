package tpcc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/server/dialect"
)

func TestNURand(t *testing.T) {
	r := newRNG(1, 2)
	for _, tc := range []struct {
		name    string
		a, x, y int
	}{{"C_LAST", cLastA, 0, 999}, {"C_ID", cIDA, 1, nCust}, {"OL_I_ID", olIIDA, 1, nItems}} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 10000; i++ {
				v := r.nurand(tc.a, tc.x, tc.y, 123%(tc.a+1))
				if v < tc.x || v > tc.y {
					t.Fatalf("NURand(%d,%d,%d) = %d out of range", tc.a, tc.x, tc.y, v)
				}
			}
		})
	}
}

func TestRunConstants(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		load := loadConstants(seed)
		run := runConstants(load, seed*7+1)
		if !validRunDelta(run.CLast, load.CLast) {
			t.Fatalf("seed %d: C_LAST run %d load %d: delta not valid per clause 2.1.6.1", seed, run.CLast, load.CLast)
		}
	}
	for _, tc := range []struct {
		name      string
		run, load int
		ok        bool
	}{{"64", 64, 0, false}, {"65", 65, 0, true}, {"96", 196, 100, false}, {"112", 0, 112, false}, {"119", 200, 81, true}, {"120", 120, 0, false}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := validRunDelta(tc.run, tc.load); got != tc.ok {
				t.Errorf("validRunDelta(%d, %d) = %v, want %v", tc.run, tc.load, got, tc.ok)
			}
		})
	}
}

func TestLastName(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "BARBARBAR"}, {371, "PRICALLYOUGHT"}, {999, "EINGEINGEING"}} {
		t.Run(tc.want, func(t *testing.T) {
			if got := lastName(tc.n); got != tc.want {
				t.Errorf("lastName(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

func TestAppendCents(t *testing.T) {
	for _, tc := range []struct {
		c    int64
		want string
	}{{0, "0.00"}, {5, "0.05"}, {-1000, "-10.00"}, {999999, "9999.99"}, {30000000, "300000.00"}} {
		t.Run(tc.want, func(t *testing.T) {
			if got := string(appendCents(nil, tc.c)); got != tc.want {
				t.Errorf("appendCents(%d) = %q, want %q", tc.c, got, tc.want)
			}
		})
	}
}

// collect runs gen into one buffer.
func collect(t *testing.T, gen func(w *dialect.Rows) error) []byte {
	t.Helper()
	var out bytes.Buffer
	w := dialect.NewRows(func(b []byte, _ int64) error { out.Write(b); return nil })
	if err := gen(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestGeneratorDeterministic(t *testing.T) {
	g := &generator{seed: 42, now: "2024-01-02 03:04:05", c: loadConstants(42)}
	for _, tc := range []struct {
		name string
		gen  func(w *dialect.Rows) error
		rows int
	}{
		{"stock", func(w *dialect.Rows) error { return g.stock(w, 2) }, nItems},
		{"customer", func(w *dialect.Rows) error { return g.customers(w, 2) }, nDist * nCust},
		{"order_line", func(w *dialect.Rows) error { return g.orderLines(w, 2) }, int(g.orderLineRows(2))},
		{"items", func(w *dialect.Rows) error { return g.items(w, 1, nItems) }, nItems},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := collect(t, tc.gen), collect(t, tc.gen)
			if !bytes.Equal(a, b) {
				t.Fatal("two generations differ")
			}
			if n := bytes.Count(a, []byte("\n")); n != tc.rows {
				t.Errorf("%d rows, want %d", n, tc.rows)
			}
			if bytes.ContainsAny(a, "'\\\"") && !bytes.Contains(a, []byte(`\N`)) {
				t.Error("rows need escaping")
			}
		})
	}
	// Items generated in two halves equal items generated at once.
	whole := collect(t, func(w *dialect.Rows) error { return g.items(w, 1, nItems) })
	halves := append(collect(t, func(w *dialect.Rows) error { return g.items(w, 1, 45678) }),
		collect(t, func(w *dialect.Rows) error { return g.items(w, 45679, nItems) })...)
	if !bytes.Equal(whole, halves) {
		t.Error("items split at 45678 differ from a whole generation")
	}
}

func TestDataDistributions(t *testing.T) {
	g := &generator{seed: 7, now: "2024-01-02 03:04:05", c: loadConstants(7)}
	lines := func(b []byte) [][]string {
		var out [][]string
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			out = append(out, strings.Split(l, "\t"))
		}
		return out
	}
	share := func(rows [][]string, ok func([]string) bool) float64 {
		n := 0
		for _, r := range rows {
			if ok(r) {
				n++
			}
		}
		return float64(n) / float64(len(rows))
	}
	stock := lines(collect(t, func(w *dialect.Rows) error { return g.stock(w, 1) }))
	cust := lines(collect(t, func(w *dialect.Rows) error { return g.customers(w, 1) }))
	items := lines(collect(t, func(w *dialect.Rows) error { return g.items(w, 1, nItems) }))
	for _, tc := range []struct {
		name     string
		got      float64
		min, max float64
	}{
		{"S_DATA ORIGINAL", share(stock, func(r []string) bool { return strings.Contains(r[16], "ORIGINAL") }), 0.09, 0.11},
		{"I_DATA ORIGINAL", share(items, func(r []string) bool { return strings.Contains(r[4], "ORIGINAL") }), 0.09, 0.11},
		{"C_CREDIT BC", share(cust, func(r []string) bool { return r[13] == "BC" }), 0.09, 0.11},
		{"C_MIDDLE OE", share(cust, func(r []string) bool { return r[4] == "OE" }), 1, 1},
		{"S_QUANTITY 10..100", share(stock, func(r []string) bool { return len(r[2]) >= 2 && len(r[2]) <= 3 }), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got < tc.min || tc.got > tc.max {
				t.Errorf("share %.4f, want %.2f..%.2f", tc.got, tc.min, tc.max)
			}
		})
	}
	// The first 1,000 customers of a district carry every last name once.
	seen := map[string]bool{}
	for _, r := range cust[:1000] {
		seen[r[5]] = true
	}
	if len(seen) != 1000 {
		t.Errorf("first 1000 customers have %d distinct last names, want 1000", len(seen))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		errs []string
	}{
		{"defaults", nil, nil},
		{"bad schema", []string{"--schema", "x"}, []string{"--schema"}},
		{"fk with aidpk", []string{"--schema", "aidpk", "--fk"}, []string{"--fk"}},
		{"bad part", []string{"--parts", "items,bogus"}, []string{"--parts"}},
		{"range", []string{"--warehouses", "4", "--warehouse-range", "2-3"}, nil},
		{"range outside", []string{"--warehouses", "4", "--warehouse-range", "3-5"}, []string{"--warehouse-range"}},
		{"range syntax", []string{"--warehouse-range", "2"}, []string{"--warehouse-range"}},
		{"weights", []string{"--weights", "1,0,0,0"}, []string{"--weights"}},
		{"zero weights", []string{"--weights", "0,0,0,0,0"}, []string{"--weights"}},
		{"client sql", []string{"--client", "sql"}, nil},
		{"pipeline", []string{"--shape", "batched", "--pipeline"}, nil},
		{"pipeline needs batched", []string{"--pipeline"}, []string{"--shape batched"}},
		{"shape", []string{"--shape", "procs"}, []string{"--shape"}},
		{"rt limit", []string{"-0", "-1"}, []string{"--rt-limit0"}},
		{"bad client", []string{"--client", "odbc"}, []string{"--client"}},
		{"pipeline on sql", []string{"--shape", "batched", "--client", "sql", "--pipeline"}, []string{"--pipeline"}},
		{"all at once", []string{"--warehouses", "0", "--schema", "x", "--load-method", "y"}, []string{"--warehouses", "--schema", "--load-method"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := New()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			wl.Flags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			errs := wl.Validate()
			if len(errs) != len(tc.errs) {
				t.Fatalf("errors %v, want %d naming %v", errs, len(tc.errs), tc.errs)
			}
			for i, want := range tc.errs {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %q does not name %s", errs[i], want)
				}
			}
		})
	}
}

func TestDeckMix(t *testing.T) {
	wl := New()
	w := &worker{wl: wl, r: newRNG(3, 4), deck: newDeck(wl.cfg.Weights)}
	w.pos = len(w.deck)
	counts := [5]int{}
	for i := 0; i < 23*100; i++ {
		counts[w.draw()]++
	}
	if counts != [5]int{1000, 1000, 100, 100, 100} {
		t.Errorf("100 decks drew %v, want exactly 1000/1000/100/100/100", counts)
	}
}

// TestStockUpdateArgs checks the one-statement stock update of a remote
// supplying warehouse with an item on two lines: the item appears once
// per CASE list with its final quantity and both lines' additions, and
// the lists are padded with the last item.
func TestStockUpdateArgs(t *testing.T) {
	items := []orderItem{{iid: 5, qty: 3}, {iid: 9, qty: 4}, {iid: 9, qty: 2}}
	stock := stockRows{{iid: 5, qty: 40, ytd: 3, lines: 1}, {iid: 9, qty: 94, ytd: 6, lines: 2}}
	args := stockUpdateArgs(nil, items, stock, 2, 1)
	if n := len(args); n != maxArgs {
		t.Fatalf("%d arguments, want %d", n, maxArgs)
	}
	if got := strings.Count(stockUpdateSQL(false), "?"); got != len(args) {
		t.Fatalf("statement has %d placeholders for %d arguments", got, len(args))
	}
	if got := strings.Count(stockUpdateSQL(true), "?"); got != len(args) {
		t.Fatalf("PostgreSQL statement has %d placeholders for %d arguments", got, len(args))
	}
	// Per CASE list: the value for item 5, then for item 9 (repeated).
	want := [4][2]int{{40, 94}, {3, 6}, {1, 2}, {1, 2}}
	for c, w := range want {
		list := args[c*2*maxLines : (c+1)*2*maxLines]
		if list[0] != 5 || list[1] != w[0] {
			t.Errorf("list %d starts %v %v, want 5 %d", c, list[0], list[1], w[0])
		}
		for i := 2; i < len(list); i += 2 {
			if list[i] != 9 || list[i+1] != w[1] {
				t.Errorf("list %d pair %d is %v %v, want 9 %d", c, i/2, list[i], list[i+1], w[1])
			}
		}
	}
	where := args[8*maxLines:]
	if where[0] != 2 || where[1] != 5 || where[2] != 9 || where[len(where)-1] != 9 {
		t.Errorf("WHERE arguments %v, want warehouse 2 then items 5, 9, 9...", where)
	}
	if local := stockUpdateArgs(nil, items, stock, 1, 0); local[6*maxLines+1] != 0 {
		t.Errorf("a home warehouse's S_REMOTE_CNT gains %v, want 0", local[6*maxLines+1])
	}
}
