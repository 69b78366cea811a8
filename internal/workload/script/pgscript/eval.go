package pgscript

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// State is what expressions evaluate against: one client's variables and
// random source (NewState). It is used by one goroutine.
type State struct {
	Rand *PRNG
	// Debug receives debug()'s lines (standard error when nil); Script
	// and Command are the 0-based numbers of the script and command being
	// run, which the lines name.
	Debug           io.Writer
	Script, Command int
	// DefaultSeed is the seed of hash() and permute() when none is given
	// (pgbench's :default_seed).
	DefaultSeed int64

	table *Table
	own   bool             // table is the state's own: Set adds slots
	vals  []Value          // by slot of table; K unset when undefined
	extra map[string]Value // variables without a slot (\gset columns no script reads)
	stack []Value          // function arguments being evaluated
}

// ErrUndefined is wrapped by errors about undefined variables.
var ErrUndefined = errors.New("undefined variable")

func (n *constNode) eval(*State) (Value, error) { return n.v, nil }

func (n *varNode) eval(s *State) (Value, error) {
	if s != nil {
		var v Value
		var ok bool
		if n.slot >= 0 {
			v, ok = s.GetSlot(n.slot)
		} else {
			v, ok = s.Get(n.name)
		}
		if ok {
			if v.K != String {
				return v, nil
			}
			t, err := v.typed()
			if err != nil {
				return t, fmt.Errorf("malformed variable %q value: %q", n.name, v.S)
			}
			return t, nil
		}
	}
	return Value{}, fmt.Errorf("%w %q", ErrUndefined, n.name)
}

func (n *unaryNode) eval(s *State) (Value, error) {
	x, err := n.x.eval(s)
	if err != nil {
		return x, err
	}
	switch n.op {
	case "isnull": // pgbench's IS: the same type (and boolean value)
		return BoolV(x.K == Null), nil
	case "istrue", "isfalse":
		return BoolV(x.K == Bool && (x.I != 0) == (n.op == "istrue")), nil
	}
	// NOT: NULL stays NULL; anything but a boolean is an error.
	if x.K == Null {
		return x, nil
	}
	b, err := x.asBool()
	return BoolV(!b), err
}

var errDivZero = errors.New("division by zero")
var errRange = errors.New("bigint out of range")

func (n *binNode) eval(s *State) (Value, error) {
	l, err := n.l.eval(s)
	if err != nil {
		return l, err
	}
	// AND and OR short-circuit as pgbench's evalLazyFunc: a NULL left
	// operand gives NULL, whatever the right one; a NULL right operand
	// (reached) gives NULL.
	if n.code == opAnd || n.code == opOr {
		if l.K == Null {
			return l, nil
		}
		lb, err := l.asBool()
		if err != nil {
			return l, err
		}
		if lb == (n.code == opOr) {
			return BoolV(lb), nil
		}
		r, err := n.r.eval(s)
		if err != nil || r.K == Null {
			return r, err
		}
		rb, err := r.asBool()
		if err != nil {
			return r, err
		}
		return BoolV(rb), nil
	}
	r, err := n.r.eval(s)
	if err != nil {
		return r, err
	}
	// Any NULL operand makes the result NULL (evalStandardFunc).
	if l.K == Null || r.K == Null {
		return Value{}, nil
	}
	if n.code <= opDiv && l.K == Int && r.K == Int {
		return intArith(n.code, l.I, r.I)
	}
	switch n.code {
	case opAdd, opSub, opMul, opDiv:
		if l.K == Double || r.K == Double {
			a, err := l.asDouble()
			if err != nil {
				return l, err
			}
			b, err := r.asDouble()
			if err != nil {
				return r, err
			}
			switch n.code {
			case opAdd:
				return DoubleV(a + b), nil
			case opSub:
				return DoubleV(a - b), nil
			case opMul:
				return DoubleV(a * b), nil
			}
			// IEEE division, as pgbench: 1.0/0 is Infinity, 0.0/0 NaN.
			return DoubleV(a / b), nil
		}
		a, err := l.asInt()
		if err != nil {
			return l, err
		}
		b, err := r.asInt()
		if err != nil {
			return r, err
		}
		return intArith(n.code, a, b)
	case opMod, opBitAnd, opBitOr, opBitXor, opShl, opShr:
		a, err := l.asInt()
		if err != nil {
			return l, err
		}
		b, err := r.asInt()
		if err != nil {
			return r, err
		}
		switch n.code {
		case opMod:
			if b == 0 {
				return Value{}, errDivZero
			}
			if b == -1 {
				return IntV(0), nil
			}
			return IntV(a % b), nil
		case opBitAnd:
			return IntV(a & b), nil
		case opBitOr:
			return IntV(a | b), nil
		case opBitXor:
			return IntV(a ^ b), nil
		case opShl:
			return IntV(a << (uint64(b) & 63)), nil
		}
		return IntV(a >> (uint64(b) & 63)), nil
	}
	// Comparisons: as doubles if either operand is one, else as integers.
	var c int
	if l.K == Double || r.K == Double {
		a, err := l.asDouble()
		if err != nil {
			return l, err
		}
		b, err := r.asDouble()
		if err != nil {
			return r, err
		}
		switch {
		case a < b:
			c = -1
		case a > b:
			c = 1
		case a == b:
			c = 0
		default: // NaN: every comparison but <> is false
			return BoolV(n.code == opNe), nil
		}
	} else {
		a, err := l.asInt()
		if err != nil {
			return l, err
		}
		b, err := r.asInt()
		if err != nil {
			return r, err
		}
		c = cmp(a < b, a > b)
	}
	switch n.code {
	case opEq:
		return BoolV(c == 0), nil
	case opNe:
		return BoolV(c != 0), nil
	case opLt:
		return BoolV(c < 0), nil
	case opLe:
		return BoolV(c <= 0), nil
	case opGt:
		return BoolV(c > 0), nil
	}
	return BoolV(c >= 0), nil
}

