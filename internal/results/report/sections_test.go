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

// TestSectionsNotNames: the sections a run carries, not its workload's
// name, decide what a report shows of it: micro figures under another
// name get the micro tables, a run of any name asking for the siege table
// gets a row, and a run named "replay" that does not ask to be compared
// by fingerprint is shown by transaction type.
func TestSectionsNotNames(t *testing.T) {
	var runs []*summary.Run
	for _, r := range microRuns() {
		r.Workload, r.Sections = "suite", []string{summary.SectionMicro}
		runs = append(runs, r)
	}
	web := reporttest.Run(40, "webbench", "mariadb", "10.11.6-MariaDB", 4, 50, 3)
	web.Sections = []string{summary.SectionSiege}
	runs = append(runs, web)
	for k, srv := range [][2]string{{"mariadb", "10.11.6-MariaDB"}, {"postgres", "16.2"}} {
		r := replayRun(50+k, srv[0], srv[1], k == 1, false)
		r.Sections = []string{summary.SectionSiege}
		runs = append(runs, r)
	}
	path, _ := reporttest.Store(t, t.TempDir(), runs)
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored, err := report.Load(context.Background(), st, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(stored, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	if mc := rep.Micro(); mc == nil || len(mc.Series) != 2 || len(mc.Ops) != 3 {
		t.Fatalf("micro comparison of runs with the micro section: %+v", mc)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, filepath.Join(t.TempDir(), "img"), "img"); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	checkContains(t, "markdown", s, "## Micro suite", "### Replay results", "## Transactions and checks", ": replay on postgres 16.2")
	if strings.Contains(s, "Replay by fingerprint") {
		t.Error("runs without the fingerprints section compared by fingerprint")
	}
	siege := report.SiegeTable([]*summary.Run{web})
	if len(siege.Rows) != 1 {
		t.Fatalf("siege rows %v", siege.Rows)
	}
	if !strings.Contains(s, "| "+siege.Rows[0][0].Text+" |") {
		t.Errorf("the webbench run is not in the siege table:\n%s", s)
	}
	c, err := report.Compare(stored[len(stored)-2:len(stored)-1], stored[len(stored)-1:])
	if err != nil {
		t.Fatal(err)
	}
	if c.Replay != nil {
		t.Error("replays without the fingerprints section compared by fingerprint")
	}
}
