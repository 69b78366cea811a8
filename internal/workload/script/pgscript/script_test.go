package pgscript

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const tpcbLike = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`

func TestParseTPCB(t *testing.T) {
	s, err := Parse("tpcb-like", tpcbLike)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cmds) != 11 {
		t.Fatalf("%d commands, want 11", len(s.Cmds))
	}
	c := s.Cmds[5]
	if c.Kind != SQL || c.Line != 6 || c.Class != Write {
		t.Errorf("command 6: %+v", c)
	}
	var vars []string
	for _, p := range c.Parts {
		if p.Var != "" {
			vars = append(vars, p.Var)
		}
	}
	if strings.Join(vars, ",") != "delta,aid" {
		t.Errorf("vars %v", vars)
	}
	if s.Cmds[6].Class != Read || s.Cmds[4].Class != Other {
		t.Error("classes")
	}
	if err := CheckVars([]*Script{s}, []string{"scale"}); err != nil {
		t.Error(err)
	}
	if err := CheckVars([]*Script{s}, nil); err == nil || err.Error() != "tpcb-like:1: undefined variable :scale" {
		t.Errorf("CheckVars without scale: %v", err)
	}
}

func TestParseMeta(t *testing.T) {
	src := `-- comment ; not a command
\set n 3 + \
  4
SELECT 1 AS one, ':x::int' \gset p_
SELECT 'a;b' AS s, $$x;y$$ AS d \aset
\sleep :n ms
\if :n > 5
  SELECT (1;2);
\elif :n = 3
  SELECT 3;
\else
  SELECT 4 \; SELECT 5;
\endif
\startpipeline
SELECT 6;
\endpipeline
SELECT '::x', now()::date, :one
`
	s, err := Parse("all.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []CmdKind{Set, SQL, SQL, Sleep, If, SQL, Elif, SQL, Else, SQL, Endif, StartPipeline, SQL, EndPipeline, SQL}
	if len(s.Cmds) != len(kinds) {
		for _, c := range s.Cmds {
			t.Logf("%d %d %q", c.Line, c.Kind, c.Text)
		}
		t.Fatalf("%d commands, want %d", len(s.Cmds), len(kinds))
	}
	for i, k := range kinds {
		if s.Cmds[i].Kind != k {
			t.Errorf("command %d kind %d, want %d", i, s.Cmds[i].Kind, k)
		}
	}
	if c := s.Cmds[1]; !c.Gset || c.Prefix != "p_" || c.Line != 4 {
		t.Errorf("gset: %+v", c)
	}
	if c := s.Cmds[2]; !c.Aset || c.Text != `SELECT 'a;b' AS s, $$x;y$$ AS d` {
		t.Errorf("aset: %+v", c)
	}
	if c := s.Cmds[3]; c.Unit != 1000 || c.Line != 6 {
		t.Errorf("sleep: %+v", c)
	}
	if c := s.Cmds[9]; c.Text != "SELECT 4 ; SELECT 5;" {
		t.Errorf("compound: %q", c.Text)
	}
	if c := s.Cmds[14]; len(c.Parts) != 2 || c.Parts[1].Var != "one" || c.Line != 17 {
		t.Errorf("last: %+v", c)
	}
	// \if chain: n = 7 takes the first branch, 3 the \elif, 1 the \else.
	for n, want := range map[int64]int{7: 5, 3: 7, 1: 9} {
		st := stateWith(map[string]Value{"n": IntV(n)}, nil, 0)
		pc, err := s.Branch(4, st)
		if err != nil || pc != want {
			t.Errorf("n=%d: branch to %d (%v), want %d", n, pc, err, want)
		}
	}
	if pc, _ := s.Branch(6, nil); pc != 11 {
		t.Errorf("\\elif after a taken branch goes to %d, want 11", pc)
	}
	if pc, _ := s.Branch(8, nil); pc != 11 {
		t.Errorf("\\else after a taken branch goes to %d, want 11", pc)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SELECT 1;\n\\foo", "f:2: unknown meta-command \\foo"},
		{"\n\n\\set x 1 +", "f:3: \\set x: syntax error"},
		{"", "f:1: empty command list for script \"f\""},
		{"-- only a comment\n", "f:1: empty command list for script \"f\""},
		{"\\sleep", "f:1: \\sleep: missing argument in command \"sleep\""},
		{"\\set", "f:1: \\set: missing argument in command \"set\""},
		{"\\set i", "f:1: \\set i: syntax error in command \"set\""},
		{"\\if", "f:1: \\if: syntax error in command \"if\""},
		{"\\sleep 1 ms x", "f:1: too many arguments in command \"sleep\""},
		{"\\sleep 2.5 ms", "f:1: invalid sleep time, must be an integer (2.5)"},
		{"\\sleep 1xs", "f:1: unrecognized time unit, must be us, ms or s (xs)"},
		{"\\shell", "f:1: missing command in command \"shell\""},
		{"\\setshell v", "f:1: missing argument in command \"setshell\""},
		{"\\set x least(1)\n\\shell" + strings.Repeat(" a", 256), "f:2: too many arguments in command \"shell\""},
		{"\\set x", "f:1: \\set x: syntax error in command \"set\": missing expression"},
		{"\\sleep 1 h", "f:1: unrecognized time unit, must be us, ms or s (h)"},
		{"\\sleep x", "f:1: invalid sleep time, must be an integer (x)"},
		{"SELECT 1;\n\\sleep 9300000000 s", "f:2: \\sleep: 9300000000 s is out of range (at most 9223372036 s)"},
		{"\\sleep 9223372036855 ms", "f:1: \\sleep: 9223372036855 ms is out of range"},
		{"\\sleep 9223372036854776 us", "f:1: \\sleep: 9223372036854776 us is out of range"},
		{"\\sleep 99999999999999999999", "f:1: \\sleep: 99999999999999999999 s is out of range"},
		{"\\sleep -99999999999999999999 ms", "f:1: \\sleep: -99999999999999999999 ms is out of range"},
		{"\\if 1\nSELECT 1;", "f:1: \\if without matching \\endif"},
		{"SELECT 1;\n\\endif", "f:2: \\endif without"},
		{"\\if 1\n\\else\n\\elif 1\n\\endif", "f:3: \\elif after \\else"},
		{"\\else", "f:1: \\else without"},
		{"\\gset", "f:1: \\gset must follow"},
		{"SELECT 1\n\\set x 1", "f:2: \\set inside an unfinished"},
		{"SELECT 'abc;\n", "f:1: unterminated quoted string"},
		{"SELECT 1;\nSELECT $a$ x", "f:2: unterminated dollar"},
		{"/* x", "f:1: unterminated /*"},
		{"\\", "f:1: invalid command"},
		{"SELECT 1 \\gset a b", "f:1: too many arguments in command \"gset\""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := Parse("f", tc.src)
			var se *Error
			if err == nil || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Parse(%q) = %v, want %q...", tc.src, err, tc.want)
			}
		})
	}
}

// E” strings take backslash escapes; other strings do not.
func TestParseEscapeStrings(t *testing.T) {
	s, err := Parse("f", "SELECT E'it\\'s;', 'a\\';\nSELECT e'\\\\';\nSELECT 3;")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cmds) != 3 || s.Cmds[0].Text != `SELECT E'it\'s;', 'a\';` || s.Cmds[1].Line != 2 {
		for _, c := range s.Cmds {
			t.Logf("%d %q", c.Line, c.Text)
		}
		t.Fatalf("%d commands", len(s.Cmds))
	}
}

