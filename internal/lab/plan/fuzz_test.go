package plan

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics and that every error it gives is
// an *Error naming the file, a line of it and a column within that line.
// Seeds: testdata/fuzz/FuzzParse (syntax errors of each kind, odd input,
// alias bombs) and the shipped plans.
func FuzzParse(f *testing.F) {
	shipped, _ := filepath.Glob("../../../plans/*.yaml")
	for _, name := range shipped {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, errs := Parse("f.yaml", data)
		text := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		lines := bytes.Split(text, []byte("\n"))
		for _, err := range errs {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %q is not a *plan.Error", err)
			}
			if e.File != "f.yaml" || e.Line < 0 || e.Line > len(lines) || e.Col < 0 {
				t.Fatalf("error %q: position out of the file (%d lines)", err, len(lines))
			}
			if e.Col > 0 && (e.Line == 0 || e.Col > utf8.RuneCount(lines[e.Line-1])+1) {
				t.Fatalf("error %q: column past the end of line %q", err, lines[max(e.Line, 1)-1])
			}
		}
		if p == nil || len(errs) > 0 {
			return
		}
		if n := len(p.Schedule()); n > MaxRuns {
			t.Fatalf("%d runs, above MaxRuns", n)
		}
		p.Cells()
		p.Scale(0.1)
	})
}
