package pgscript

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"
)

// function is one of pgbench's built-in functions.
type function struct {
	name     string
	min, max int // argument counts; max -1 for any
	// random marks functions whose value is not fixed by their arguments
	// (random draws, or a default seed), so they are never folded.
	random bool
	// seeded marks hash() and permute(), whose optional last argument
	// is :default_seed.
	seeded bool
	fn     func(s *State, a []Value) (Value, error)
}

var functions = map[string]*function{}

func init() {
	for _, f := range []*function{
		{name: "abs", min: 1, max: 1, fn: fnAbs},
		{name: "debug", min: 1, max: 1, random: true, fn: fnDebug},
		{name: "double", min: 1, max: 1, fn: func(_ *State, a []Value) (Value, error) { f, err := a[0].asDouble(); return DoubleV(f), err }},
		{name: "int", min: 1, max: 1, fn: func(_ *State, a []Value) (Value, error) { i, err := a[0].asInt(); return IntV(i), err }},
		{name: "exp", min: 1, max: 1, fn: mathFn(math.Exp)},
		{name: "ln", min: 1, max: 1, fn: mathFn(math.Log)},
		{name: "sqrt", min: 1, max: 1, fn: mathFn(math.Sqrt)},
		{name: "pi", min: 0, max: 0, fn: func(*State, []Value) (Value, error) { return DoubleV(math.Pi), nil }},
		{name: "pow", min: 2, max: 2, fn: fnPow},
		{name: "power", min: 2, max: 2, fn: fnPow},
		{name: "mod", min: 2, max: 2, fn: fnMod},
		{name: "least", min: 1, max: -1, fn: func(_ *State, a []Value) (Value, error) { return extreme(a, true) }},
		{name: "greatest", min: 1, max: -1, fn: func(_ *State, a []Value) (Value, error) { return extreme(a, false) }},
		{name: "hash", seeded: true, min: 1, max: 2, random: true, fn: hashFn(HashMurmur2)},
		{name: "hash_murmur2", seeded: true, min: 1, max: 2, random: true, fn: hashFn(HashMurmur2)},
		{name: "hash_fnv1a", seeded: true, min: 1, max: 2, random: true, fn: hashFn(HashFNV1a)},
		{name: "permute", seeded: true, min: 2, max: 3, random: true, fn: fnPermute},
		{name: "random", min: 2, max: 2, random: true, fn: fnRandom},
		{name: "random_exponential", min: 3, max: 3, random: true, fn: fnRandomExponential},
		{name: "random_gaussian", min: 3, max: 3, random: true, fn: fnRandomGaussian},
		{name: "random_zipfian", min: 3, max: 3, random: true, fn: fnRandomZipfian},
	} {
		functions[f.name] = f
	}
}

func fnAbs(_ *State, a []Value) (Value, error) {
	v, err := a[0].typed()
	if err != nil {
		return v, err
	}
	if v.K == Double {
		return DoubleV(math.Abs(v.F)), nil
	}
	i, err := v.asInt()
	if err != nil {
		return v, err
	}
	if i == math.MinInt64 {
		return Value{}, errRange
	}
	return IntV(abs64(i)), nil
}

func mathFn(f func(float64) float64) func(*State, []Value) (Value, error) {
	return func(_ *State, a []Value) (Value, error) {
		x, err := a[0].asDouble()
		return DoubleV(f(x)), err
	}
}

func fnPow(_ *State, a []Value) (Value, error) {
	x, err := a[0].asDouble()
	if err != nil {
		return Value{}, err
	}
	y, err := a[1].asDouble()
	return DoubleV(math.Pow(x, y)), err
}

func fnMod(_ *State, a []Value) (Value, error) {
	return newBin("%", &constNode{a[0]}, &constNode{a[1]}).eval(nil)
}

// extreme is least (or greatest): a double if any argument is a double.
func extreme(a []Value, least bool) (Value, error) {
	dbl := false
	for i := range a {
		v, err := a[i].typed()
		if err != nil {
			return v, err
		}
		a[i] = v
		dbl = dbl || v.K == Double
	}
	if dbl {
		best, err := a[0].asDouble()
		if err != nil {
			return Value{}, err
		}
		for _, v := range a[1:] {
			f, err := v.asDouble()
			if err != nil {
				return Value{}, err
			}
			if (f < best) == least && f != best {
				best = f
			}
		}
		return DoubleV(best), nil
	}
	best, err := a[0].asInt()
	if err != nil {
		return Value{}, err
	}
	for _, v := range a[1:] {
		i, err := v.asInt()
		if err != nil {
			return Value{}, err
		}
		if (i < best) == least && i != best {
			best = i
		}
	}
	return IntV(best), nil
}

