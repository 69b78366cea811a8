package plan

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// decode parses the first YAML document of data; next is the document
// after it, if any. An empty file (or only comments) gives a nil doc.
func decode(data []byte) (doc, next *yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	doc = new(yaml.Node)
	if err := dec.Decode(doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	next = new(yaml.Node)
	switch err := dec.Decode(next); {
	case errors.Is(err, io.EOF):
		return doc, nil, nil
	case err != nil:
		return nil, nil, err
	}
	return doc, next, nil
}

// yamlErrorText is the error yaml.v3 gives for data, "" when none.
func yamlErrorText(data []byte) string {
	if _, _, err := decode(data); err != nil {
		return err.Error()
	}
	return ""
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns yaml.v3's error for data into an *Error at the line and
// column of the problem.
//
// yaml.v3 gives no column, and its line is 0-based for parser errors, 1-based
// for scanner errors, and that of the problem instead of its context when the
// context is on the first line. So the position is found with yaml.v3
// itself: data is read with a blank line in front (no context is then on the
// first line, and the "line N" of an unclosed bracket's error is its 1-based
// line in data), and the problem lies where the shortest prefix of that text
// gives the very same error: first the line, then the column within it. An
// unclosed bracket is named where it opens, a value missing at the end of
// the file at its last character, anything else where yaml.v3 saw it go
// wrong. Each try parses a prefix: a few dozen parses of a file of at most
// MaxSize bytes.
func syntaxError(file string, data []byte, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		msg = m[2]
	}
	out := &Error{File: file, Msg: friendlier(msg, false)}
	buf := append([]byte{'\n'}, data...)
	want := yamlErrorText(buf)
	if want == "" { // cannot happen: yaml.v3 ignores a leading blank line
		return out
	}
	same := func(n int) bool { return yamlErrorText(buf[:1+n]) == want }
	lines := lineStarts(data)
	if open, ok := flowOpeners[msg]; ok {
		m := yamlLineRE.FindStringSubmatch(want)
		if m == nil {
			return out
		}
		l, _ := strconv.Atoi(m[1])
		if l < 1 || l > len(lines) {
			return out
		}
		out.Line = l
		out.Col = opener(data, buf, lines, l, open)
		return out
	}
	// A problem found at the end of the text (a value missing there) would
	// be reproduced by any prefix that stops at a like place: named at the
	// text's last character instead. Text after a problem that is not at
	// the end leaves the error as it was.
	if yamlLineRE.MatchString(want) && yamlErrorText(append(buf[:len(buf):len(buf)], "\n@\n"...)) != want {
		if l, at := lastChar(data, lines); l > 0 {
			out.Line, out.Col = l, utf8.RuneCount(data[lines[l-1]:at+1])
			out.Msg += " at the end of the file"
		}
		return out
	}
	// The shortest run of whole lines giving the same error: not before the
	// line yaml.v3 names (give or take its 0- or 1-basing), and usually
	// close after it, so searched from there.
	from := 1
	if m := yamlLineRE.FindStringSubmatch(want); m != nil {
		n, _ := strconv.Atoi(m[1])
		from = min(max(n-1, 1), len(lines))
	}
	l := first(from, len(lines), func(l int) bool { return same(lineEnd(data, lines, l)) })
	out.Line = l
	// Then the shortest run of whole characters of that line.
	start := lines[l-1]
	var ends []int // offset past each character of the line
	for i := start; i < lineEnd(data, lines, l); {
		_, size := utf8.DecodeRune(data[i:])
		i += size
		ends = append(ends, i)
	}
	if len(ends) == 0 { // cannot happen: lines are never empty
		return out
	}
	c := smallest(0, len(ends)-1, func(c int) bool { return same(ends[c]) })
	at := ends[c] - 1                             // the character's last byte
	if strings.HasPrefix(msg, "unknown anchor") { // named at the "*"
		if i := bytes.LastIndexByte(data[start:ends[c]], '*'); i >= 0 {
			at = start + i
		}
	}
	out.Col = utf8.RuneCount(data[start : at+1])
	out.Msg = friendlier(msg, data[at] == '\t')
	return out
}

// flowOpeners maps yaml.v3's errors about an unclosed flow collection to the
// bracket that opened it.
var flowOpeners = map[string]byte{
	"did not find expected ',' or ']'": '[',
	"did not find expected ',' or '}'": '{',
}

// opener returns the column of the bracket on line l that is left open:
// the innermost one still open where the brackets after it stop matching
// (or at the end of the text), found by a light scan that skips quoted
// values and comments, and confirmed by yaml.v3 (the text up to it fails for
// want of an entry). 0 when none is found.
func opener(data, buf []byte, lines []int, l int, open byte) int {
	start, end := lines[l-1], lineEnd(data, lines, l)
	closer := map[byte]byte{'[': ']', '{': '}'}
	var stack []int // offsets of open brackets from line l
	// before is the byte before i; sig the last one not a space or tab
	// ('\n' at the start of a line): a quote after an indicator opens a
	// quoted value, a "#" after a blank opens a comment.
	before, sig := byte('\n'), byte('\n')
scan:
	for i := start; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '#' && (before == ' ' || before == '\t' || before == '\n'):
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case (c == '"' || c == '\'') && strings.IndexByte("\n[{,:-", sig) >= 0:
			for i++; i < len(data) && data[i] != c; i++ {
				if c == '"' && data[i] == '\\' {
					i++
				}
			}
		case c == '[' || c == '{':
			stack = append(stack, i)
		case c == ']' || c == '}':
			switch {
			case len(stack) == 0:
			case closer[data[stack[len(stack)-1]]] == c:
				stack = stack[:len(stack)-1]
			default:
				break scan // the collection on top is not closed
			}
		case c == '\n' && i >= end-1 && len(stack) == 0:
			break scan // line l's brackets are all closed
		}
		if i < len(data) {
			before = data[i]
		}
		if before == '\n' || before != ' ' && before != '\t' {
			sig = before
		}
	}
	for k, tries := len(stack)-1, 0; k >= 0 && tries < 16; k-- {
		i := stack[k]
		if i >= end || data[i] != open {
			continue
		}
		tries++
		if strings.HasSuffix(yamlErrorText(buf[:1+i+1]), ": did not find expected node content") {
			return utf8.RuneCount(data[start:i]) + 1
		}
	}
	return 0
}

