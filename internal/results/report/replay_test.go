package report_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// replayRun is a capture replay with three fingerprints: "slow" about 1 ms
// (or 2 ms with slower), "same" about 1 ms, "bad" failing (with errs).
func replayRun(i int, flavor, version string, slower, errs bool) *summary.Run {
	r := reporttest.Run(i, "replay", flavor, version, 4, 100, 3)
	r.Replay = &summary.Replay{Capture: "app.capture", Sessions: 4, Statements: 300}
	// Buckets 188..192 hold 860..1056 µs; 220..224 twice that.
	slow := "188:10,20,40,20,10"
	if slower {
		slow = "220:10,20,40,20,10"
	}
	r.PerType = map[string]summary.Type{
		"aaaa000000000001": {Count: 100, Text: "select c from t where id = ?", Histogram: slow, Rows: 100},
		"aaaa000000000002": {Count: 100, Text: "update t set k = k + ? where id = ?", Histogram: "188:10,20,40,20,10", Rows: 100},
		"aaaa000000000003": {Count: 100, Text: "select * from gone", Histogram: "100:100"},
	}
	if errs {
		t := r.PerType["aaaa000000000003"]
		t.Count, t.Errors, t.Histogram, t.ErrorsByCode = 0, 100, "", map[string]int64{"42P01": 100}
		r.PerType["aaaa000000000003"] = t
	}
	return r
}

func TestReplayFingerprints(t *testing.T) {
	var a, b []*summary.Run
	for k := range 3 {
		a = append(a, replayRun(2*k, "mariadb", "10.11.6-MariaDB", false, false))
		b = append(b, replayRun(2*k+1, "postgres", "16.2", true, true))
	}
	rc := report.CompareReplay(a, b, 0.2)
	if rc == nil || len(rc.FPs) != 3 || rc.Paired {
		t.Fatalf("comparison %+v", rc)
	}
	f := rc.FPs[0]
	if f.ID != "aaaa000000000001" || !f.Ratio.Significant || f.Ratio.Value < 1.9 || f.Ratio.Value > 2.1 || f.DeltaMS <= 0 || f.Slower != -1 {
		t.Errorf("slower fingerprint first: %+v", f)
	}
	for _, f := range rc.FPs[1:] {
		switch f.ID {
		case "aaaa000000000002":
			if f.Ratio.Significant || f.Ratio.Value != 1 {
				t.Errorf("unchanged fingerprint: %+v", f)
			}
		case "aaaa000000000003":
			if f.ErrorsOnly != "B" || f.ErrorsB != 300 {
				t.Errorf("errors on B only: %+v", f)
			}
		}
	}

	path, _ := reporttest.Store(t, t.TempDir(), append(a, b...))
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := report.Load(context.Background(), st, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, filepath.Join(t.TempDir(), "img"), "img"); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	checkContains(t, "markdown", s, "## Replay by fingerprint", "Replay by fingerprint: postgres 16.2 vs mariadb 10.11.6-MariaDB",
		"select c from t where id = ?", "(B only)")
	if strings.Contains(s, "## Transactions and checks") {
		t.Error("fingerprints listed as transactions")
	}
	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	checkContains(t, "html", html.String(), `<h2 id="fingerprints">Replay by fingerprint</h2>`)
}
