package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// Suite is one group of gate outcomes: a run's thresholds, or a
// comparison's limits.
type Suite struct {
	Name  string
	Cases []Case
}

// Case is one gate outcome.
type Case struct {
	// Name is the threshold or limit as given.
	Name string
	// Verdict is Pass, Fail or CannotJudge (shown as skipped in JUnit).
	Verdict string
	// Detail says what was measured, in one line.
	Detail string
}

// RunSuite is the suite of a run's threshold results.
func RunSuite(run *summary.Run) Suite {
	s := Suite{Name: fmt.Sprintf("dbarena run %d (%s)", run.ID, run.Workload)}
	if run.Plan != nil && run.Plan.Name != "" {
		s.Name = fmt.Sprintf("dbarena plan %s cell %s round %d (run %d)", run.Plan.Name, run.Plan.Cell, run.Plan.Round, run.ID)
	}
	for _, r := range run.Thresholds {
		v := Pass
		if !r.Pass {
			v = Fail
		}
		s.Cases = append(s.Cases, Case{Name: r.Expr, Verdict: v, Detail: Detail(r)})
	}
	return s
}

// CompareSuite is the suite of a comparison's judgements.
func CompareSuite(name string, js []Judgement) Suite {
	s := Suite{Name: name}
	for _, j := range js {
		s.Cases = append(s.Cases, Case{Name: j.Limit.Expr, Verdict: j.Verdict, Detail: j.Detail})
	}
	return s
}

// counts returns the cases, failures and skipped (cannot judge) of s.
func (s Suite) counts() (n, failures, skipped int) {
	for _, c := range s.Cases {
		switch c.Verdict {
		case Fail:
			failures++
		case CannotJudge:
			skipped++
		}
	}
	return len(s.Cases), failures, skipped
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes suites as JUnit XML: one testsuite per suite, one
// testcase per threshold or limit; a failed one carries <failure>, one
// that cannot be judged <skipped>.
func WriteJUnit(w io.Writer, suites []Suite) error {
	doc := junitSuites{Name: "dbarena"}
	for _, s := range suites {
		n, f, sk := s.counts()
		js := junitSuite{Name: s.Name, Tests: n, Failures: f, Skipped: sk}
		for _, c := range s.Cases {
			jc := junitCase{Name: c.Name, ClassName: s.Name}
			switch c.Verdict {
			case Fail:
				jc.Failure = &junitMessage{Message: c.Detail, Type: "threshold", Text: c.Detail}
			case CannotJudge:
				jc.Skipped = &junitMessage{Message: c.Detail}
			default:
				jc.SystemOut = c.Detail
			}
			js.Cases = append(js.Cases, jc)
		}
		doc.Tests, doc.Failures, doc.Skipped = doc.Tests+n, doc.Failures+f, doc.Skipped+sk
		doc.Suites = append(doc.Suites, js)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteMarkdown writes suites as Markdown: a heading with the overall
// verdict, then a table per suite.
func WriteMarkdown(w io.Writer, suites []Suite) error {
	var b strings.Builder
	total, failures, skipped := 0, 0, 0
	for _, s := range suites {
		n, f, sk := s.counts()
		total, failures, skipped = total+n, failures+f, skipped+sk
	}
	verdict := "PASS"
	if failures > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "## dbarena gates: %s\n\n%d checked, %d failed", verdict, total, failures)
	if skipped > 0 {
		fmt.Fprintf(&b, ", %d could not be judged", skipped)
	}
	b.WriteString(".\n")
	for _, s := range suites {
		fmt.Fprintf(&b, "\n### %s\n\n| Gate | Result | Measured |\n|---|---|---|\n", mdCell(s.Name))
		for _, c := range s.Cases {
			res := "✅ pass"
			switch c.Verdict {
			case Fail:
				res = "❌ **fail**"
			case CannotJudge:
				res = "⚪ cannot judge"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", strings.NewReplacer("`", "'", "|", `\|`).Replace(strings.Join(strings.Fields(c.Name), " ")), res, mdCell(c.Detail))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes s safe in a Markdown table cell.
func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}