// intArith is +, -, * or / of two integers, with pgbench's overflow and
// division checks.
func intArith(code opCode, a, b int64) (Value, error) {
	switch code {
	case opAdd:
		c := a + b
		if (c > a) != (b > 0) {
			return Value{}, errors.New("bigint add out of range")
		}
		return IntV(c), nil
	case opSub:
		c := a - b
		if (c < a) != (b > 0) {
			return Value{}, errors.New("bigint sub out of range")
		}
		return IntV(c), nil
	case opMul:
		hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
		neg := (a < 0) != (b < 0)
		if hi != 0 || (lo > math.MaxInt64 && !(neg && lo == 1<<63)) || a == math.MinInt64 && b != 1 && b != 0 || b == math.MinInt64 && a != 1 && a != 0 {
			return Value{}, errors.New("bigint mul out of range")
		}
		return IntV(a * b), nil
	}
	if b == 0 {
		return Value{}, errDivZero
	}
	if b == -1 {
		if a == math.MinInt64 {
			return Value{}, errors.New("bigint div out of range")
		}
		return IntV(-a), nil
	}
	return IntV(a / b), nil
}

func cmp(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func (n *randomNode) eval(s *State) (Value, error) {
	lo, err := n.lo.eval(s)
	if err != nil {
		return lo, err
	}
	hi, err := n.hi.eval(s)
	if err != nil {
		return hi, err
	}
	if lo.K == Null || hi.K == Null {
		return Value{}, nil
	}
	v, err := random(s, lo, hi)
	if err != nil {
		return v, fmt.Errorf("random(): %w", err)
	}
	return v, nil
}

func (n *caseNode) eval(s *State) (Value, error) {
	for i, w := range n.whens {
		v, err := w.eval(s)
		if err != nil {
			return v, err
		}
		b, err := v.Truthy()
		if err != nil {
			return v, err
		}
		if b {
			return n.thens[i].eval(s)
		}
	}
	if n.els == nil {
		return Value{}, nil
	}
	return n.els.eval(s)
}

func (n *funcNode) eval(s *State) (Value, error) {
	if len(n.args) > MaxFuncArgs {
		return Value{}, fmt.Errorf("too many function arguments, maximum is %d", MaxFuncArgs)
	}
	// The arguments go on the state's stack (nested calls push theirs
	// above), so that a call allocates nothing.
	var args []Value
	if s == nil {
		args = make([]Value, len(n.args))
	}
	base := 0
	if s != nil {
		base = len(s.stack)
	}
	for i, a := range n.args {
		v, err := a.eval(s)
		if err != nil {
			if s != nil {
				s.stack = s.stack[:base]
			}
			return v, err
		}
		if s == nil {
			args[i] = v
		} else {
			s.stack = append(s.stack, v)
		}
	}
	if s != nil {
		args = s.stack[base:len(s.stack):len(s.stack)]
	}
	var v Value
	var err error
	if n.f.name == "debug" || !hasNull(args) {
		v, err = n.f.fn(s, args)
	}
	if s != nil {
		s.stack = s.stack[:base]
	}
	if err != nil {
		return v, fmt.Errorf("%s(): %w", n.f.name, err)
	}
	return v, nil
}

// MaxFuncArgs is pgbench's MAX_FARGS: a call with more arguments parses
// but fails when it is evaluated.
const MaxFuncArgs = 16

// hasNull reports whether a function argument is NULL: the call's value
// is then NULL (but for debug()), as pgbench's evalStandardFunc.
func hasNull(a []Value) bool {
	for i := range a {
		if a[i].K == Null {
			return true
		}
	}
	return false
}
