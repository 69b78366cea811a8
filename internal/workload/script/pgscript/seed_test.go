package pgscript

import "testing"

// pgbench 15.18, `pgbench -n -t 1 --random-seed=5432` (one client) of
//
//	\set r random(1,1000000)
//	\set s random_gaussian(1,1000,3.0)
//	\set t random_exponential(1,1000,2.0)
//	\set u random_zipfian(1,1000,1.5)
//	\set v permute(3, 10)
//	\set l hash(2)
//	SELECT :r, :s, :t, :u, :v, :default_seed, :l
//
// sent SELECT 856256, 347, 116, 4, 4, 7590783070443337668,
// -2680999601074778002 (pgbench -d). The same seed gives the same numbers
// here; TestPgbenchSeed (package script) checks more against a live
// pgbench.
func TestStreamsArePgbenchs(t *testing.T) {
	st := NewStreams(5432, 1, false)
	if st.Default != 7590783070443337668 {
		t.Fatalf(":default_seed = %d, want pgbench's 7590783070443337668", st.Default)
	}
	fn, _ := st.ClientSeeds(0)
	s := NewState(nil, NewPRNG(fn), st.Default)
	want := []struct {
		expr string
		v    int64
	}{
		{"random(1,1000000)", 856256},
		{"random_gaussian(1,1000,3.0)", 347},
		{"random_exponential(1,1000,2.0)", 116},
		{"random_zipfian(1,1000,1.5)", 4},
		{"permute(3, 10)", 4},
		{"hash(2)", -2680999601074778002},
	}
	for _, w := range want {
		e, err := ParseExpr(w.expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Eval(s)
		if err != nil {
			t.Fatal(err)
		}
		if v.K != Int || v.I != w.v {
			t.Errorf("%s = %s, want pgbench's %d", w.expr, v.Text(), w.v)
		}
	}
}

// Clients beyond those announced get seeds of their own, repeatably.
func TestStreamsExtraClients(t *testing.T) {
	a, b := NewStreams(7, 2, false), NewStreams(7, 2, false)
	seen := map[uint64]bool{}
	for id := 0; id < 5; id++ {
		f1, c1 := a.ClientSeeds(id)
		f2, c2 := b.ClientSeeds(id)
		if f1 != f2 || c1 != c2 {
			t.Fatalf("client %d: seeds differ between two derivations", id)
		}
		if seen[f1] || seen[c1] {
			t.Fatalf("client %d: a seed repeats", id)
		}
		seen[f1], seen[c1] = true, true
	}
	if NewStreams(7, 2, true).Default != 0 {
		t.Error("a defined :default_seed still drew one")
	}
}