func seedArg(s *State, a []Value, i int) (int64, error) {
	if len(a) > i {
		return a[i].asInt()
	}
	if s == nil {
		return 0, errors.New("no default seed")
	}
	return s.DefaultSeed, nil
}

func hashFn(h func(v int64, seed uint64) int64) func(*State, []Value) (Value, error) {
	return func(s *State, a []Value) (Value, error) {
		v, err := a[0].asInt()
		if err != nil {
			return Value{}, err
		}
		seed, err := seedArg(s, a, 1)
		return IntV(h(v, uint64(seed))), err
	}
}

// pgbench's hash constants (pgbench.c).
const (
	fnvPrime        = 0x100000001b3
	fnvOffsetBasis  = 0xcbf29ce484222325
	mm2Mul          = 0xc6a4a7935bd1e995
	mm2MulTimes8    = 0x35253c9ade8f4ca8
	mm2Rot          = 47
	minGaussian     = 2.0
	minZipfian      = 1.001
	maxZipfian      = 1000.0
	maxRandomRange  = math.MaxInt64
	errEmptyRange   = constErr("empty range given to random")
	errRangeTooWide = constErr("random range is too large")
)

type constErr string

func (e constErr) Error() string { return string(e) }

// HashFNV1a is pgbench's hash_fnv1a(v, seed).
func HashFNV1a(v int64, seed uint64) int64 {
	r := uint64(fnvOffsetBasis) ^ seed
	for i := 0; i < 8; i++ {
		octet := uint64(v & 0xff)
		v >>= 8
		r ^= octet
		r *= fnvPrime
	}
	return int64(r)
}

// HashMurmur2 is pgbench's hash_murmur2(v, seed), also hash(v, seed).
func HashMurmur2(v int64, seed uint64) int64 {
	r := seed ^ mm2MulTimes8
	k := uint64(v)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	r ^= k
	r *= mm2Mul
	r ^= r >> mm2Rot
	r *= mm2Mul
	r ^= r >> mm2Rot
	return int64(r)
}

func bounds(l, h Value) (lo, hi int64, err error) {
	if lo, err = l.asInt(); err != nil {
		return
	}
	if hi, err = h.asInt(); err != nil {
		return
	}
	if lo > hi {
		return lo, hi, errEmptyRange
	}
	if hi-lo < 0 || hi-lo == maxRandomRange {
		return lo, hi, errRangeTooWide
	}
	return lo, hi, nil
}

func fnRandom(s *State, a []Value) (Value, error) { return random(s, a[0], a[1]) }

func random(s *State, lo, hi Value) (Value, error) {
	l, h, err := bounds(lo, hi)
	if err != nil {
		return Value{}, err
	}
	return IntV(l + int64(s.Rand.Range(0, uint64(h-l)))), nil
}

func param(a []Value) (float64, error) { return a[2].asDouble() }

func fnRandomExponential(s *State, a []Value) (Value, error) {
	lo, hi, err := bounds(a[0], a[1])
	if err != nil {
		return Value{}, err
	}
	p, err := param(a)
	if err != nil {
		return Value{}, err
	}
	if !(p > 0) {
		return Value{}, errors.New("exponential parameter must be greater than zero")
	}
	return IntV(ExponentialRand(s.Rand, lo, hi, p)), nil
}

func fnRandomGaussian(s *State, a []Value) (Value, error) {
	lo, hi, err := bounds(a[0], a[1])
	if err != nil {
		return Value{}, err
	}
	p, err := param(a)
	if err != nil {
		return Value{}, err
	}
	if !(p >= minGaussian) {
		return Value{}, errors.New("gaussian parameter must be at least 2.0")
	}
	return IntV(GaussianRand(s.Rand, lo, hi, p)), nil
}

