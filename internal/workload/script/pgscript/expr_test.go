package pgscript

import (
	"strings"
	"testing"
)

func evalStr(t *testing.T, src string, vars map[string]Value) (Value, error) {
	t.Helper()
	e, err := ParseExpr(src)
	if err != nil {
		return Value{}, err
	}
	return e.Eval(stateWith(vars, NewPRNG(1), 5432))
}

// Values from pgbench's documentation (Table: pgbench Functions, Operators).
func TestExprDocumented(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"abs(-17)", "17"},
		{"double(5432)", "5432"},
		{"exp(1.0)", "2.71828182845905"},
		{"greatest(5, 4, 3, 2)", "5"},
		{"hash(10, 5432)", "-5817877081768721676"},
		{"hash_fnv1a(10, 5432)", "-7793829335365542153"},
		{"hash_murmur2(10, 5432)", "-5817877081768721676"},
		{"int(5.4 + 3.8)", "9"},
		{"least(5, 4, 3, 2.1)", "2.1"},
		{"ln(2.718281828459045)", "1"},
		{"mod(54, 32)", "22"},
		{"pi()", "3.14159265358979"},
		{"pow(2.0, 10)", "1024"},
		{"power(2.0, 10)", "1024"},
		{"sqrt(2.0)", "1.4142135623731"},
		{"5 + 4", "9"}, {"3 - 4", "-1"}, {"3 * 4", "12"}, {"10 / 3", "3"}, {"10 / 4.0", "2.5"},
		{"3 % 2", "1"}, {"1 | 2", "3"}, {"5 # 3", "6"}, {"5 & 3", "1"}, {"~5", "-6"},
		{"1 << 2", "4"}, {"8 >> 2", "2"}, {"-5 % -1", "0"},
		{"5 = 4", "false"}, {"5 <> 4", "true"}, {"5 != 5", "false"}, {"5 < 4", "false"},
		{"5 <= 4", "false"}, {"5 > 4", "true"}, {"5 >= 4", "true"}, {"2 < 2.5", "true"},
		{"true AND false", "false"}, {"true OR false", "true"}, {"NOT false", "true"},
		// pgbench's three-valued logic (evalLazyFunc): a NULL left operand
		// gives NULL; false AND NULL and true OR NULL short-circuit.
		{"NULL AND false", "NULL"}, {"NULL OR true", "NULL"}, {"NULL AND true", "NULL"},
		{"false AND NULL", "false"}, {"true OR NULL", "true"}, {"true AND NULL", "NULL"},
		{"NOT NULL", "NULL"}, {"NULL + 1", "NULL"}, {"least(1, NULL)", "NULL"}, {"abs(NULL)", "NULL"},
		{"5 < NULL", "NULL"}, {"debug(NULL)", "NULL"}, {"1 IS TRUE", "false"},
		// int() and doubles where integers are expected round (rint).
		{"int(3.7)", "4"}, {"int(-3.5)", "-4"}, {"int(2.5)", "2"}, {"hash(1.5, 7590783070443337668)", "-2680999601074778002"},
		{"hash(2, 7590783070443337668)", "-2680999601074778002"},
		{"1.0/0", "Infinity"}, {"-1.0/0", "-Infinity"}, {"0.0/0", "NaN"}, {"1e300*1e300", "Infinity"},
		{"1 IS NULL", "false"}, {"1 ISNULL", "false"}, {"1 NOTNULL", "true"}, {"NULL IS NOT NULL", "false"},
		{"true IS TRUE", "true"}, {"NULL IS FALSE", "false"},
		{"CASE WHEN 1 = 2 THEN 10 WHEN 2 = 2 THEN 20 ELSE 30 END", "20"},
		{"CASE WHEN false THEN 1 END", "NULL"}, {"CASE WHEN 2 THEN 1 END", "1"}, {"CASE WHEN NULL THEN 1 ELSE 2 END", "2"},
		{"1 + 2 * 3", "7"}, {"(1 + 2) * 3", "9"}, {"1 + 2 = 3 AND 2 < 3", "true"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"2 + :x * :y", "14"}, {":s + 1", "42"}, {":d * 2", "3"},
		{"permute(0, 1)", "0"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			v, err := evalStr(t, tc.expr, map[string]Value{"x": IntV(3), "y": IntV(4), "s": StringV("41"), "d": StringV("1.5")})
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Text(); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestExprErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"1 / 0", "division by zero"},
		{"1 % 0", "division by zero"},
		{"9223372036854775807 + 1", "bigint add out of range"},
		{"-9223372036854775808 - 1", "bigint sub out of range"},
		{"4611686018427387904 * 2", "bigint mul out of range"},
		{"9223372036854775808", "bigint constant overflow"},
		{"random(-9223372036854775807, 9223372036854775806)", "too large"},
		{"random(10, 1)", "empty range"},
		{"random_gaussian(1, 10, 1.5)", "at least 2.0"},
		{"random_exponential(1, 10, 0)", "greater than zero"},
		{"random_zipfian(1, 10, 1.0)", "[1.001, 1000]"},
		{"random_zipfian(1, 10, 1001)", "[1.001, 1000]"},
		{"permute(1, 0)", "greater than zero"},
		{"nosuch(1)", "unexpected function name"},
		{"abs(1, 2)", "unexpected number of arguments (abs)"},
		{"least()", "at least one argument expected (least)"},
		{"NOT 0.0", "cannot coerce double to boolean"},
		{"1 AND true", "cannot coerce int to boolean"},
		{"least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)", "too many function arguments, maximum is 16"},
		{"int(1.0/0)", "double to int overflow"},
		{"1 +", "unexpected end"},
		{"(1", "unexpected end"},
		{"1 2", "syntax error"},
		{"1 $ 2", "unexpected character"},
		{":nope + 1", "undefined variable"},
		{":bad + 1", "malformed variable \"bad\" value"},
		{"int(1e300)", "overflow"},
		{strings.Repeat("(", 1000) + "1" + strings.Repeat(")", 1000), "too deeply"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := evalStr(t, tc.expr, map[string]Value{"bad": StringV("x1")})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want one containing %q", tc.expr, err, tc.want)
			}
		})
	}
}

