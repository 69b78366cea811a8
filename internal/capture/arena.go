package capture

import "unsafe"

// Arena makes strings out of byte slices by copying them into large
// shared blocks: one allocation per block instead of one per statement,
// and blocks the garbage collector need not scan. A block stays alive
// while any of its strings does; parsers use it for statement texts,
// which live until the capture is written.
type Arena struct {
	buf []byte
}

// arenaBlock is the size of a block; longer texts get their own
// allocation.
const arenaBlock = 1 << 20

// String returns b as a string.
func (a *Arena) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaBlock/16 {
		return string(b)
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, arenaBlock)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], len(b))
}
