// Package sbrand reproduces sysbench 1.0's pseudo-random number generators:
// the xoroshiro128+ source, the uniform, gaussian, special, pareto and
// zipfian distributions selected by --rand-type, sb_rand_str templates and
// the sb_rand_unique sequence. The formulas follow src/sb_rand.c of sysbench
// (akopytov/sysbench); the zipfian distribution is the one sysbench 1.1 added
// (1.0.20 knows only the first four).
package sbrand

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Dist names a distribution accepted by --rand-type.
type Dist string

// The distributions of --rand-type (sb_rand.c, sb_rand_init).
const (
	Uniform  Dist = "uniform"
	Gaussian Dist = "gaussian"
	Special  Dist = "special"
	Pareto   Dist = "pareto"
	Zipfian  Dist = "zipfian"
)

// Dists lists the accepted --rand-type values.
var Dists = []Dist{Uniform, Gaussian, Special, Pareto, Zipfian}

// Config holds sysbench's random-number options (sb_rand.c, rand_args).
type Config struct {
	// Type is the distribution Rand.Default draws from (--rand-type).
	// sysbench 1.0.20 defaults to "special".
	Type Dist
	// SpecIter is the number of uniform draws summed by the gaussian and
	// special distributions (--rand-spec-iter).
	SpecIter int
	// SpecPct is the percentage of the range holding the special values
	// (--rand-spec-pct).
	SpecPct int
	// SpecRes is the percentage of draws that fall on special values
	// (--rand-spec-res).
	SpecRes int
	// ParetoH is the shape parameter of the pareto distribution (--rand-pareto-h).
	ParetoH float64
	// ZipfianExp is the exponent (theta) of the zipfian distribution
	// (--rand-zipfian-exp).
	ZipfianExp float64
}

// DefaultConfig returns sysbench 1.0.20's defaults.
func DefaultConfig() Config {
	return Config{
		Type:       Special,
		SpecIter:   12,
		SpecPct:    1,
		SpecRes:    75,
		ParetoH:    0.2,
		ZipfianExp: 0.8,
	}
}

// Flags registers the --rand-* flags on fs, bound to c.
func (c *Config) Flags(fs *pflag.FlagSet) {
	fs.Var((*distValue)(&c.Type), "rand-type",
		"random numbers distribution {uniform, gaussian, special, pareto, zipfian} to use by default")
	fs.IntVar(&c.SpecIter, "rand-spec-iter", c.SpecIter,
		"number of iterations for the special and gaussian distributions")
	fs.IntVar(&c.SpecPct, "rand-spec-pct", c.SpecPct,
		"percentage of the entire range where 'special' values will fall in the special distribution")
	fs.IntVar(&c.SpecRes, "rand-spec-res", c.SpecRes,
		"percentage of 'special' values to use for the special distribution")
	fs.Float64Var(&c.ParetoH, "rand-pareto-h", c.ParetoH, "shape parameter for the Pareto distribution")
	fs.Float64Var(&c.ZipfianExp, "rand-zipfian-exp", c.ZipfianExp,
		"shape parameter (exponent, theta) for the Zipfian distribution")
}

// Validate reports every problem with c.
func (c Config) Validate() []error {
	var errs []error
	if _, err := parseDist(string(c.Type)); err != nil {
		errs = append(errs, err)
	}
	if c.SpecIter < 1 {
		errs = append(errs, fmt.Errorf("--rand-spec-iter must be at least 1, got %d", c.SpecIter))
	}
	if c.SpecPct < 0 || c.SpecPct > 100 {
		errs = append(errs, fmt.Errorf("--rand-spec-pct must be within [0, 100], got %d", c.SpecPct))
	}
	if c.SpecRes < 0 || c.SpecRes > 100 {
		errs = append(errs, fmt.Errorf("--rand-spec-res must be within [0, 100], got %d", c.SpecRes))
	}
	if !(c.ParetoH > 0 && c.ParetoH < 1) {
		errs = append(errs, fmt.Errorf("--rand-pareto-h must be within (0, 1), got %g", c.ParetoH))
	}
	if !(c.ZipfianExp >= 0) || math.IsInf(c.ZipfianExp, 0) {
		errs = append(errs, fmt.Errorf("--rand-zipfian-exp must be >= 0, got %g", c.ZipfianExp))
	}
	return errs
}

// Params returns the options as plain values for a run summary.
func (c Config) Params() map[string]any {
	return map[string]any{
		"rand_type":        string(c.Type),
		"rand_spec_iter":   c.SpecIter,
		"rand_spec_pct":    c.SpecPct,
		"rand_spec_res":    c.SpecRes,
		"rand_pareto_h":    c.ParetoH,
		"rand_zipfian_exp": c.ZipfianExp,
	}
}

