package pgscript

import "math/bits"

// PRNG is PostgreSQL's pg_prng: xoroshiro128** seeded through splitmix64.
// permute() depends on it to give pgbench's permutations.
type PRNG struct{ s0, s1 uint64 }

func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	v := *state
	v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9
	v = (v ^ (v >> 27)) * 0x94D049BB133111EB
	return v ^ (v >> 31)
}

// NewPRNG returns a generator seeded with seed.
func NewPRNG(seed uint64) *PRNG {
	var p PRNG
	p.Seed(seed)
	return &p
}

// Seed is pg_prng_seed.
func (p *PRNG) Seed(seed uint64) {
	p.s0 = splitmix64(&seed)
	p.s1 = splitmix64(&seed)
	if p.s0 == 0 && p.s1 == 0 {
		p.s0 = 1
	}
}

// Uint64 is pg_prng_uint64.
func (p *PRNG) Uint64() uint64 {
	s0 := p.s0
	sx := p.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	p.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ (sx << 16)
	p.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// Range is pg_prng_uint64_range: uniform in [lo, hi].
func (p *PRNG) Range(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	rng := hi - lo
	shift := uint(bits.LeadingZeros64(rng))
	for {
		v := p.Uint64() >> shift
		if v <= rng {
			return lo + v
		}
	}
}

// Double is pg_prng_double: uniform in [0, 1).
func (p *PRNG) Double() float64 {
	return float64(p.Uint64()>>(64-52)) * (1.0 / (1 << 52))
}
