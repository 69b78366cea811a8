package pglog

import (
	"bytes"
	"strconv"
	"time"
)

// timeCache parses PostgreSQL log times ("2024-11-22 22:50:01.123 UTC",
// %m; without the fraction, %t) with the seconds parsed once per second.
type timeCache struct {
	key  []byte
	zone []byte
	secs int64
}

// parse reads a time at the start of b and returns Unix µs and the bytes
// it used. Zones: UTC, GMT, numeric (+03, -0530); any other abbreviation
// is taken as loc (the log_timezone the user names).
func (c *timeCache) parse(b []byte, loc *time.Location) (int64, int, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return 0, 0, false
	}
	n := 19
	var us int64
	if n < len(b) && b[n] == '.' {
		scale := int64(1e6)
		n++
		start := n
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			if scale > 1 {
				scale /= 10
				us += int64(b[n]-'0') * scale
			}
			n++
		}
		if n == start {
			return 0, 0, false
		}
	}
	if n >= len(b) || b[n] != ' ' {
		return 0, 0, false
	}
	z := n + 1
	e := z
	for e < len(b) && b[e] != ' ' && b[e] != '\t' && b[e] != ']' && b[e] != '|' && b[e] != ',' {
		e++
	}
	if e == z {
		return 0, 0, false
	}
	zone := b[z:e]
	if c.key != nil && bytes.Equal(b[:19], c.key) && bytes.Equal(zone, c.zone) {
		return c.secs*1e6 + us, e, true
	}
	d := func(i, j int) int {
		v := 0
		for _, ch := range b[i:j] {
			if ch < '0' || ch > '9' {
				return -1
			}
			v = v*10 + int(ch-'0')
		}
		return v
	}
	y, mo, dd, hh, mi, ss := d(0, 4), d(5, 7), d(8, 10), d(11, 13), d(14, 16), d(17, 19)
	if y < 0 || mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 60 {
		return 0, 0, false
	}
	l := loc
	off := 0
	switch {
	case string(zone) == "UTC" || string(zone) == "GMT" || string(zone) == "Z":
		l = time.UTC
	case zone[0] == '+' || zone[0] == '-':
		v := string(zone[1:])
		h, m := v, "0"
		if len(v) == 4 {
			h, m = v[:2], v[2:]
		} else if len(v) == 5 && v[2] == ':' {
			h, m = v[:2], v[3:]
		}
		hv, err1 := strconv.Atoi(h)
		mv, err2 := strconv.Atoi(m)
		if err1 != nil || err2 != nil {
			return 0, 0, false
		}
		off = hv*3600 + mv*60
		if zone[0] == '-' {
			off = -off
		}
		l = time.UTC
	}
	secs := time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, l).Unix() - int64(off)
	c.key = append(c.key[:0], b[:19]...)
	c.zone = append(c.zone[:0], zone...)
	c.secs = secs
	return secs*1e6 + us, e, true
}

// parseEpoch reads %n: "1732315801.123".
func parseEpoch(b []byte) (int64, int, bool) {
	n := 0
	var secs, us int64
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		secs = secs*10 + int64(b[n]-'0')
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	if n < len(b) && b[n] == '.' {
		n++
		scale := int64(1e6)
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			if scale > 1 {
				scale /= 10
				us += int64(b[n]-'0') * scale
			}
			n++
		}
	}
	return secs*1e6 + us, n, true
}
