package report_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// scaledSessions are two sessions of plan "doc003", as `plan run --scale
// 0.25` and then `plan run` store them: micro (3 rounds) and
// oltp_read_write at 2 threads (3 rounds) on mysql-5.5 (baseline) and
// mariadb-10.1. At a quarter of the size MySQL wins everything (its
// seconds a quarter's, its tps on small tables high); at full size MariaDB
// wins insert (1.5x) and has twice MySQL's tps. Mixed, the quarter-size
// seconds and tps would sit beside the full-size ones in one comparison.
// tagged: the runs carry plan.scale (as dbarena records it now); without
// it, as runs stored before, the report tells the scale by the work.
func scaledSessions(tagged bool) []*summary.Run {
	var runs []*summary.Run
	n := 0
	for _, sess := range []struct {
		name  string
		scale float64
	}{{"s1", 0.25}, {"s2", 1}} {
		for _, srv := range []struct{ name, flavor, version string }{
			{"mysql-5.5", "mysql", "5.5.9"}, {"mariadb-10.1", "mariadb", "10.1.23-MariaDB"},
		} {
			for round := 1; round <= 3; round++ {
				wob := 1 + 0.01*float64(round-2)
				// micro: full-size insert 2.0 s on MariaDB, 3.0 on MySQL;
				// a quarter: 0.4 on MySQL, 0.5 on MariaDB.
				ins := map[string]float64{"mysql": 3.0, "mariadb": 2.0}[srv.flavor]
				if sess.scale < 1 {
					ins = map[string]float64{"mysql": 0.4, "mariadb": 0.5}[srv.flavor]
				}
				m := microRun(n, srv.flavor, srv.version, map[string]float64{"insert": ins * wob})
				m.Params["scale"] = sess.scale
				m.PerType = map[string]summary.Type{"insert": {Count: int64(4000 * sess.scale)}}
				// oltp: full size MySQL 500 tps, MariaDB 1000; a quarter
				// (small tables, short runs) MySQL 4000, MariaDB 2000.
				tps := map[string]float64{"mysql": 500, "mariadb": 1000}[srv.flavor]
				if sess.scale < 1 {
					tps = map[string]float64{"mysql": 4000, "mariadb": 2000}[srv.flavor]
				}
				o := reporttest.Run(n+1, "oltp_read_write", srv.flavor, srv.version, 2, tps*wob, int(60*sess.scale))
				o.Params = map[string]any{"tables": 4, "table_size": int(10000 * sess.scale)}
				for _, r := range []*summary.Run{m, o} {
					cell := fmt.Sprintf("server=%s,workload=%s", srv.name, r.Workload)
					r.Plan = &summary.PlanRef{Name: "doc003", Cell: cell, Round: round,
						Coords: map[string]string{"server": srv.name, "workload": r.Workload}}
					r.Tags = map[string]string{"plan": "doc003", "plan.session": sess.name, "plan.cell": cell,
						"plan.round": strconv.Itoa(round), "round": strconv.Itoa(round)}
					if tagged {
						r.Tags["plan.scale"] = strconv.FormatFloat(sess.scale, 'g', -1, 64)
					}
					runs = append(runs, r)
				}
				n += 2
			}
		}
	}
	return runs
}

