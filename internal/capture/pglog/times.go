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
	// unknown is set to a zone abbreviation read as loc because no
	// table names it, until the parser has warned about it.
	unknown string
	warned  map[string]bool
	zones   map[string]*time.Location
}

// parse reads a time at the start of b and returns Unix µs and the bytes
// it used. Zones: UTC, GMT, numeric (+03, -0530), and the abbreviations of
// PostgreSQL's default timezone_abbreviations set (CET, CEST, MSK, EST,
// ...): an abbreviation that loc (--time-zone) uses at that time is read
// in loc (so its own daylight-saving rules apply), any other known one by
// its offset; an unknown one is read in loc (and reported in unknown).
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
	e := zoneEnd(b, z)
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
	var secs int64
	if zone[0] == '+' || zone[0] == '-' {
		v := string(zone[1:])
		h, m := v, "0"
		if len(v) == 4 {
			h, m = v[:2], v[2:]
		} else if len(v) == 5 && v[2] == ':' {
			h, m = v[:2], v[3:]
		}
		hv, err1 := strconv.Atoi(h)
		mv, err2 := strconv.Atoi(m)
		if err1 != nil || err2 != nil || hv > 15 || mv > 59 {
			return 0, 0, false
		}
		off := hv*3600 + mv*60
		if zone[0] == '-' {
			off = -off
		}
		secs = time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, time.UTC).Unix() - int64(off)
	} else {
		secs = c.inZone(string(zone), y, mo, dd, hh, mi, ss, loc)
	}
	c.key = append(c.key[:0], b[:19]...)
	c.zone = append(c.zone[:0], zone...)
	c.secs = secs
	return secs*1e6 + us, e, true
}

// zoneEnd is where the zone starting at b[z] ends: letters (an
// abbreviation), or a sign, digits and an optional ":MM".
func zoneEnd(b []byte, z int) int {
	e := z
	if z < len(b) && (b[z] == '+' || b[z] == '-') {
		e++
		for e < len(b) && (b[e] >= '0' && b[e] <= '9' || b[e] == ':' && e+1 < len(b) && b[e+1] >= '0' && b[e+1] <= '9') {
			e++
		}
		if e == z+1 {
			return z
		}
		return e
	}
	for e < len(b) && (b[e] >= 'A' && b[e] <= 'Z' || b[e] >= 'a' && b[e] <= 'z') {
		e++
	}
	return e
}

// inZone is the Unix time of a wall time written with zone abbreviation
// zone (see parse).
func (c *timeCache) inZone(zone string, y, mo, dd, hh, mi, ss int, loc *time.Location) int64 {
	if zone == "UTC" || zone == "GMT" || zone == "Z" {
		return time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, time.UTC).Unix()
	}
	if loc != nil && loc != time.UTC {
		t := time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, loc)
		if name, _ := t.Zone(); name == zone {
			return t.Unix()
		}
		// The hour after a change back from summer time exists twice: the
		// abbreviation says which.
		for _, alt := range []time.Time{t.Add(-time.Hour), t.Add(time.Hour)} {
			if name, _ := alt.Zone(); name == zone && alt.Hour() == hh {
				return alt.Unix()
			}
		}
	}
	if off, ok := zoneOffsets[zone]; ok {
		return time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, time.UTC).Unix() - int64(off)
	}
	if name, ok := zoneNames[zone]; ok {
		l, ok := c.zones[name]
		if !ok {
			l, _ = time.LoadLocation(name)
			if c.zones == nil {
				c.zones = map[string]*time.Location{}
			}
			c.zones[name] = l
		}
		if l != nil {
			return time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, l).Unix()
		}
		return time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, time.UTC).Unix() - int64(zoneFallback[zone])
	}
	if !c.warned[zone] {
		if c.warned == nil {
			c.warned = map[string]bool{}
		}
		c.warned[zone] = true
		c.unknown = zone
	}
	if loc == nil {
		loc = time.UTC
	}
	return time.Date(y, time.Month(mo), dd, hh, mi, ss, 0, loc).Unix()
}

