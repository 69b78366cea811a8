package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/store"
)

// TestWhyPlanHotRow: a plan of spread rows (the baseline) and a hot row,
// 3 rounds each, on a PostgreSQL and a MariaDB sandbox of its own. plan
// show reads each hot-row cell against its spread-rows cell as lock waits
// (PostgreSQL: Lock:*; MariaDB: InnoDB row-lock waits), with intervals
// over the rounds and Welch's test marking the difference (*), and the share's part of
// the session time per transaction; --json carries the same; compare of
// two rounds gives the same table; the plan's report has the section and
// its charts.
func TestWhyPlanHotRow(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	// hot=1: every client updates row 1; hot=0: rows spread over 100000
	// (hotRowScript and spreadRowScript in one file, a define apart).
	script := "\\set aid random(1, 100000)\n\\set row :aid * (1 - :hot) + :hot\nBEGIN;\n" +
		"UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :row;\n" +
		"SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nCOMMIT;\n"
	if err := os.WriteFile(filepath.Join(dir, "rows.sql"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "why.yaml")
	if err := os.WriteFile(path, []byte(`name: whyhot
servers:
  - name: pg
    flavor: postgres
    profile: fast
  - name: maria
    flavor: mariadb
    profile: fast
workloads:
  - name: script
    params: {file: `+filepath.Join(dir, "rows.sql")+`}
axes:
  threads: [8]
  define: [hot=0, hot=1]
baseline:
  define: hot=0
rounds: 3
warmup: 0
duration: 3s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "r.db")
	r := dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	if !strings.Contains(r.stdout, "Where the difference comes from, each cell (B) against its baseline cell (A):") {
		t.Errorf("plan run does not end with the readings:\n%s", tail(r.stdout, 20))
	}

	r = dbarena(t, "plan", "show", "whyhot", "--results", results, "--baseline", "define=hot=0").mustSucceed(t)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  script pg threads=8 define=hot=1 vs script pg threads=8 define=hot=0: .*B's sessions spend \d+ points more of their time in lock waits \(\d+% vs \d+%, \+[0-9.]+ ms per transaction\)$`),
		regexp.MustCompile(`(?m)^  script maria threads=8 define=hot=1 vs script maria threads=8 define=hot=0: .*B's sessions spend \d+ points more of their time in row-lock waits \(\d+% vs \d+%, \+[0-9.]+ ms per transaction\)$`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("plan show lacks %s:\n%s", want, tail(r.stdout, 12))
		}
	}

	r = dbarena(t, "plan", "show", "whyhot", "--results", results, "--baseline", "define=hot=0", "--why").mustSucceed(t)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^script pg threads=8 define=hot=1 vs script pg threads=8 define=hot=0: \(mean over 3 and 3 rounds, 95% intervals; \* B differs from A: Welch's t-test of B - A\):$`),
		regexp.MustCompile(`(?m)^    lock wait +[0-9.]+ +[0-9.]+ +\+[0-9.]+ pts  \[\+[0-9.]+, \+[0-9.]+\] \* +\+[0-9.]+ \[[-+][0-9.]+, [-+][0-9.]+\]$`),
		regexp.MustCompile(`(?m)^    row-lock wait +[0-9.]+ +[0-9.]+ +\+[0-9.]+ pts  \[\+[0-9.]+, \+[0-9.]+\] \* +\+[0-9.]+ \[[-+][0-9.]+, [-+][0-9.]+\]$`),
		regexp.MustCompile(`(?m)^    session time per transaction \(threads / tps\): A [0-9.]+ ms, B [0-9.]+ ms \(\+[0-9.]+ ms\)$`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("plan show --why lacks %s:\n%s", want, tail(r.stdout, 40))
		}
	}

	r = dbarena(t, "plan", "show", "whyhot", "--results", results, "--baseline", "define=hot=0", "--json").mustSucceed(t)
	var doc struct {
		Why []struct {
			Cell, Baseline, Reading string
			Figures                 []struct {
				Key    string
				Points *struct {
					Value       float64
					Significant bool
				}
				ContribMS *struct{ Value float64 } `json:"contrib_ms"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Why) != 2 {
		t.Fatalf("plan show --json: %v, %d why entries\n%s", err, len(doc.Why), tail(r.stdout, 20))
	}
	for _, w := range doc.Why {
		f := w.Figures
		lock := -1
		for i := range f {
			if f[i].Key == "bottleneck.figures.wait_lock_pct" || f[i].Key == "bottleneck.figures.row_lock_pct" {
				lock = i
			}
		}
		// Ordered by contribution: the shares come after the costs, the
		// lock waits first among them.
		if lock < 0 || f[lock].Points == nil || !f[lock].Points.Significant || f[lock].ContribMS == nil || f[lock].ContribMS.Value <= 0 ||
			!strings.Contains(w.Reading, "lock waits") || f[lock-1].Points != nil {
			t.Errorf("%s vs %s: %q, figures %+v", w.Cell, w.Baseline, w.Reading, f)
		}
	}

	// One round of pg's spread rows against one of its hot row: compare
	// reads the rounds of each cell.
	spread, hot := planRunID(t, results, "workload=script,server=pg,threads=8,define=hot=0"), planRunID(t, results, "workload=script,server=pg,threads=8,define=hot=1")
	r = dbarena(t, "compare", spread, hot, "--results", results).mustSucceed(t)
	if !strings.Contains(r.stdout, "Where the difference comes from (mean over 3 and 3 rounds, 95% intervals;") ||
		!strings.Contains(r.stdout, "more of their time in lock waits") {
		t.Errorf("compare:\n%s", tail(r.stdout, 20))
	}

	html := filepath.Join(dir, "r.html")
	dbarena(t, "report", "--plan", "whyhot", "--baseline", "define=hot=0, server=pg", "-o", html, "--results", results).mustSucceed(t)
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`<h2 id="why">Where the difference comes from</h2>`,
		"Where the difference comes from: define=hot=1, server=pg vs define=hot=0, server=pg, script at 8 threads",
		"more of their time in lock waits", `id="chart-why-1"`, `id="chart-waits-`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// planRunID returns the number of a run of a plan cell in a results store.
func planRunID(t *testing.T, path, cell string) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		run, err := st.Run(ctx, row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Plan != nil && run.Plan.Cell == cell {
			return strconv.FormatInt(row.ID, 10)
		}
	}
	t.Fatalf("no run of cell %s in %s", cell, path)
	return ""
}

// TestWhyDurableCommit: durable against relaxed commit on PostgreSQL
// (synchronous_commit) and MariaDB (innodb_flush_log_at_trx_commit and
// sync_binlog), 2 rounds each in a plan: compare of the relaxed cell (A)
// and the durable one (B) puts fsyncs per transaction first and names them
// in its reading; on PostgreSQL the wait share that moved is the WAL's.
func TestWhyDurableCommit(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "upd.sql"), []byte(updateScript), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dur.yaml")
	if err := os.WriteFile(path, []byte(`name: whydur
servers:
  - {name: pgon, flavor: postgres, profile: durable}
  - {name: pgoff, flavor: postgres, profile: durable, settings: {synchronous_commit: "off"}}
  - {name: myon, flavor: mariadb, profile: durable}
  - {name: myoff, flavor: mariadb, profile: durable, settings: {innodb_flush_log_at_trx_commit: "0", sync_binlog: "0"}}
workloads:
  - name: script
    params: {file: `+filepath.Join(dir, "upd.sql")+`}
axes:
  threads: [4]
rounds: 2
warmup: 0
duration: 3s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "r.db")
	dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	fsyncFirst := regexp.MustCompile(`(?m)^    costs per transaction .*\n    fsyncs/txn +[0-9.]+ +[0-9.]+ .*\*$`)
	for _, c := range []struct{ on, off, wait string }{
		{"pgon", "pgoff", "of their time in (IO and WAL|LWLock) waits"},
		{"myon", "myoff", ""},
	} {
		a := planRunID(t, results, "workload=script,server="+c.off+",threads=4")
		b := planRunID(t, results, "workload=script,server="+c.on+",threads=4")
		r := dbarena(t, "compare", a, b, "--results", results).mustSucceed(t)
		out := r.stdout[strings.Index(r.stdout, "Where the difference comes from"):]
		reading := regexp.MustCompile(`reading: (B spends [0-9.]+x more fsyncs per transaction|B has fsyncs per transaction, A none); .*` + c.wait)
		if !fsyncFirst.MatchString(out) || !reading.MatchString(out) || !strings.Contains(out, "mean over 2 and 2 rounds") {
			t.Errorf("%s against %s: fsyncs are not the main difference:\n%s", c.on, c.off, out)
		}
	}
}
