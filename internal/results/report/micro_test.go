package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload/micro"
)

// microRun is a micro run with the given seconds per operation; ops named
// in capped were cut by --time-limit.
func microRun(i int, flavor, version string, secs map[string]float64, capped ...string) *summary.Run {
	r := reporttest.Run(i, "micro", flavor, version, 1, 100, 3)
	r.Params = map[string]any{"tests": "insert,select", "scale": 1.0}
	r.Figures = map[string]float64{}
	for op, s := range secs {
		r.Figures[micro.SecondsPrefix+op] = s
		r.PerType = map[string]summary.Type{op: {Count: 10}}
	}
	for _, op := range capped {
		r.Figures[micro.ExtrapolatedPrefix+op] = 1
	}
	return r
}

// microRuns: three rounds each of MariaDB and PostgreSQL. MariaDB wins
// insert clearly and select_key within noise; PostgreSQL wins
// update_of_key_big clearly (its second round capped).
func microRuns() []*summary.Run {
	var runs []*summary.Run
	noise := []float64{0.9, 1.0, 1.1}
	for k := 0; k < 3; k++ {
		var capped []string
		if k == 1 {
			capped = []string{"update_of_key_big"}
		}
		runs = append(runs,
			microRun(2*k, "mariadb", "10.11.6-MariaDB", map[string]float64{"insert": 2 + 0.01*float64(k), "select_key": noise[k], "update_of_key_big": 5 + 0.1*float64(k)}),
			microRun(2*k+1, "postgres", "16.2", map[string]float64{"insert": 4 + 0.01*float64(k), "select_key": noise[2-k] * 1.02, "update_of_key_big": 1 + 0.1*float64(k)}, capped...))
	}
	return runs
}

func TestMicroWinnerTable(t *testing.T) {
	path, _ := reporttest.Store(t, t.TempDir(), microRuns())
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
	mc := rep.Micro()
	if mc == nil || len(mc.Series) != 2 {
		t.Fatalf("micro comparison = %+v", mc)
	}
	// select_key differs within the noise: a tie, no winner (#35).
	want := map[string]struct {
		winner string
		sig    bool
	}{"insert": {"mariadb 10.11.6-MariaDB", true}, "select_key": {"", false}, "update_of_key_big": {"postgres 16.2", true}}
	if len(mc.Ops) != 3 || mc.Ops[0].Op != "insert" || mc.Ops[2].Op != "update_of_key_big" {
		t.Fatalf("ops not in suite order: %+v", mc.Ops)
	}
	for _, op := range mc.Ops {
		w := want[op.Op]
		if op.Winner != w.winner || op.Ratio.Significant != w.sig {
			t.Errorf("%s: winner %q significant %v, want %q %v", op.Op, op.Winner, op.Ratio.Significant, w.winner, w.sig)
		}
	}
	if op := mc.Ops[0]; op.Ratio.Value < 1.9 || op.Ratio.Value > 2.1 {
		t.Errorf("insert ratio %v, want about 2", op.Ratio.Value)
	}
	if !mc.Ops[1].Tie || mc.Ops[0].Tie || mc.Ops[2].Tie {
		t.Errorf("ties: %v %v %v, want select_key's alone", mc.Ops[0].Tie, mc.Ops[1].Tie, mc.Ops[2].Tie)
	}
	if mc.Wins["mariadb 10.11.6-MariaDB"] != 1 || mc.SignificantWins["mariadb 10.11.6-MariaDB"] != 1 || mc.Wins["postgres 16.2"] != 1 {
		t.Errorf("wins %v, significant %v", mc.Wins, mc.SignificantWins)
	}

	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	checkContains(t, "html", html.String(), `<h2 id="micro">Micro suite</h2>`, "Micro suite: seconds per operation",
		"update_of_key_big", "~", "operations won per series", "significant wins")
	dir := t.TempDir()
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, filepath.Join(dir, "img"), "img"); err != nil {
		t.Fatal(err)
	}
	checkContains(t, "markdown", md.String(), "## Micro suite",
		"| insert | 2.010 ± 0.025 | 4.010 ± 0.025 | mariadb 10.11.6-MariaDB |", "| **yes** |", "| no |")
	if os.Getenv("MICRO_SHOW") != "" {
		t.Log(md.String())
	}
	if strings.Contains(md.String(), reporttest.Password) {
		t.Error("password in report")
	}
}

func TestMicroCompare(t *testing.T) {
	runs := microRuns()
	var a, b []*summary.Run
	for i, r := range runs {
		if i%2 == 0 {
			a = append(a, r)
		} else {
			b = append(b, r)
		}
	}
	c, err := report.Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	checkContains(t, "compare", out.String(), "Micro suite: seconds per operation", "winner", "insert", "A (s, 3 rounds)", "update_of_key_big")
	// Not micro on one side: no winner table.
	c, err = report.Compare(a, []*summary.Run{reporttest.TPCCRun()})
	if err != nil {
		t.Fatal(err)
	}
	if c.Micro != nil {
		t.Error("micro table for a non-micro comparison")
	}
}
