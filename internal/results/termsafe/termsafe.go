// Package termsafe keeps text that came from inputs (dumps, logs, tags,
// imported runs) from driving the terminal it is printed on: a Writer shows
// control characters as visible escapes instead of passing them through.
package termsafe

import (
	"io"
	"os"
	"sync"

	"github.com/mattn/go-isatty"
)

// Writer escapes every C0 control character but newline and tab, DEL and
// the C1 controls (U+0080..U+009F, which some terminals read like ESC) as
// \xNN or \u00NN. Other bytes, invalid UTF-8 included, pass unchanged.
// A Writer is safe for concurrent use; it writes each call's text in one
// call of its own.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	// lead is a 0xC2 byte held back at the end of the last write: the C1
	// controls are 0xC2 0x80..0x9F in UTF-8 and a write may split them.
	lead bool
}

// New returns a Writer escaping into w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// ForOutput wraps w in a Writer unless it is a file that is not a terminal
// (a pipe or a regular file, where output is data for another program and
// goes out exactly as written).
func ForOutput(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && !isatty.IsTerminal(f.Fd()) && !isatty.IsCygwinTerminal(f.Fd()) {
		return w
	}
	return New(w)
}

const hex = "0123456789abcdef"

// Write writes p with its control characters escaped and reports len(p)
// when all of it was written.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clean := !t.lead
	for _, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 {
			clean = false
			break
		}
	}
	if clean {
		return t.w.Write(p)
	}
	n := len(p)
	out := make([]byte, 0, len(p)+16)
	if t.lead {
		out = append(out, 0xc2)
		t.lead = false
		if len(p) > 0 && p[0] >= 0x80 && p[0] <= 0x9f {
			out = append(out[:len(out)-1], '\\', 'u', '0', '0', hex[p[0]>>4], hex[p[0]&15])
			p = p[1:]
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c < 0x20 && c != '\n' && c != '\t' || c == 0x7f:
			out = append(out, '\\', 'x', hex[c>>4], hex[c&15])
		case c == 0xc2 && i+1 == len(p):
			t.lead = true
		case c == 0xc2 && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			i++
			out = append(out, '\\', 'u', '0', '0', hex[p[i]>>4], hex[p[i]&15])
		default:
			out = append(out, c)
		}
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}
