package capture

import (
	"strconv"
	"unicode/utf8"
)

// AppendEvent appends e as one JSON line of a capture file, with the
// field names and omissions of Event's struct tags.
func AppendEvent(b []byte, e *Event) []byte {
	b = append(b, `{"session":`...)
	b = appendString(b, e.Session)
	b = append(b, `,"t_us":`...)
	b = strconv.AppendInt(b, e.TUS, 10)
	if e.DB != "" {
		b = append(b, `,"db":`...)
		b = appendString(b, e.DB)
	}
	if e.User != "" {
		b = append(b, `,"user":`...)
		b = appendString(b, e.User)
	}
	b = append(b, `,"kind":`...)
	b = appendString(b, e.Kind)
	if e.Name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, e.Name)
	}
	if e.SQL != "" {
		b = append(b, `,"sql":`...)
		b = appendString(b, e.SQL)
	}
	if len(e.Params) > 0 {
		b = append(b, `,"params":[`...)
		for i, p := range e.Params {
			if i > 0 {
				b = append(b, ',')
			}
			if p == nil {
				b = append(b, "null"...)
			} else {
				b = appendString(b, *p)
			}
		}
		b = append(b, ']')
	}
	if e.DurUS != nil {
		b = append(b, `,"dur_us":`...)
		b = strconv.AppendInt(b, *e.DurUS, 10)
	}
	if e.Rows != nil {
		b = append(b, `,"rows":`...)
		b = strconv.AppendInt(b, *e.Rows, 10)
	}
	return append(b, '}', '\n')
}

const hex = "0123456789abcdef"

// plain marks the bytes a JSON string holds as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