func parseDist(s string) (Dist, error) {
	d := Dist(strings.ToLower(s))
	for _, ok := range Dists {
		if d == ok {
			return d, nil
		}
	}
	return "", fmt.Errorf("--rand-type: invalid random numbers distribution %q (want uniform, gaussian, special, pareto or zipfian)", s)
}

// distValue adapts a Dist to pflag.Value.
type distValue Dist

func (d *distValue) String() string { return string(*d) }
func (d *distValue) Type() string   { return "string" }
func (d *distValue) Set(s string) error {
	v, err := parseDist(s)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "--rand-type: "))
	}
	*d = distValue(v)
	return nil
}

// params are the constants sb_rand_init precomputes from a Config.
type params struct {
	dist         Dist
	iter         int
	iterMult     float64 // 1 / rand_iter
	pctMult      float64 // rand_pct / 100
	pct2Mult     float64 // rand_pct / 200
	resMult      float64 // 100 / (100 - rand_res)
	paretoPower  float64 // log(h) / log(1-h)
	zipfExp      float64
	zipfS        float64
	zipfHIntX1   float64
	zipfLastN    uint64  // cache of hIntegral(n + 0.5) for the last n
	zipfLastHInt float64 //
}

func newParams(c Config) params {
	p := params{
		dist:        c.Type,
		iter:        c.SpecIter,
		iterMult:    1.0 / float64(c.SpecIter),
		pctMult:     float64(c.SpecPct) / 100.0,
		pct2Mult:    float64(c.SpecPct) / 200.0,
		resMult:     100.0 / (100.0 - float64(c.SpecRes)),
		paretoPower: math.Log(c.ParetoH) / math.Log(1.0-c.ParetoH),
		zipfExp:     c.ZipfianExp,
	}
	e := p.zipfExp
	p.zipfS = 2 - hIntegralInverse(hIntegral(2.5, e)-h(2, e), e)
	p.zipfHIntX1 = hIntegral(1.5, e) - 1
	return p
}

// Rand is one worker's generator: a xoroshiro128+ state plus the
// distribution parameters. A Rand is not safe for concurrent use; give each
// goroutine its own, as sysbench gives each thread its own state.
type Rand struct {
	s0, s1 uint64
	p      params
}

// New returns a generator for c seeded with seed. c must be valid (see
// Validate); an unknown Type makes Default draw uniformly.
func (c Config) New(seed int64) *Rand {
	r := &Rand{p: newParams(c)}
	r.Seed(seed)
	return r
}

// Seed resets the state from seed. sysbench seeds xoroshiro128+ from libc
// random(); dbarena uses splitmix64, the seeding its authors recommend.
func (r *Rand) Seed(seed int64) {
	x := uint64(seed)
	r.s0 = splitmix64(&x)
	r.s1 = splitmix64(&x)
	if r.s0 == 0 && r.s1 == 0 {
		r.s1 = 1
	}
}

func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64 returns the next xoroshiro128+ output (xoroshiro128plus.h).
func (r *Rand) Uint64() uint64 {
	s0, s1 := r.s0, r.s1
	result := s0 + s1
	s1 ^= s0
	r.s0 = (s0<<55 | s0>>9) ^ s1 ^ (s1 << 14)
	r.s1 = s1<<36 | s1>>28
	return result
}

// Float64 returns a uniform double in [0, 1) built from the top 52 bits, as
// sb_rand_uniform_double does.
func (r *Rand) Float64() float64 {
	return math.Float64frombits(0x3FF<<52|r.Uint64()>>12) - 1.0
}

// Default draws from [a, b] with the configured distribution
// (sb_rand_default, sysbench.rand.default and the Lua sb_rand). a <= b.
func (r *Rand) Default(a, b int64) int64 {
	switch r.p.dist {
	case Special:
		return r.Special(a, b)
	case Gaussian:
		return r.Gaussian(a, b)
	case Pareto:
		return r.Pareto(a, b)
	case Zipfian:
		return r.Zipfian(a, b)
	}
	return r.Uniform(a, b)
}

// Uniform draws uniformly from [a, b] (sb_rand_uniform). a <= b.
func (r *Rand) Uniform(a, b int64) int64 {
	return a + clamp(int64(r.Float64()*float64(b-a+1)), b-a)
}

// Gaussian sums --rand-spec-iter uniform draws (sb_rand_gaussian). a <= b.
func (r *Rand) Gaussian(a, b int64) int64 {
	t := float64(b - a + 1)
	sum := 0.0
	for i := 0; i < r.p.iter; i++ {
		sum += r.Float64() * t
	}
	return a + clamp(int64(sum*r.p.iterMult), b-a)
}

