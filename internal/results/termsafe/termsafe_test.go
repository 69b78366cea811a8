package termsafe

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "tps 12.5\tp95 3ms\n", "tps 12.5\tp95 3ms\n"},
		{"escape sequence", "tag \x1b[2J\x1b]0;owned\x07x\n", `tag \x1b[2J\x1b]0;owned\x07x` + "\n"},
		{"carriage return", "ok\rFAIL", `ok\x0dFAIL`},
		{"del and nul", "a\x7fb\x00c", `a\x7fb\x00c`},
		{"c1 csi", "a\u009b2Jb", `a\u009b2Jb`},
		{"utf-8 kept", "é ü 日本 \u00a0", "é ü 日本 \u00a0"},
		{"invalid utf-8 kept", "a\xff\xc3b", "a\xff\xc3b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := New(&b)
			if n, err := w.Write([]byte(tc.in)); n != len(tc.in) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
			// Byte by byte: the same text, whatever the splits.
			b.Reset()
			w = New(&b)
			for i := 0; i < len(tc.in); i++ {
				w.Write([]byte{tc.in[i]})
			}
			w.Write(nil)
			if got := b.String(); got != tc.want && !(strings.HasSuffix(tc.in, "\xc2")) {
				t.Errorf("byte by byte: got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzWriter: no ESC, CSI or other control byte but newline and tab gets
// through, however the text is split into writes.
func FuzzWriter(f *testing.F) {
	f.Add([]byte("a\x1b[31mred\u009b\r\n"), 3)
	f.Add([]byte("\xc2"), 1)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		var b bytes.Buffer
		w := New(&b)
		if split <= 0 || split > len(in) {
			split = len(in)
		}
		w.Write(in[:split])
		w.Write(in[split:])
		w.Write([]byte("\n"))
		out := b.Bytes()
		for i, c := range out {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				t.Fatalf("control byte %#x at %d in %q", c, i, out)
			}
			if c == 0xc2 && i+1 < len(out) && out[i+1] >= 0x80 && out[i+1] <= 0x9f {
				t.Fatalf("C1 control at %d in %q", i, out)
			}
		}
	})
}