// A constant sub-expression that fails (1/0) parses, as in pgbench, and
// fails when it is evaluated; one that does not is folded.
func TestExprFoldsAtParse(t *testing.T) {
	e, err := ParseExpr("1 + 10 / (5 - 5)")
	if err != nil {
		t.Fatalf("ParseExpr: %v, want it to parse (pgbench evaluates at run time)", err)
	}
	if _, err := e.Eval(NewState(nil, NewPRNG(1), 0)); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("Eval: %v, want division by zero", err)
	}
	if e, _ := ParseExpr("1 + 2 * 3"); e != nil {
		if _, ok := e.root.(*constNode); !ok {
			t.Errorf("1 + 2 * 3 not folded: %T", e.root)
		}
	}
	if _, err := ParseExpr(":x / 0"); err != nil {
		t.Fatalf("a variable's division is a run-time matter: %v", err)
	}
}

func TestRandomBounds(t *testing.T) {
	st := NewState(nil, NewPRNG(42), 0)
	for _, tc := range []struct {
		expr   string
		lo, hi int64
	}{
		{"random(1, 10)", 1, 10},
		{"random(-5000, 5000)", -5000, 5000},
		{"random(7, 7)", 7, 7},
		{"random_exponential(1, 10, 3.0)", 1, 10},
		{"random_gaussian(1, 10, 2.5)", 1, 10},
		{"random_zipfian(1, 10, 1.07)", 1, 10},
		{"random_zipfian(1, 1000, 2.5)", 1, 1000},
		{"permute(:i, 4)", 0, 3},
		{"random(0, 9223372036854775806)", 0, 9223372036854775806},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := ParseExpr(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for i := 0; i < 5000; i++ {
				st.Set("i", IntV(int64(i)))
				v, err := e.Eval(st)
				if err != nil {
					t.Fatal(err)
				}
				if v.K != Int || v.I < tc.lo || v.I > tc.hi {
					t.Fatalf("%s = %v, outside [%d, %d]", tc.expr, v, tc.lo, tc.hi)
				}
				seen[v.I] = true
			}
			if tc.hi-tc.lo < 20 && int64(len(seen)) != tc.hi-tc.lo+1 && tc.expr != "random_zipfian(1, 10, 1.07)" {
				t.Errorf("%s: only %d distinct values of %d", tc.expr, len(seen), tc.hi-tc.lo+1)
			}
		})
	}
}

