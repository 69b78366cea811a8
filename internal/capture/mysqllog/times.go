package mysqllog

import (
	"bytes"
	"time"
)

// timeCache parses the timestamps of MySQL logs without time.Parse on the
// hot path: the seconds part is parsed once per distinct second.
type timeCache struct {
	key  []byte
	secs int64
}

// parse reads "2024-11-22T22:50:01[.ffffff](Z|±hh:mm)" or the old form
// "241122 22:50:01" / "241122  9:50:01" (MariaDB, MySQL <= 5.6; zone loc),
// with any number of spaces between date and time (MySQL 5.0 wrote
// "051007   21:55:24") and a fraction some Percona builds add
// ("121123 19:56:06.0000001967": microseconds kept) into Unix microseconds.
func (c *timeCache) parse(b []byte, loc *time.Location) (int64, bool) {
	b = bytes.TrimRight(b, " ")
	if len(b) >= 19 && b[4] == '-' && b[10] == 'T' {
		return c.parseISO(b)
	}
	if len(b) < 14 || b[6] != ' ' {
		return 0, false
	}
	sp := 6
	for sp < len(b) && b[sp] == ' ' {
		sp++
	}
	colon := bytes.IndexByte(b[sp:], ':')
	if colon < 1 || colon > 2 || len(b) < sp+colon+6 {
		return 0, false
	}
	end := sp + colon + 6 // after SS
	s, ok := c.cached(b[:end], func() (int64, bool) {
		h := b[sp : sp+colon]
		t := b[sp+colon : end] // ":MM:SS"
		y, ok1 := num(b[0:2])
		mo, ok2 := num(b[2:4])
		d, ok3 := num(b[4:6])
		hh, ok4 := num(h)
		mi, ok5 := num(t[1:3])
		ss, ok6 := num(t[4:6])
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || t[3] != ':' || !valid(mo, d, hh, mi, ss) {
			return 0, false
		}
		return time.Date(2000+y, time.Month(mo), d, hh, mi, ss, 0, loc).Unix(), true
	})
	if !ok {
		return 0, false
	}
	us, ok := fraction(b[end:])
	return s*1e6 + us, ok
}

// fraction reads "" or ".ddd..." into microseconds (digits past the sixth
// are dropped).
func fraction(rest []byte) (int64, bool) {
	if len(rest) == 0 {
		return 0, true
	}
	if rest[0] != '.' || len(rest) == 1 {
		return 0, false
	}
	var us int64
	scale := int64(1000000)
	for i, c := range rest[1:] {
		if !isDigit(c) {
			return 0, false
		}
		if i < 6 {
			scale /= 10
			us += int64(c-'0') * scale
		}
	}
	return us, true
}

func (c *timeCache) parseISO(b []byte) (int64, bool) {
	secs, ok := c.cached(b[:19], func() (int64, bool) {
		y, ok1 := num(b[0:4])
		mo, ok2 := num(b[5:7])
		d, ok3 := num(b[8:10])
		hh, ok4 := num(b[11:13])
		mi, ok5 := num(b[14:16])
		ss, ok6 := num(b[17:19])
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || b[7] != '-' || b[13] != ':' || b[16] != ':' || !valid(mo, d, hh, mi, ss) {
			return 0, false
		}
		return time.Date(y, time.Month(mo), d, hh, mi, ss, 0, time.UTC).Unix(), true
	})
	if !ok {
		return 0, false
	}
	rest := b[19:]
	var us int64
	if len(rest) > 0 && rest[0] == '.' {
		n, scale := 0, int64(1000000)
		for n+1 < len(rest) && isDigit(rest[n+1]) {
			if n < 6 {
				scale /= 10
				us += int64(rest[n+1]-'0') * scale
			}
			n++
		}
		if n == 0 {
			return 0, false
		}
		rest = rest[n+1:]
	}
	switch {
	case len(rest) == 1 && rest[0] == 'Z':
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		hh, ok1 := num(rest[1:3])
		mm, ok2 := num(rest[4:6])
		if !ok1 || !ok2 {
			return 0, false
		}
		off := int64(hh*3600 + mm*60)
		if rest[0] == '+' {
			secs -= off
		} else {
			secs += off
		}
	case len(rest) == 0:
	default:
		return 0, false
	}
	return secs*1e6 + us, true
}

// cached returns the seconds for key, computing them with f on a miss.
func (c *timeCache) cached(key []byte, f func() (int64, bool)) (int64, bool) {
	if c.key != nil && bytes.Equal(key, c.key) {
		return c.secs, true
	}
	s, ok := f()
	if !ok {
		return 0, false
	}
	c.key = append(c.key[:0], key...)
	c.secs = s
	return s, true
}

// valid checks the ranges of a date's fields.
func valid(mo, d, hh, mi, ss int) bool {
	return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && hh < 24 && mi < 60 && ss < 61
}

func num(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// looksLikeTime says whether a bad timestamp was meant as one (digits and
// separators), to tell a corrupt entry from a continuation line.
func looksLikeTime(b []byte) bool {
	if len(b) < 15 || len(b) > 40 {
		return false
	}
	for _, c := range b {
		if !(isDigit(c) || c == '-' || c == ':' || c == ' ' || c == 'T' || c == 'Z' || c == '.' || c == '+') {
			return false
		}
	}
	return true
}