func TestSplitVars(t *testing.T) {
	parts := splitVars("a = :x::int and b = ':y' and c = :")
	var got []string
	for _, p := range parts {
		if p.Var != "" {
			got = append(got, p.Var)
		}
	}
	if strings.Join(got, ",") != "x,y" {
		t.Errorf("vars %v", got)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Lit)
		if p.Var != "" {
			b.WriteString(":" + p.Var)
		}
	}
	if b.String() != "a = :x::int and b = ':y' and c = :" {
		t.Errorf("rejoined %q", b.String())
	}
}

// TestSleepFor: the time of a \sleep, up to the longest time.Duration;
// past it an error, never a wrapped (negative or short) sleep.
func TestSleepFor(t *testing.T) {
	for _, tc := range []struct {
		n, unit int64
		want    time.Duration
		err     bool
	}{
		{n: 3, unit: 1e6, want: 3 * time.Second},
		{n: 2, unit: 1000, want: 2 * time.Millisecond},
		{n: 7, unit: 1, want: 7 * time.Microsecond},
		{n: 0, unit: 1e6},
		{n: -5, unit: 1e6},
		{n: 9223372036, unit: 1e6, want: 9223372036 * time.Second},
		{n: 9223372037, unit: 1e6, err: true},
		{n: 9300000000, unit: 1e6, err: true},
		{n: 1 << 62, unit: 1, err: true},
	} {
		c := Cmd{Kind: Sleep, Unit: tc.unit}
		got, err := c.SleepFor(tc.n)
		if (err != nil) != tc.err || got != tc.want || got < 0 {
			t.Errorf("SleepFor(%d x %d us) = %v, %v; want %v (error %v)", tc.n, tc.unit, got, err, tc.want, tc.err)
		}
	}
}

