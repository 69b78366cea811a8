package gate

import (
	"bytes"
	"fmt"
	"os"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// WriteFiles writes the outcomes of suites to the --junit (JUnit XML)
// and --md-summary (Markdown) files, when given.
func WriteFiles(junit, md string, suites []Suite) error {
	for _, f := range []struct {
		flag, path string
		write      func(*bytes.Buffer) error
	}{
		{"--junit", junit, func(b *bytes.Buffer) error { return WriteJUnit(b, suites) }},
		{"--md-summary", md, func(b *bytes.Buffer) error { return WriteMarkdown(b, suites) }},
	} {
		if f.path == "" {
			continue
		}
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return fmt.Errorf("%s %s: %w", f.flag, f.path, err)
		}
		if err := os.WriteFile(f.path, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	return nil
}

// JudgeAll judges each limit on B's rounds against A's (Judge) and
// counts the failed ones.
func JudgeAll(limits []Limit, a, b []*summary.Run) (js []Judgement, fails int) {
	for _, l := range limits {
		j := Judge(l, a, b)
		if j.Verdict == Fail {
			fails++
		}
		js = append(js, j)
	}
	return js, fails
}
