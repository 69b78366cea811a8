package tpcc

import (
	"math/rand/v2"
	"strconv"
)

// rng is the random source of one generator or terminal. It is not safe
// for concurrent use.
type rng struct {
	*rand.Rand
}

// newRNG returns a generator seeded from seed and a stream key, so that any
// worker can reproduce any stream (table, warehouse, district or batch).
func newRNG(seed uint64, key ...uint64) rng {
	k := uint64(0x9e3779b97f4a7c15)
	for _, v := range key {
		k = (k ^ v) * 0xbf58476d1ce4e5b9
		k ^= k >> 31
	}
	return rng{rand.New(rand.NewPCG(seed, k))}
}

// between returns a uniform integer in [lo, hi] (clause 4.3.2.5 "random within [x .. y]").
func (r rng) between(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// nurand is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
// (clause 2.1.6) with the run-time constant c.
func (r rng) nurand(a, x, y, c int) int {
	return (((r.between(0, a) | r.between(x, y)) + c) % (y - x + 1)) + x
}

const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// appendAlnum appends n random alphanumeric characters (clause 4.3.2.2
// a-string; alphanumeric only, so rows never need escaping in TSV).
func (r rng) appendAlnum(b []byte, n int) []byte {
	for n > 0 {
		v := r.Uint64()
		for i := 0; i < 10 && n > 0; i++ {
			c := v & 63
			v >>= 6
			if c < 62 {
				b = append(b, alnum[c])
				n--
			}
		}
	}
	return b
}

// appendAString appends a random a-string of length [lo..hi] (clause 4.3.2.2).
func (r rng) appendAString(b []byte, lo, hi int) []byte {
	return r.appendAlnum(b, r.between(lo, hi))
}

// appendNString appends n random digits (clause 4.3.2.2 n-string).
func (r rng) appendNString(b []byte, n int) []byte {
	for i := 0; i < n; i++ {
		b = append(b, byte('0'+r.IntN(10)))
	}
	return b
}

// appendZip appends a zip code: a random n-string of 4 followed by "11111"
// (clause 4.3.2.7).
func (r rng) appendZip(b []byte) []byte {
	return append(r.appendNString(b, 4), "11111"...)
}

// appendData appends I_DATA / S_DATA: a random a-string [26..50] that, for
// 10% of rows selected at random, holds "ORIGINAL" at a random position
// (clause 4.3.3.1).
func (r rng) appendData(b []byte) []byte {
	n := r.between(26, 50)
	if r.IntN(10) != 0 {
		return r.appendAlnum(b, n)
	}
	pos := r.IntN(n - 8 + 1)
	b = r.appendAlnum(b, pos)
	b = append(b, "ORIGINAL"...)
	return r.appendAlnum(b, n-8-pos)
}

// syllables build C_LAST (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// appendLastName appends the C_LAST of number n in [0..999]: the syllables
// of its three digits (clause 4.3.2.3).
func appendLastName(b []byte, n int) []byte {
	return append(append(append(b, syllables[n/100]...), syllables[n/10%10]...), syllables[n%10]...)
}

// lastName returns the C_LAST of number n.
func lastName(n int) string { return string(appendLastName(nil, n)) }

// appendCents appends a decimal with two digits from an amount in cents.
func appendCents(b []byte, cents int64) []byte {
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = strconv.AppendInt(b, cents/100, 10)
	b = append(b, '.')
	c := cents % 100
	if c < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, c, 10)
}

// Constants of the run-time C values (clause 2.1.6).
const (
	cLastA  = 255
	cIDA    = 1023
	olIIDA  = 8191
	nItems  = 100000
	nDist   = 10 // districts per warehouse
	nCust   = 3000
	nOrders = 3000
	// firstNewOrder is the first undelivered order of each district at load
	// (clause 4.3.3.1: orders 2101..3000 have NEW-ORDER rows).
	firstNewOrder = 2101
)

// Constants are the C values of NURand (clause 2.1.6).
type Constants struct {
	CLast, CID, OLIID int
}

// loadConstants derives the load's C values from the seed.
func loadConstants(seed uint64) Constants {
	r := newRNG(seed, 0xc0)
	return Constants{CLast: r.between(0, cLastA), CID: r.between(0, cIDA), OLIID: r.between(0, olIIDA)}
}

// validRunDelta reports whether C_RUN may be used with C_LOAD for C_LAST:
// the delta |C_RUN - C_LOAD| must be in [65..119] and neither 96 nor 112
// (clause 2.1.6.1).
func validRunDelta(cRun, cLoad int) bool {
	d := cRun - cLoad
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// runConstants picks the run's C values from the load's (clause 2.1.6.1):
// C_LAST at a valid delta from the load's, C_ID and OL_I_ID freely.
func runConstants(load Constants, seed uint64) Constants {
	r := newRNG(seed, 0xc1)
	c := Constants{CID: r.between(0, cIDA), OLIID: r.between(0, olIIDA)}
	for {
		c.CLast = r.between(0, cLastA)
		if validRunDelta(c.CLast, load.CLast) {
			return c
		}
	}
}
