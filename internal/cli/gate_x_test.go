package cli

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/store"
)

// junitDoc is the part of a JUnit XML file CI systems read.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s is not valid JUnit XML: %v\n%s", path, err, b)
	}
	return doc
}

// TestGateRunThreshold: a run whose p95 threshold is below what it reaches
// exits 1 with the failing line, is stored (and written to --json) with
// the threshold results, and writes JUnit XML and Markdown outcomes.
func TestGateRunThreshold(t *testing.T) {
	needServers(t)
	for _, fl := range flavors() {
		t.Run(fl.name, func(t *testing.T) {
			dir := t.TempDir()
			results, jsonFile := filepath.Join(dir, "results.db"), filepath.Join(dir, "run.json")
			junit, md := filepath.Join(dir, "gates.xml"), filepath.Join(dir, "gates.md")
			dbarena(t, withTarget(fl.target, "prepare", "oltp_point_select", "--tables", "1", "--table-size", "2000", "--monitor", "none")...).mustSucceed(t)
			t.Cleanup(func() { dbarena(t, withTarget(fl.target, "cleanup", "oltp_point_select", "--tables", "1")...) })
			r := dbarena(t, withTarget(fl.target, "run", "oltp_point_select", "--tables", "1", "--table-size", "2000",
				"--threads", "2", "--time", "2", "--report-interval", "0", "--monitor", "none", "--results", results, "--json", jsonFile,
				"--threshold", "p95<0.001ms", "--threshold", "tps>0", "--junit", junit, "--md-summary", md)...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, tail(r.stdout, 2000), r.stderr)
			}
			if !regexp.MustCompile(`(?m)^FAIL p95<0\.001ms: p95 = [0-9.]+ ms, not < 0\.001 ms$`).MatchString(r.stdout) ||
				!regexp.MustCompile(`(?m)^PASS tps>0: tps = [0-9.]+/s$`).MatchString(r.stdout) {
				t.Errorf("no PASS/FAIL lines:\n%s", tail(r.stdout, 1500))
			}
			if !strings.Contains(r.stderr, "a threshold failed; the result is stored") {
				t.Errorf("stderr: %s", r.stderr)
			}
			run := storedRun(t, results)
			if run.Status != "complete" || len(run.Thresholds) != 2 {
				t.Fatalf("stored run: status %s, thresholds %+v", run.Status, run.Thresholds)
			}
			p95, tps := run.Thresholds[0], run.Thresholds[1]
			if p95.Pass || p95.Metric != "p95" || p95.Value == nil || *p95.Value != run.LatencyMS.P95 || p95.Limit != 0.001 {
				t.Errorf("p95 result %+v (run p95 %g)", p95, run.LatencyMS.P95)
			}
			if !tps.Pass || tps.Value == nil || *tps.Value != run.Throughput.TPS {
				t.Errorf("tps result %+v", tps)
			}
			if js := readSummary(t, jsonFile); len(js.Thresholds) != 2 || js.Thresholds[0].Pass {
				t.Errorf("--json thresholds %+v", js.Thresholds)
			}
			show := dbarena(t, "results", "show", fmt.Sprint(run.ID), "--results", results).mustSucceed(t)
			if !regexp.MustCompile(`(?m)^Thresholds:\n    FAIL p95<0\.001ms: p95 = [0-9.]+ ms, not < 0\.001 ms\n    PASS tps>0: `).MatchString(show.stdout) {
				t.Errorf("results show:\n%s", tail(show.stdout, 800))
			}
			doc := readJUnit(t, junit)
			if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 2 {
				t.Fatalf("junit %+v", doc)
			}
			c := doc.Suites[0].Cases
			if c[0].Name != "p95<0.001ms" || c[0].Failure == nil || !strings.Contains(c[0].Failure.Message, "not < 0.001 ms") ||
				c[1].Name != "tps>0" || c[1].Failure != nil {
				t.Errorf("junit cases %+v", c)
			}
			b, err := os.ReadFile(md)
			if err != nil || !strings.Contains(string(b), "## dbarena gates: FAIL") || !strings.Contains(string(b), "| `p95<0.001ms` | ❌ **fail** |") {
				t.Errorf("markdown (%v):\n%s", err, b)
			}
		})
	}
}

