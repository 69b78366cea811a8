package pgscript

import (
	"math/bits"
	"sync"
)

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

// Streams are the seeds of pgbench's random streams, derived from its
// random seed as pgbench 15 derives them: a base generator seeded with
// the seed gives, in order, one seed per client (the stream of random
// functions), then :default_seed (unless -D defined it), then three seeds
// per thread (script choice, throttling, log sampling). dbarena runs each
// client as a thread of its own, so its streams are those of
// `pgbench -c N -j N`; with one client, those of any pgbench run of one
// client.
type Streams struct {
	base    PRNG
	Client  []uint64 // seeds of the clients' function streams
	Default int64    // :default_seed
	Choose  []uint64 // seeds of the clients' script choice streams
	mu      sync.Mutex
	extra   []uint64 // beyond the announced clients (ClientSeeds)
}

// NewStreams derives the streams of clients clients from seed.
// defaultDefined says that :default_seed is given (-D), so none is drawn.
func NewStreams(seed uint64, clients int, defaultDefined bool) *Streams {
	st := &Streams{}
	st.base.Seed(seed)
	for i := 0; i < clients; i++ {
		st.Client = append(st.Client, st.base.Uint64())
	}
	if !defaultDefined {
		st.Default = int64(st.base.Uint64())
	}
	for i := 0; i < clients; i++ {
		st.Choose = append(st.Choose, st.base.Uint64())
		st.base.Uint64() // throttling
		st.base.Uint64() // log sampling
	}
	return st
}

// ClientSeeds returns the seeds of client id's function and script
// choice streams. A client beyond those announced (a run that did not
// say its thread count) gets seeds drawn after every announced one.
func (st *Streams) ClientSeeds(id int) (fn, choose uint64) {
	if id < len(st.Client) {
		return st.Client[id], st.Choose[id]
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	k := 2 * (id - len(st.Client))
	for len(st.extra) < k+2 {
		st.extra = append(st.extra, st.base.Uint64())
	}
	return st.extra[k], st.extra[k+1]
}