// Zipfian draws favour the low end (pgbench: the frequency of i is
// proportional to 1/i^s).
func TestZipfianSkew(t *testing.T) {
	r := NewPRNG(7)
	var ones, tens int
	for i := 0; i < 20000; i++ {
		switch ZipfianRand(r, 1, 10, 1.5) {
		case 1:
			ones++
		case 10:
			tens++
		}
	}
	if ones < 10*tens {
		t.Errorf("zipfian(1,10,1.5): %d ones, %d tens; want ones >> tens (ratio 10^1.5)", ones, tens)
	}
}

// permute is a bijection of [0, size) for every size and seed.
func TestPermuteBijection(t *testing.T) {
	for _, size := range []int64{1, 2, 3, 4, 5, 7, 8, 100, 1000, 1023, 1025} {
		for _, seed := range []int64{0, 1, 5432, -1} {
			seen := make([]bool, size)
			for i := int64(0); i < size; i++ {
				p := Permute(i, size, seed)
				if p < 0 || p >= size || seen[p] {
					t.Fatalf("permute(%d, %d, %d) = %d: not a bijection", i, size, seed, p)
				}
				seen[p] = true
			}
		}
	}
	// Values outside the range wrap (pgbench: v = val mod size).
	if Permute(5, 4, 1) != Permute(1, 4, 1) {
		t.Error("permute(5, 4) != permute(1, 4)")
	}
}

// PRNG matches PostgreSQL's pg_prng: splitmix64 of 0 is a published test
// value (0xE220A8397B1DCDAF).
func TestSplitmix(t *testing.T) {
	var s uint64
	if got := splitmix64(&s); got != 0xE220A8397B1DCDAF {
		t.Errorf("splitmix64(0) = %#x", got)
	}
}

// permute gives pgbench's own permutations (values printed by pgbench
// 15's --debug for the same calls).
func TestPermuteMatchesPgbench(t *testing.T) {
	for _, tc := range []struct{ v, size, seed, want int64 }{
		{0, 10, 5432, 6}, {1, 10, 5432, 5}, {9, 10, 5432, 2}, {12345, 1000000, 42, 100143}, {3, 7, -1, 2},
	} {
		if got := Permute(tc.v, tc.size, tc.seed); got != tc.want {
			t.Errorf("permute(%d, %d, %d) = %d, pgbench says %d", tc.v, tc.size, tc.seed, got, tc.want)
		}
	}
}

// Pure sub-expressions are evaluated once, at parse time; one whose
// evaluation fails is left to fail when the expression runs.
func TestFoldSubExpressions(t *testing.T) {
	e, err := ParseExpr("random(-5000, 5000)")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := e.root.(*randomNode)
	if !ok {
		t.Fatalf("root %T, want *randomNode", e.root)
	}
	if lo, ok := r.lo.(*constNode); !ok || lo.v != IntV(-5000) {
		t.Errorf("lo %#v, want the constant -5000", r.lo)
	}
	e, err = ParseExpr(":x + 2 * 3")
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := e.root.(*binNode); !ok {
		t.Errorf("root %T, want *binNode", e.root)
	} else if c, ok := b.r.(*constNode); !ok || c.v != IntV(6) {
		t.Errorf("2 * 3: %#v, want the constant 6", b.r)
	}
	e, err = ParseExpr(":x + 1 / 0")
	if err != nil {
		t.Fatalf("a failing sub-expression of a variable's expression: %v, want a run-time error", err)
	}
	if _, err := e.Eval(stateWith(map[string]Value{"x": IntV(1)}, nil, 0)); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("run: %v, want division by zero", err)
	}
	if v, err := evalStr(t, "CASE WHEN :x > 1 THEN 2 * 3 ELSE -(4) END", map[string]Value{"x": IntV(0)}); err != nil || v != IntV(-4) {
		t.Errorf("case: %v (%v), want -4", v, err)
	}
}