// TestGateThresholdBadInput: a threshold that does not parse is one line
// naming the flag, exit 2, and nothing runs or is stored.
func TestGateThresholdBadInput(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "oltp_point_select", "--threshold", "p95<<5ms"}, `--threshold "p95<<5ms": comparison "<<"`},
		{[]string{"run", "oltp_point_select", "--threshold", "p95<5 parsecs"}, `--threshold "p95<5 parsecs": unit "parsecs"`},
		{[]string{"run", "oltp_point_select", "--threshold", "latency<5ms"}, `unknown metric "latency"`},
		{[]string{"compare", "1", "2", "--fail-on", "tps:-5"}, `--fail-on "tps:-5": the size must be a percentage`},
		{[]string{"compare", "1", "2", "--junit", "x.xml"}, `need --fail-on`},
		{[]string{"run", "oltp_point_select", "--md-summary", "x.md"}, `--junit and --md-summary of run need --threshold`},
	} {
		r := dbarena(t, append(c.args, "--results", results)...)
		msg := strings.TrimSpace(r.stderr)
		if r.code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.code, msg, c.want)
		}
	}
	if _, err := os.Stat(results); err == nil {
		st, err := store.Open(t.Context(), results)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if rows, _ := st.List(t.Context(), store.Filter{}); len(rows) > 0 {
			t.Errorf("bad input stored %d runs", len(rows))
		}
	}
}

var storedAs = regexp.MustCompile(`Stored as run (\d+)`)

// gateRuns runs oltp_point_select on the default sandbox and returns the
// ID of its last stored run.
func gateRuns(t *testing.T, results string, args ...string) string {
	t.Helper()
	r := dbarena(t, append([]string{"run", "oltp_point_select", "--tables", "1", "--table-size", "2000", "--threads", "2",
		"--report-interval", "0", "--monitor", "none", "--results", results}, args...)...).mustSucceed(t)
	m := storedAs.FindAllStringSubmatch(r.stdout, -1)
	if len(m) == 0 {
		t.Fatalf("no stored run in:\n%s", tail(r.stdout, 1000))
	}
	return m[len(m)-1][1]
}

// TestGateCompareFailOn: a planted 30% slowdown (a client throttled to 70%
// of the baseline's fixed rate) fails --fail-on tps:-10% with rounds on
// both sides; two equal configurations pass; single runs cannot be judged
// and do not fail.
func TestGateCompareFailOn(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	dbarena(t, "prepare", "oltp_point_select", "--tables", "1", "--table-size", "2000", "--monitor", "none").mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "cleanup", "oltp_point_select", "--tables", "1") })
	base := gateRuns(t, results, "--time", "2", "--rate", "300", "--rounds", "3", "--tag", "side=base")
	slow := gateRuns(t, results, "--time", "2", "--rate", "210", "--rounds", "3", "--tag", "side=slow")
	same := gateRuns(t, results, "--time", "2", "--rate", "300", "--rounds", "3", "--tag", "side=same")

	junit, md := filepath.Join(dir, "cmp.xml"), filepath.Join(dir, "cmp.md")
	r := dbarena(t, "compare", base, slow, "--results", results, "--fail-on", "tps:-10%,p95:+1000%", "--junit", junit, "--md-summary", md)
	if r.code != 1 || !regexp.MustCompile(`(?m)^FAIL tps:-10%: tps -[23][0-9]\.[0-9]%, 95% CI \[.*\], rounds A 3, B 3: beyond -10\.0% with 95% confidence$`).MatchString(r.stdout) {
		t.Fatalf("slowdown: exit %d, want 1 with a FAIL line\n%s\n%s", r.code, tail(r.stdout, 1500), r.stderr)
	}
	if !strings.Contains(r.stderr, "1 of 2 --fail-on limits exceeded") {
		t.Errorf("stderr %q", r.stderr)
	}
	doc := readJUnit(t, junit)
	if doc.Tests != 2 || doc.Failures != 1 || doc.Suites[0].Cases[0].Failure == nil || doc.Suites[0].Cases[1].Failure != nil {
		t.Errorf("junit %+v", doc)
	}
	if b, _ := os.ReadFile(md); !strings.Contains(string(b), "| `tps:-10%` | ❌ **fail** |") {
		t.Errorf("markdown:\n%s", b)
	}

	r = dbarena(t, "compare", base, same, "--results", results, "--fail-on", "tps:-10%")
	if r.code != 0 || !regexp.MustCompile(`(?m)^PASS tps:-10%: .*rounds A 3, B 3: not beyond -10\.0%`).MatchString(r.stdout) {
		t.Fatalf("equal configurations: exit %d, want 0 with a PASS line\n%s\n%s", r.code, tail(r.stdout, 1500), r.stderr)
	}

	one := gateRuns(t, results, "--time", "1", "--rate", "300", "--tag", "side=one")
	half := gateRuns(t, results, "--time", "1", "--rate", "150", "--tag", "side=half")
	r = dbarena(t, "compare", one, half, "--results", results, "--fail-on", "tps:-10%", "--junit", junit)
	if r.code != 0 || !regexp.MustCompile(`(?m)^CANNOT JUDGE tps:-10%: tps -[0-9.]+%; rounds A 1, B 1: single runs cannot say`).MatchString(r.stdout) {
		t.Fatalf("single runs: exit %d, want 0 with CANNOT JUDGE\n%s\n%s", r.code, tail(r.stdout, 1500), r.stderr)
	}
	if doc := readJUnit(t, junit); doc.Failures != 0 || doc.Suites[0].Cases[0].Skipped == nil {
		t.Errorf("single runs junit %+v", doc)
	}
}

