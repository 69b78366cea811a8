package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestTPCCMySQLShape runs TPC-C in tpcc-mysql's shape (the default) on
// MariaDB: more warehouses than loaded are refused before the run (exit 2,
// no run stored), the output has tpcc_start's markers, interval lines and
// report, the summary names the shape and records the warehouses read
// from the tables, and check passes after the run.
func TestTPCCMySQLShape(t *testing.T) {
	needServers(t)
	dbarena(t, "cleanup", "tpcc").mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "cleanup", "tpcc") })
	dbarena(t, "prepare", "tpcc", "--warehouses", "1", "--threads", "4").mustSucceed(t)

	runs := func() int {
		out := dbarena(t, "results", "list", "--workload", "tpcc").mustSucceed(t).stdout
		return strings.Count(out, "\n")
	}
	stored := runs()
	r := dbarena(t, "run", "tpcc", "--warehouses", "2", "--time", "2s")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--warehouses 2: the TPC-C tables hold 1") {
		t.Fatalf("--warehouses 2 on 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := runs(); got != stored {
		t.Errorf("the refused run was stored: %d result lines, %d before", got, stored)
	}

	js := jsonPath(t)
	r = dbarena(t, "run", "tpcc", "--threads", "2", "--time", "3s", "--report-interval", "1s", "--monitor", "off",
		"-0", "50", "--json", js).mustSucceed(t)
	out := r.stdout
	for _, want := range []string{"MEASURING START.\n\n", "STOPPING THREADS", "<Raw Results>", "<Raw Results2(sum ver.)>",
		"<Constraint Check> (all must be [OK])", "<TpmC>", "statement shape: tpcc-mysql", "avg_rt: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	line := regexp.MustCompile(`(?m)^ +[0-9]+, trx: [0-9]+, 95%: [0-9.]+, 99%: [0-9.]+, max_rt: [0-9.]+(, [0-9]+\|[0-9.]+){4}$`)
	start, stop := strings.Index(out, "MEASURING START."), strings.Index(out, "STOPPING THREADS")
	if start < 0 || stop < start || len(line.FindAllString(out[start:stop], -1)) < 2 {
		t.Errorf("no tpcc_start interval lines between the markers:\n%s", out)
	}
	// -0 50: New-Order's late limit is 50 ms, printed in tpcc_start's unit.
	if !regexp.MustCompile(`\[0\] sc:[0-9]+ lt:[0-9]+  rt:[0-9]+  fl:[0-9]+ avg_rt: [0-9.]+ \(50\)`).MatchString(out) {
		t.Errorf("<Raw Results> line of New-Order lacks the limit (50):\n%s", out)
	}
	run := readSummary(t, js)
	if run.Params["shape"] != "tpcc-mysql" || run.Params["warehouses"] != float64(1) || run.Params["rt_limit_ms New-Order"] != float64(50) {
		t.Errorf("summary params: %v", run.Params)
	}
	if r := dbarena(t, "check", "tpcc"); r.code != ExitOK {
		t.Fatalf("check after the run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