// Special is sysbench's "special" distribution (sb_rand_special): with the
// defaults, 75% of draws fall uniformly into the middle 1% of [a, b] and the
// rest follow the gaussian shape over the whole range. a <= b.
func (r *Rand) Special(a, b int64) int64 {
	t := float64(b - a)
	rangeSize := t * r.p.resMult
	rnd := r.Float64()
	res := rnd * rangeSize
	if res < t {
		sum := 0.0
		for i := 0; i < r.p.iter; i++ {
			sum += r.Float64()
		}
		return a + clamp(int64(sum*t*r.p.iterMult), b-a)
	}
	d := t * r.p.pctMult
	res = rnd * (d + 1)
	res += t/2 - t*r.p.pct2Mult
	return a + clamp(int64(res), b-a)
}

// Pareto draws from the Pareto distribution with --rand-pareto-h
// (sb_rand_pareto); low values are the frequent ones. a <= b.
func (r *Rand) Pareto(a, b int64) int64 {
	return a + clamp(int64(float64(b-a+1)*math.Pow(r.Float64(), r.p.paretoPower)), b-a)
}

// Zipfian draws from the bounded Zipf distribution with exponent
// --rand-zipfian-exp by rejection-inversion (sb_rand_zipfian, sysbench 1.1);
// a is the most frequent value. a <= b.
func (r *Rand) Zipfian(a, b int64) int64 {
	n := uint64(b - a + 1)
	e := r.p.zipfExp
	if r.p.zipfLastN != n {
		r.p.zipfLastN = n
		r.p.zipfLastHInt = hIntegral(float64(n)+0.5, e)
	}
	hIntN := r.p.zipfLastHInt
	for {
		u := hIntN + r.Float64()*(r.p.zipfHIntX1-hIntN)
		x := hIntegralInverse(u, e)
		k := uint64(x + 0.5)
		if x+0.5 < 1 {
			k = 1
		} else if k > n {
			k = n
		}
		if float64(k)-x <= r.p.zipfS || u >= hIntegral(float64(k)+0.5, e)-h(float64(k), e) {
			return a + int64(k) - 1
		}
	}
}

// clamp keeps an offset within [0, max], guarding against floating-point
// rounding at the top of a range; sysbench's formulas never exceed it in
// exact arithmetic.
func clamp(v, max int64) int64 {
	if v > max {
		return max
	}
	if v < 0 {
		return 0
	}
	return v
}

// hIntegral is H(x) = (x^(1-e) - 1) / (1-e), or log(x) when e == 1.
func hIntegral(x, e float64) float64 {
	logX := math.Log(x)
	return helper2((1-e)*logX) * logX
}

// h is 1 / x^e.
func h(x, e float64) float64 { return math.Exp(-e * math.Log(x)) }

// hIntegralInverse is the inverse of hIntegral.
func hIntegralInverse(x, e float64) float64 {
	t := x * (1 - e)
	if t < -1 {
		t = -1
	}
	return math.Exp(helper1(t) * x)
}

// helper1 is log(1+x)/x with a Taylor expansion near 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(0.33333333333333333-0.25*x))
}

// helper2 is (exp(x)-1)/x with a Taylor expansion near 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*0.33333333333333333*(1+0.25*x))
}

// AppendStr appends a string built from pattern to dst, as sb_rand_str
// does: each '#' becomes a random digit, each '@' a random lowercase letter,
// any other byte is copied.
func (r *Rand) AppendStr(dst []byte, pattern string) []byte {
	for i := 0; i < len(pattern); i++ {
		switch ch := pattern[i]; ch {
		case '#':
			dst = append(dst, byte(r.Uniform('0', '9')))
		case '@':
			dst = append(dst, byte(r.Uniform('a', 'z')))
		default:
			dst = append(dst, ch)
		}
	}
	return dst
}

// Str returns a string built from pattern (sysbench.rand.string); see AppendStr.
func (r *Rand) Str(pattern string) string {
	var buf [256]byte
	return string(r.AppendStr(buf[:0], pattern))
}

// String describes the generator's distribution, e.g. "special(iter=12,pct=1,res=75)".
func (r *Rand) String() string {
	switch r.p.dist {
	case Special:
		return "special(iter=" + strconv.Itoa(r.p.iter) + ",pct=" + strconv.FormatFloat(r.p.pctMult*100, 'g', -1, 64) +
			",res=" + strconv.FormatFloat(100-100/r.p.resMult, 'g', -1, 64) + ")"
	case Gaussian:
		return "gaussian(iter=" + strconv.Itoa(r.p.iter) + ")"
	case Pareto:
		return "pareto(power=" + strconv.FormatFloat(r.p.paretoPower, 'g', 6, 64) + ")"
	case Zipfian:
		return "zipfian(exp=" + strconv.FormatFloat(r.p.zipfExp, 'g', -1, 64) + ")"
	}
	return "uniform"
}