// TestGatePlanThresholds: a plan workload's thresholds: are judged on each
// of its runs, stored with them, printed, and a failed one makes plan run
// exit 1; a bad one is refused with the plan file and line.
func TestGatePlanThresholds(t *testing.T) {
	bad := writePlan(t, "name: g\nservers: [{flavor: mariadb}]\nworkloads:\n  - name: oltp_point_select\n    thresholds:\n      - p95<5ms\n      - p95<<5ms\n")
	r := dbarena(t, "plan", "check", bad)
	if msg := strings.TrimSpace(r.stderr); r.code != 2 || !strings.Contains(msg, `p.yaml:7:`) || !strings.Contains(msg, `thresholds: "p95<<5ms": comparison "<<"`) || strings.Contains(msg, "\n") {
		t.Errorf("bad threshold: exit %d, stderr %q", r.code, msg)
	}

	needServers(t)
	good := suite.mariadb.Target()
	path := writePlan(t, fmt.Sprintf(`name: gates
servers:
  - name: good
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
workloads:
  - name: oltp_point_select
    params: {tables: 1, table-size: 1000}
    thresholds: [p95<0.001ms, tps>0]
rounds: 1
warmup: 0
duration: 1s
`, good.User, good.Password, good.Port, good.Database))
	results := filepath.Join(t.TempDir(), "r.db")
	r = dbarena(t, "plan", "run", path, "--results", results)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), r.stderr)
	}
	if !strings.Contains(r.stdout, "Thresholds: 0 of 1 judged runs passed all") ||
		!regexp.MustCompile(`(?m)^FAIL p95<0\.001ms: p95 = [0-9.]+ ms, not < 0\.001 ms \[round 1 .*\(run \d+\)\]$`).MatchString(r.stdout) ||
		!strings.Contains(r.stderr, "thresholds failed in 1 of 1 runs") {
		t.Errorf("plan output:\n%s\nstderr: %s", tail(r.stdout, 1500), r.stderr)
	}
	assertNoPassword(t, "stdout", r.stdout)
	run := storedRun(t, results)
	if run.Status != "complete" || len(run.Thresholds) != 2 || run.Thresholds[0].Pass || !run.Thresholds[1].Pass {
		t.Errorf("stored: %s %+v", run.Status, run.Thresholds)
	}
}

// TestGateTPCCPerType: per transaction type thresholds read the run's
// per-type figures (type:new_order finds TPC-C's New-Order), and tpmC.
func TestGateTPCCPerType(t *testing.T) {
	needServers(t)
	dbarena(t, "cleanup", "tpcc").mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "cleanup", "tpcc") })
	dbarena(t, "prepare", "tpcc", "--warehouses", "1", "--threads", "2", "--monitor", "none").mustSucceed(t)
	js := jsonPath(t)
	r := dbarena(t, "run", "tpcc", "--warehouses", "1", "--threads", "2", "--time", "2", "--report-interval", "0",
		"--monitor", "none", "--json", js, "--threshold", "type:new_order p90<0.001ms", "--threshold", "type:payment count>0",
		"--threshold", "type:delivery errors<=100%", "--threshold", "tpmc>0")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), r.stderr)
	}
	run := readSummary(t, js)
	th := run.Thresholds
	if len(th) != 4 || th[0].Pass || !th[1].Pass || !th[2].Pass || !th[3].Pass {
		t.Fatalf("thresholds %+v\n%s", th, tail(r.stdout, 800))
	}
	if no := run.PerType["New-Order"]; th[0].Value == nil || *th[0].Value != no.LatencyMS.P90 || th[0].Type != "new_order" {
		t.Errorf("new_order p90 %+v, run's New-Order p90 %g", th[0], no.LatencyMS.P90)
	}
	if th[3].Value == nil || run.TpmC == nil || *th[3].Value != *run.TpmC || th[3].Unit != "/min" {
		t.Errorf("tpmc %+v", th[3])
	}
	if !regexp.MustCompile(`(?m)^FAIL type:new_order p90<0\.001ms: new_order p90 = [0-9.]+ ms, not < 0\.001 ms$`).MatchString(r.stdout) {
		t.Errorf("no FAIL line:\n%s", tail(r.stdout, 800))
	}
}