func fnRandomZipfian(s *State, a []Value) (Value, error) {
	lo, hi, err := bounds(a[0], a[1])
	if err != nil {
		return Value{}, err
	}
	p, err := param(a)
	if err != nil {
		return Value{}, err
	}
	if !(p >= minZipfian && p <= maxZipfian) {
		return Value{}, errors.New("zipfian parameter must be in range [1.001, 1000]")
	}
	return IntV(ZipfianRand(s.Rand, lo, hi, p)), nil
}

func fnPermute(s *State, a []Value) (Value, error) {
	v, err := a[0].asInt()
	if err != nil {
		return Value{}, err
	}
	size, err := a[1].asInt()
	if err != nil {
		return Value{}, err
	}
	if size <= 0 {
		return Value{}, errors.New("permute size parameter must be greater than zero")
	}
	seed, err := seedArg(s, a, 2)
	return IntV(Permute(v, size, seed)), err
}

// ExponentialRand is pgbench's getExponentialRand.
func ExponentialRand(r *PRNG, lo, hi int64, p float64) int64 {
	cut := math.Exp(-p)
	u := 1.0 - r.Double()
	rnd := -math.Log(cut+(1.0-cut)*u) / p
	return lo + int64(float64(hi-lo+1)*rnd)
}

// GaussianRand is pgbench's getGaussianRand.
func GaussianRand(r *PRNG, lo, hi int64, p float64) int64 {
	var stdev float64
	for {
		// Box-Muller on (0, 1] uniforms, as pgbench.
		r1, r2 := 1.0-r.Double(), 1.0-r.Double()
		stdev = math.Sqrt(-2.0*math.Log(r1)) * math.Sin(2.0*math.Pi*r2)
		if stdev >= -p && stdev < p {
			break
		}
	}
	rnd := (stdev + p) / (p * 2.0)
	return lo + int64(float64(hi-lo+1)*rnd)
}

// ZipfianRand is pgbench's getZipfianRand (Devroye's rejection method,
// computeIterativeZipfian).
func ZipfianRand(r *PRNG, lo, hi int64, s float64) int64 {
	n := hi - lo + 1
	if n <= 1 {
		return lo
	}
	b := math.Pow(2.0, s-1.0)
	for {
		u, v := r.Double(), r.Double()
		x := math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			return lo - 1 + int64(x)
		}
	}
}

// Permute is pgbench's permute(v, size, seed): a pseudorandom permutation
// of [0, size), the same for pgbench and dbarena given the same seed.
func Permute(val, isize, seed int64) int64 {
	if isize < 2 {
		return 0
	}
	var st PRNG
	st.Seed(uint64(seed))
	size := uint64(isize)
	v := uint64(val) % size
	masklen := 63 - bits.LeadingZeros64(size)
	mask := uint64(1)<<masklen - 1
	for i := 0; i < 6; i++ {
		m := st.Uint64()&mask | 1
		r := st.Uint64() & mask
		if v <= mask {
			v = ((v * m) ^ r) & mask
			v = ((v << 1) & mask) | (v >> (masklen - 1))
		}
		m = st.Uint64()&mask | 1
		r = st.Uint64() & mask
		t := size - 1 - v
		if t <= mask {
			t = ((t * m) ^ r) & mask
			t = ((t << 1) & mask) | (t >> (masklen - 1))
			v = size - 1 - t
		}
		r = st.Range(0, size-1)
		v = (v + r) % size
	}
	return int64(v)
}

// fnDebug is debug(v): v, written to the state's Debug (standard error by
// default) as pgbench writes it: "debug(script=S,command=C): int 3", with
// S the script's 0-based number and C the command's 1-based one.
func fnDebug(s *State, a []Value) (Value, error) {
	v := a[0]
	var w io.Writer = os.Stderr
	script, command := 0, 0
	if s != nil {
		if s.Debug != nil {
			w = s.Debug
		}
		script, command = s.Script, s.Command+1
	}
	var text string
	switch v.K {
	case Null:
		text = "null"
	case Bool:
		text = "boolean " + v.Text()
	case Int:
		text = "int " + v.Text()
	case Double:
		switch {
		case math.IsInf(v.F, 1):
			text = "double inf"
		case math.IsInf(v.F, -1):
			text = "double -inf"
		case v.F != v.F:
			text = "double nan"
		default:
			text = "double " + strconv.FormatFloat(v.F, 'g', 15, 64)
		}
	default:
		text = "string " + v.S
	}
	fmt.Fprintf(w, "debug(script=%d,command=%d): %s\n", script, command, text)
	return v, nil
}
