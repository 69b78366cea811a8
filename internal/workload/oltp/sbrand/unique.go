package sbrand

import "sync/atomic"

// Unique yields a sequence of distinct pseudo-random uint32 values
// (sb_rand_unique, after Jeff Preshing's RandomSequence): the first 2^32
// values never repeat. It is safe for concurrent use, like sysbench's, which
// all threads share.
type Unique struct {
	index  atomic.Uint32
	offset uint32
}

// NewUnique seeds a sequence (rand_unique_seed); sysbench seeds it with two
// libc random() values, dbarena derives them from seed.
func NewUnique(seed int64) *Unique {
	x := uint64(seed)
	index, offset := uint32(splitmix64(&x)), uint32(splitmix64(&x))
	u := &Unique{offset: permute(permute(offset) + 0x46790905)}
	u.index.Store(permute(permute(index) + 0x682f0161))
	return u
}

// Next returns the next value of the sequence.
func (u *Unique) Next() uint32 {
	index := u.index.Add(1) - 1
	return permute((permute(index) + u.offset) ^ 0x5bf03635)
}

// permute is a bijection on uint32 based on quadratic residues modulo the
// largest 32-bit prime (rand_unique_permute).
func permute(x uint32) uint32 {
	const prime = 4294967291
	if x >= prime {
		return x
	}
	residue := uint32(uint64(x) * uint64(x) % prime)
	if x <= prime/2 {
		return residue
	}
	return prime - residue
}