func planReport(t *testing.T, runs []*summary.Run, f store.Filter) (*report.Report, *store.Store) {
	t.Helper()
	path, _ := reporttest.Store(t, t.TempDir(), runs)
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sel, err := report.Load(context.Background(), st, f)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(sel, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	return rep, st
}

// TestPlanReportOneScale: `report --plan` of a plan run at --scale 0.25
// and then at full size compares the newest session's scale alone: the
// micro winner table, the tps comparison with the baseline and "where the
// difference comes from" each hold the full-size session's 3 rounds per
// server, never the quarter-size seconds and tps beside them; a note says
// which runs were left out and how to report them. Runs stored before
// dbarena recorded the scale are told apart by their work.
func TestPlanReportOneScale(t *testing.T) {
	for _, tagged := range []bool{true, false} {
		t.Run(map[bool]string{true: "tagged", false: "untagged"}[tagged], func(t *testing.T) {
			rep, st := planReport(t, scaledSessions(tagged), store.Filter{Plan: "doc003"})
			mc := rep.Micro()
			if mc == nil || len(mc.Ops) != 1 {
				t.Fatalf("micro comparison %+v", mc)
			}
			for i, n := range mc.Rounds {
				if n != 3 {
					t.Errorf("micro series %s: %d rounds, want the newest session's 3", mc.Series[i], n)
				}
			}
			op := mc.Ops[0]
			if op.Unlike || op.Winner != "mariadb-10.1" || !op.Ratio.Significant || math.Abs(op.Ratio.Value-1.5) > 0.05 {
				t.Errorf("insert: winner %q ratio %v significant %v unlike %v, want mariadb-10.1 1.5 significant (full size alone)",
					op.Winner, op.Ratio.Value, op.Ratio.Significant, op.Unlike)
			}
			var oltp *report.Relative
			for i := range rep.Relatives {
				if rep.Relatives[i].Workload == "oltp_read_write" {
					oltp = &rep.Relatives[i]
				}
			}
			if oltp == nil || oltp.Rounds != 3 || oltp.Baseline != 3 || math.Abs(oltp.TPS.Value-2) > 0.05 || !oltp.TPS.Significant {
				t.Fatalf("oltp_read_write vs baseline %+v, want mariadb-10.1 at 2x mysql-5.5, 3 rounds each", oltp)
			}
			for _, wt := range rep.WhyTables() {
				if !strings.Contains(wt.Note, "Rounds: A 3, B 3") {
					t.Errorf("why table %q: %s, want 3 rounds a side", wt.Title, wt.Note)
				}
			}
			for _, c := range rep.Cells {
				if len(c.Runs) != 3 {
					t.Errorf("cell %s %s: %d runs, want 3", c.Series, c.Workload, len(c.Runs))
				}
			}
			note := strings.Join(rep.Notes, "\n")
			want := "12 run(s) of plan doc003 at scale 0.25 are left out"
			if !tagged {
				want = "12 run(s) of plan doc003 of other data sizes or durations"
			}
			if !strings.Contains(note, want) {
				t.Errorf("notes:\n%s\nwant %q", note, want)
			}
			for _, w := range rep.Context.Workloads {
				if w.Name == "micro" && strings.Join(w.Params["scale"], ",") != "1" {
					t.Errorf("micro's parameters in the context: scale %q, want the compared runs' 1", w.Params["scale"])
				}
			}
			if len(rep.Runs) != 24 {
				t.Errorf("%d runs listed, want all 24", len(rep.Runs))
			}

			// compare's rounds of a run are its own scale's.
			var newest *summary.Run
			for _, r := range rep.Runs {
				if r.Workload == "oltp_read_write" && r.Target.Flavor == "mysql" {
					newest = r
				}
			}
			rounds, err := report.Rounds(context.Background(), st, newest)
			if err != nil || len(rounds) != 3 {
				t.Errorf("rounds of run %d: %d (%v), want 3", newest.ID, len(rounds), err)
			}
			for _, r := range rounds {
				if r.Tags["plan.session"] != "s2" {
					t.Errorf("run %d of session %s among the rounds of a session s2 run", r.ID, r.Tags["plan.session"])
				}
			}
		})
	}

	// The quarter-size session is reported by its tag, alone.
	rep, _ := planReport(t, scaledSessions(true), store.Filter{Plan: "doc003", Tags: map[string]string{"plan.scale": "0.25"}})
	if mc := rep.Micro(); mc == nil || mc.Ops[0].Winner != "mysql-5.5" || mc.Rounds[0] != 3 {
		t.Errorf("quarter-size micro %+v, want mysql-5.5 winning on 3 rounds", mc)
	}
	if len(rep.Notes) > 0 && strings.Contains(strings.Join(rep.Notes, " "), "left out") {
		t.Errorf("notes %v: nothing is left out of a one-scale selection", rep.Notes)
	}
}