// zoneOffsets are the fixed-offset abbreviations of PostgreSQL's default
// timezone_abbreviations set (share/timezonesets/Default), in seconds east
// of UTC: IST is Israel's, CST the US Central, as there.
var zoneOffsets = map[string]int{
	"EAT": 10800, "SAST": 7200, "WAT": 3600, "ACT": -18000, "AKDT": -28800, "AKST": -32400,
	"BOT": -14400, "BRA": -10800, "BRST": -7200, "BRT": -10800, "COT": -18000, "CDT": -18000,
	"CLST": -10800, "CST": -21600, "EDT": -14400, "EGST": 0, "EGT": -3600, "EST": -18000, "FNT": -7200,
	"FNST": -3600, "GFT": -10800, "MDT": -21600, "MST": -25200, "NDT": -9000, "NFT": -12600,
	"NST": -12600, "PET": -18000, "PDT": -25200, "PMDT": -7200, "PMST": -10800, "PST": -28800,
	"PYST": -10800, "UYST": -7200, "UYT": -10800, "WGST": -7200, "WGT": -10800, "DDUT": 36000,
	"AFT": 16200, "ALMT": 21600, "ALMST": 25200, "AMT": -14400, "BDT": 21600, "BNT": 28800,
	"BORT": 28800, "BTT": 21600, "CCT": 28800, "HKT": 28800, "ICT": 25200, "IDT": 10800, "IRT": 12600,
	"IST": 7200, "JAYT": 32400, "JST": 32400, "KDT": 36000, "KGST": 21600, "KST": 32400, "MMT": 23400,
	"MYT": 28800, "NPT": 20700, "PHT": 28800, "PKT": 18000, "PKST": 21600, "TJT": 18000,
	"ULAST": 32400, "UZST": 21600, "UZT": 18000, "XJT": 21600, "YEKST": 21600, "ADT": -10800,
	"AST": -14400, "AZOST": 0, "AZOT": -3600, "ACSST": 37800, "ACDT": 37800, "ACST": 34200,
	"ACWST": 31500, "AESST": 39600, "AEDT": 39600, "AEST": 36000, "AWSST": 32400, "AWST": 28800,
	"CADT": 37800, "CAST": 34200, "LHST": 37800, "LIGT": 36000, "NZT": 43200, "SADT": 37800,
	"WADT": 28800, "WAST": 25200, "WDT": 32400, "GMT": 0, "UCT": 0, "UT": 0, "UTC": 0, "Z": 0,
	"ZULU": 0, "BST": 3600, "BDST": 7200, "CEST": 7200, "CET": 3600, "CETDST": 7200, "EEST": 10800,
	"EET": 7200, "EETDST": 10800, "FET": 10800, "MEST": 7200, "MESZ": 7200, "MET": 3600,
	"METDST": 7200, "MEZ": 3600, "MSD": 14400, "WET": 0, "WETDST": 3600, "CXT": 25200, "MUT": 14400,
	"MUST": 18000, "MVT": 18000, "RET": 14400, "SCT": 14400, "TFT": 18000, "CHADT": 49500,
	"CHAST": 45900, "CHUT": 36000, "FJST": 46800, "FJT": 43200, "GALT": -21600, "GAMT": -32400,
	"GILT": 43200, "HST": -36000, "MART": -34200, "MHT": 43200, "MPT": 36000, "NZDT": 46800,
	"NZST": 43200, "PGT": 36000, "PONT": 39600, "PWT": 32400, "TAHT": -36000, "TOT": 46800,
	"TRUT": 36000, "TVT": 43200, "VUT": 39600, "WAKT": 43200, "WFT": 43200, "YAPT": 36000,
}

// zoneNames are the abbreviations that set reads through a zone, whose
// offset changed over the years; zoneFallback is their offset today, used
// when the system has no zone database.
var zoneNames = map[string]string{
	"MSK": "Europe/Moscow", "VOLT": "Europe/Volgograd", "SGT": "Asia/Singapore", "ART": "America/Argentina/Buenos_Aires",
	"CLT": "America/Santiago", "VET": "America/Caracas", "YEKT": "Asia/Yekaterinburg", "OMST": "Asia/Omsk",
	"NOVT": "Asia/Novosibirsk", "KRAT": "Asia/Krasnoyarsk", "IRKT": "Asia/Irkutsk", "YAKT": "Asia/Yakutsk",
	"VLAT": "Asia/Vladivostok", "MAGT": "Asia/Magadan", "PETT": "Asia/Kamchatka", "AZT": "Asia/Baku",
	"GET": "Asia/Tbilisi", "LKT": "Asia/Colombo", "ULAT": "Asia/Ulaanbaatar",
}

var zoneFallback = map[string]int{
	"MSK": 10800, "VOLT": 10800, "SGT": 28800, "ART": -10800, "CLT": -14400, "VET": -14400, "YEKT": 18000,
	"OMST": 21600, "NOVT": 25200, "KRAT": 25200, "IRKT": 28800, "YAKT": 32400, "VLAT": 36000, "MAGT": 39600,
	"PETT": 43200, "AZT": 14400, "GET": 14400, "LKT": 19800, "ULAT": 28800,
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