// What pgbench accepts in a script but refuses when it runs parses, with
// the error its command fails with.
func TestRunTimeErrors(t *testing.T) {
	for _, tc := range []struct {
		src  string
		at   int
		want string
	}{
		{"\\set . 1\n", 0, `set: invalid variable name: "."`},
		{"\\endpipeline\n", 0, "\\endpipeline: not in pipeline mode"},
		{"SELECT 1;\n\\syncpipeline\n", 1, "\\syncpipeline: not in pipeline mode"},
		{"\\startpipeline\n\\startpipeline\nSELECT 1;\n\\endpipeline\n", 1, "\\startpipeline: already in pipeline mode"},
		{"\\startpipeline\nSELECT 1 \\gset\n\\endpipeline\n", 1, "\\gset is not allowed in pipeline mode"},
	} {
		s, err := Parse("f", tc.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		if got := s.Cmds[tc.at].Err; got != tc.want {
			t.Errorf("Parse(%q): command %d fails with %q, want %q", tc.src, tc.at, got, tc.want)
		}
	}
	// A pipeline left open parses; the end of the script fails (worker).
	if _, err := Parse("f", "\\startpipeline\nSELECT 1;\n"); err != nil {
		t.Errorf("an open pipeline: %v", err)
	}
}

// TestSyncPipeline: pgbench 17's \syncpipeline parses inside a pipeline
// (any number of times, with statements and \set between), takes no
// argument, and is the only new command allowed there.
func TestSyncPipeline(t *testing.T) {
	s, err := Parse("f", "\\startpipeline\nSELECT 1;\n\\syncpipeline\n\\set x 2\nSELECT :x;\n\\syncpipeline\n\\syncpipeline\n\\endpipeline\n")
	if err != nil {
		t.Fatal(err)
	}
	kinds := []CmdKind{StartPipeline, SQL, SyncPipeline, Set, SQL, SyncPipeline, SyncPipeline, EndPipeline}
	if len(s.Cmds) != len(kinds) {
		t.Fatalf("%d commands, want %d", len(s.Cmds), len(kinds))
	}
	for i, k := range kinds {
		if c := s.Cmds[i]; c.Kind != k || c.Err != "" || c.Line != i+1 {
			t.Errorf("command %d: kind %d line %d err %q, want kind %d line %d", i, c.Kind, c.Line, c.Err, k, i+1)
		}
	}
	for src, want := range map[string]string{
		"\\startpipeline\n\\syncpipeline now\n\\endpipeline\n":        `f:2: unexpected argument in command "syncpipeline"`,
		"\\startpipeline\n\\syncpipeline\n\\sleep 1\n\\endpipeline\n": "f:3: only SQL commands and \\set are supported inside a pipeline",
	} {
		if _, err := Parse("f", src); err == nil || err.Error() != want {
			t.Errorf("Parse(%q): %v, want %s", src, err, want)
		}
	}
}

// debug() writes pgbench's line: the script's 0-based number, the
// command's 1-based one, the value's type and value.
func TestDebugOutput(t *testing.T) {
	var b strings.Builder
	st := NewState(nil, NewPRNG(1), 0)
	st.Debug, st.Script, st.Command = &b, 1, 4
	for _, src := range []string{"debug(3)", "debug(2.5)", "debug(1.0/0)", "debug(NULL)", "debug(1 = 1)", "debug(8.5070591730234616e+37)"} {
		e, err := ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Eval(st); err != nil {
			t.Fatal(err)
		}
	}
	want := "debug(script=1,command=5): int 3\ndebug(script=1,command=5): double 2.5\ndebug(script=1,command=5): double inf\n" +
		"debug(script=1,command=5): null\ndebug(script=1,command=5): boolean true\ndebug(script=1,command=5): double 8.50705917302346e+37\n"
	if b.String() != want {
		t.Errorf("debug wrote\n%s\nwant\n%s", b.String(), want)
	}
}

// TestErrorPlace: an expression that ends too soon is placed at the end of
// its command's line, as pgbench's "^ error found here" shows it.
func TestErrorPlace(t *testing.T) {
	_, err := Parse("f", "SELECT 1;\n\\set i 1 +  \n")
	var e *Error
	if !errors.As(err, &e) || e.Source != `\set i 1 +` || e.Column != 10 || e.Line != 2 {
		t.Fatalf("%#v", err)
	}
	_, err = Parse("f", "\\set i 1 + )\n")
	if !errors.As(err, &e) || e.Source != "" {
		t.Errorf("an error inside the expression has no place here: %#v", err)
	}
}