// friendlier adds what to do to yaml.v3's terser messages; tab is whether
// the problem is a tab character.
func friendlier(msg string, tab bool) string {
	switch msg {
	case "did not find expected ',' or ']'":
		return `"[" is not closed: did not find expected ',' or ']'`
	case "did not find expected ',' or '}'":
		return `"{" is not closed: did not find expected ',' or '}'`
	case "found a tab character that violates indentation", "found character that cannot start any token":
		if tab {
			return msg + " (indent with spaces, not tabs)"
		}
	case "found unexpected end of stream":
		return "quoted value is not closed: found the end of the file"
	}
	return msg
}

// lastChar returns the line and offset of the last character of data that
// is not blank or in a comment; 0, 0 when there is none.
func lastChar(data []byte, lines []int) (line, at int) {
	for l := len(lines); l >= 1; l-- {
		text := data[lines[l-1]:lineEnd(data, lines, l)]
		for i, c := range text {
			if c == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t') {
				text = text[:i]
				break
			}
		}
		if i := bytes.LastIndexFunc(text, func(r rune) bool { return !unicode.IsSpace(r) }); i >= 0 {
			return l, lines[l-1] + i
		}
	}
	return 0, 0
}

// lineStarts returns the offset of each line's first byte.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineEnd returns the offset just past line l (1-based) and its newline.
func lineEnd(data []byte, starts []int, l int) int {
	if l < len(starts) {
		return starts[l]
	}
	return len(data)
}

// first returns the least n in [lo, hi] for which ok holds, given that
// ok(hi) holds and that ok holds from some n on: it tries lo, lo+1, lo+3,
// lo+7, ... and bisects the last gap, so a near n costs few calls.
func first(lo, hi int, ok func(int) bool) int {
	prev := lo - 1 // ok(prev) is false, or prev is below lo
	for step := 1; prev+step < hi; step *= 2 {
		n := prev + step
		if ok(n) {
			return smallest(prev+1, n, ok)
		}
		prev = n
	}
	return smallest(prev+1, hi, ok)
}

// smallest returns the least n in [lo, hi] for which ok holds, given that
// ok(hi) holds, by bisection (ok is taken to hold from some n on).
func smallest(lo, hi int, ok func(int) bool) int {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// checkText reports the first byte that is not UTF-8 text.
func checkText(file string, data []byte) *Error {
	if utf8.Valid(data) {
		return nil
	}
	line, start := 1, 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return &Error{File: file, Line: line, Col: utf8.RuneCount(data[start:i]) + 1,
				Msg: "not UTF-8 text (save the plan as UTF-8)"}
		}
		if r == '\n' {
			line, start = line+1, i+1
		}
		i += size
	}
	return nil
}
