package pgscript

import (
	"io"
	"testing"
)

// stateWith is a state of its own table holding vars.
func stateWith(vars map[string]Value, r *PRNG, seed int64) *State {
	st := NewState(nil, r, seed)
	st.Debug = io.Discard
	for k, v := range vars {
		st.Set(k, v)
	}
	return st
}

// Bind gives every variable of the scripts one slot, shared by the
// scripts, and a bound script runs on a State of the table.
func TestBind(t *testing.T) {
	s, err := Parse("tpcb-like", tpcbLike)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Parse("other", "\\set aid :aid + 1\nSELECT :aid, :nope \\gset p_\n")
	if err != nil {
		t.Fatal(err)
	}
	tab := NewTable("scale")
	tab.Bind(s)
	tab.Bind(other)
	if tab.Len() != 6 { // scale aid bid tid delta nope
		t.Errorf("slots: %v, want 6", tab.names)
	}
	aid, ok := tab.Lookup("aid")
	if !ok || s.Cmds[0].Slot != aid || other.Cmds[0].Slot != aid || other.Cmds[1].Parts[1].Slot != aid {
		t.Fatalf("aid: slot %d; \\set slots %d %d; SQL part %+v", aid, s.Cmds[0].Slot, other.Cmds[0].Slot, other.Cmds[1].Parts[1])
	}
	if sc, _ := tab.Lookup("scale"); sc != 0 {
		t.Errorf("predefined scale in slot %d, want 0", sc)
	}
	st := NewState(tab, NewPRNG(3), 0)
	st.Set("scale", IntV(2))
	for _, c := range s.Cmds[:4] {
		v, err := c.Expr.Eval(st)
		if err != nil {
			t.Fatal(err)
		}
		st.SetSlot(c.Slot, v)
	}
	v, ok := st.Get("aid")
	if !ok || v.K != Int || v.I < 1 || v.I > 200000 {
		t.Errorf("aid = %v (%v), want 1..200000", v, ok)
	}
	if _, ok := st.Get("nope"); ok {
		t.Error("nope is defined before any \\set")
	}
	// A name no script uses has no slot, and is kept apart.
	st.SetBytes([]byte("p_unread"), IntV(5))
	if v, ok := st.Get("p_unread"); !ok || v.I != 5 {
		t.Errorf("p_unread = %v (%v)", v, ok)
	}
	if _, ok := tab.Lookup("p_unread"); ok {
		t.Error("a State's Set added a slot to a shared table")
	}
	// The same expression bound and unbound reads the same variable.
	e, err := ParseExpr(":aid * 2")
	if err != nil {
		t.Fatal(err)
	}
	free, err := e.Eval(st)
	if err != nil {
		t.Fatal(err)
	}
	e.bind(tab)
	bound, err := e.Eval(st)
	if err != nil || bound != free || bound.I != 2*v.I {
		t.Errorf("bound %v (%v), unbound %v, want %d", bound, err, free, 2*v.I)
	}
}

// Nested calls share the state's argument stack without mixing their
// arguments.
func TestNestedCalls(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"greatest(abs(-3), least(7, 2, abs(-9)), 1)", "3"},
		{"least(greatest(1, 2), greatest(abs(-5), 4), 9)", "2"},
		{"abs(least(greatest(-1, -2), -3)) + mod(abs(-7), 4)", "6"},
		{"random(least(5, 6), greatest(5, abs(-5)))", "5"},
	} {
		st := NewState(nil, NewPRNG(1), 0)
		e, err := ParseExpr(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Eval(st)
		if err != nil || v.Text() != tc.want {
			t.Errorf("%s = %v (%v), want %s", tc.expr, v.Text(), err, tc.want)
		}
		if len(st.stack) != 0 {
			t.Errorf("%s leaves %d values on the stack", tc.expr, len(st.stack))
		}
	}
	// An error inside an argument unwinds the stack too.
	st := NewState(nil, NewPRNG(1), 0)
	e, err := ParseExpr("greatest(1, abs(:x / 0))")
	if err != nil {
		t.Fatal(err)
	}
	st.Set("x", IntV(1))
	if _, err := e.Eval(st); err == nil {
		t.Error("division by zero: no error")
	}
	if len(st.stack) != 0 {
		t.Errorf("error leaves %d values on the stack", len(st.stack))
	}
}
