package pgscript

import (
	"io"
	"strings"
	"testing"
)

// FuzzParse: any input parses or fails with a *Error naming a line within
// the input; parsed commands keep their lines in order and their jumps in
// range.
func FuzzParse(f *testing.F) {
	f.Add(tpcbLike)
	f.Add("\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
	f.Add("\\if :x\nSELECT 1 \\gset\n\\elif 2\n\\else\n\\endif\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("f", src)
		lines := strings.Count(src, "\n") + 1
		if err != nil {
			se, ok := err.(*Error)
			if !ok || se.Line < 1 || se.Line > lines {
				t.Fatalf("error %v: not a *Error with a line in 1..%d", err, lines)
			}
			return
		}
		prev := 0
		for i, c := range s.Cmds {
			if c.Line < prev || c.Line > lines {
				t.Fatalf("command %d line %d (prev %d, lines %d)", i, c.Line, prev, lines)
			}
			prev = c.Line
			switch c.Kind {
			case If, Elif, Else:
				if c.Jump <= i || c.Jump >= len(s.Cmds) || c.End > len(s.Cmds) {
					t.Fatalf("command %d: jump %d end %d of %d", i, c.Jump, c.End, len(s.Cmds))
				}
			}
		}
	})
}

// FuzzExpr: any input parses or fails; parsed expressions evaluate without
// panicking.
func FuzzExpr(f *testing.F) {
	for _, s := range []string{"random(1, 100000 * :scale)", "CASE WHEN :x > 1 THEN 2 ELSE 3 END",
		"hash(:x, 5432) % 10", "permute(:x, 100, 7)", "random_zipfian(1, 10, 1.5)", "-9223372036854775808 / -1",
		"NOT :x IS NULL OR 1 << 70", "greatest(1, 2.5, :x)", "random_gaussian(1, 10, 2.5)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseExpr(src)
		if err != nil {
			return
		}
		vars := map[string]Value{"x": IntV(3), "scale": IntV(1)}
		v1, err1 := e.Eval(stateWith(vars, NewPRNG(1), 7))
		if err1 == nil && v1.K == Double && v1.F != v1.F && v1.Text() != "NaN" {
			t.Fatalf("NaN written %q", v1.Text())
		}
		// Bound to slots, the expression evaluates alike.
		t2 := NewTable()
		e.bind(t2)
		st := NewState(t2, NewPRNG(1), 7)
		st.Debug = io.Discard
		for k, v := range vars {
			st.Set(k, v)
		}
		v2, err2 := e.Eval(st)
		if (err1 == nil) != (err2 == nil) || err1 == nil && (v1.K != v2.K || v1.Text() != v2.Text()) {
			t.Fatalf("unbound %v (%v), bound %v (%v)", v1, err1, v2, err2)
		}
	})
}

// FuzzValue: any -D or \gset text converts (makeVariableValue) to a typed
// value or an error, and the conversions of a value never panic.
func FuzzValue(f *testing.F) {
	for _, s := range []string{"of", "o", "ye", "TRUE", "null", "+3", " 12 ", "-10.1", "1e400", "trueXXX", "", "9223372036854775808", "nan", "-inf", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := StringV(s).typed()
		if err != nil {
			return
		}
		if v.K == String {
			t.Fatalf("%q stayed a string", s)
		}
		_, _ = v.asInt()
		_, _ = v.asDouble()
		_, _ = v.asBool()
		_, _ = v.Truthy()
		_ = v.Text()
	})
}