// TestGatePlanShowFailOn: plan show --fail-on judges each cell against its
// baseline cell: twenty point selects per event against one fail
// tps:-10%, a limit the drop stays within passes.
func TestGatePlanShowFailOn(t *testing.T) {
	needServers(t)
	good := suite.mariadb.Target()
	path := writePlan(t, fmt.Sprintf(`name: gatebase
servers:
  - name: good
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
workloads:
  - name: oltp_read_only
    params: {tables: 1, table-size: 1000, range-selects: false, skip-trx: true}
axes:
  point-selects: [1, 20]
baseline: {point-selects: 1}
rounds: 3
warmup: 0
duration: 1s
`, good.User, good.Password, good.Port, good.Database))
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	junit := filepath.Join(dir, "plan.xml")
	r := dbarena(t, "plan", "show", "gatebase", "--results", results, "--baseline", "point-selects=1", "--fail-on", "tps:-10%", "--junit", junit)
	if r.code != 1 || !regexp.MustCompile(`(?m)^FAIL tps:-10%: tps -[0-9.]+%, 95% CI .*rounds A 3, B 3: beyond -10\.0% with 95% confidence \[oltp_read_only good point-selects=20 vs oltp_read_only good point-selects=1\]$`).MatchString(r.stdout) {
		t.Fatalf("exit %d, want 1 with a FAIL line\n%s\n%s", r.code, tail(r.stdout, 1500), r.stderr)
	}
	if doc := readJUnit(t, junit); doc.Failures != 1 || len(doc.Suites) != 1 {
		t.Errorf("junit %+v", doc)
	}
	r = dbarena(t, "plan", "show", "gatebase", "--results", results, "--baseline", "point-selects=1", "--fail-on", "tps:-99.9%")
	if r.code != 0 || !strings.Contains(r.stdout, "PASS tps:-99.9%") {
		t.Errorf("exit %d, want 0 with a PASS line\n%s\n%s", r.code, tail(r.stdout, 1500), r.stderr)
	}
}

// TestGateReplayLag: a paced replay's thresholds read its lag behind the
// capture's schedule and its errors.
func TestGateReplayLag(t *testing.T) {
	needServers(t)
	file := writeCapture(t, "mariadb")
	js := jsonPath(t)
	r := dbarena(t, "run", "replay", "--capture", file, "--speed", "1", "--json", js, "--monitor", "none",
		"--threshold", "lag_p99<60s", "--threshold", "lag_max>=0", "--threshold", "errors<1")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (a statement fails)\n%s\n%s", r.code, tail(r.stdout, 2000), r.stderr)
	}
	run := readSummary(t, js)
	th := run.Thresholds
	if run.Replay == nil || run.Replay.LagMS == nil {
		t.Fatalf("a paced replay without lag figures: %+v", run.Replay)
	}
	if len(th) != 3 || !th[0].Pass || !th[1].Pass || th[2].Pass || th[0].Value == nil || *th[0].Value != run.Replay.LagMS.P99 ||
		*th[1].Value != run.Replay.LagMS.Max || *th[2].Value != float64(run.Totals.Errors) {
		t.Errorf("thresholds %+v (lag %+v, errors %d)", th, *run.Replay.LagMS, run.Totals.Errors)
	}
	if !strings.Contains(r.stdout, "FAIL errors<1: errors = 1, not < 1") {
		t.Errorf("no FAIL line:\n%s", tail(r.stdout, 600))
	}
}
