package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestK8sHelp: `dbarena help k8s`, `help k8s run` and `help k8s run
// WORKLOAD` answer (k8s run's --help pointed to a help topic that did not
// exist); `k8s run --help` is the help of k8s run.
func TestK8sHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"help", "k8s"}, []string{"render WORKLOAD", "run WORKLOAD", "dbarena help k8s run WORKLOAD"}},
		{[]string{"help", "k8s", "run"}, []string{"dbarena k8s run WORKLOAD", "--kubeconfig", "--results-reachable", "--follow-timeout", "oltp_point_select"}},
		{[]string{"help", "k8s", "render"}, []string{"dbarena k8s render WORKLOAD", "--image", "--backoff-limit"}},
		{[]string{"help", "k8s", "run", "oltp_point_select"}, []string{"dbarena k8s run oltp_point_select", "--results-reachable", "--barrier-timeout", "--table-size", "--threads"}},
		{[]string{"k8s", "run", "--help"}, []string{"dbarena k8s run WORKLOAD", "--kubeconfig"}},
		{[]string{"k8s", "--help"}, []string{"render WORKLOAD", "run WORKLOAD"}},
	} {
		r := dbarena(t, tc.args...).mustSucceed(t)
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, r.stdout)
			}
		}
	}
	// The topic a flag error points to exists.
	r := dbarena(t, "k8s", "run", "oltp_point_select", "--help")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "see `dbarena help k8s run oltp_point_select`") {
		t.Fatalf("k8s run WORKLOAD --help: exit %d, %s", r.code, r.stderr)
	}
	dbarena(t, "help", "k8s", "run", "oltp_point_select").mustSucceed(t)
	for _, args := range [][]string{{"help", "k8s", "nope"}, {"help", "k8s", "run", "nope"}, {"help", "k8s", "run", "oltp_point_select", "x"}} {
		if r := dbarena(t, args...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
	}
}

// TestK8sRunResultsUnreachable: k8s run refuses a results store the pods
// cannot reach (a local file, a DSN on a loopback address or without a
// host), exit 2 before anything is sent to the cluster, without showing
// the password; --results-reachable lets it through.
func TestK8sRunResultsUnreachable(t *testing.T) {
	base := []string{"k8s", "run", "oltp_point_select", "--shards", "2", "--threads", "2", "--image", "i",
		"--target", "mysql://u@db.example/sbtest", "--kubeconfig", "/nonexistent/kubeconfig"}
	for _, tc := range []struct{ results, want string }{
		{filepath.Join(t.TempDir(), "r.db"), "a local file, which the pods cannot reach"},
		{"mysql://u:s3cret@127.0.0.1:3306/r", "--results mysql://u:***@127.0.0.1:3306/r: a loopback address (127.0.0.1)"},
		{"postgres://u@localhost/r", "a loopback address (localhost)"},
		{"postgres://u@[::1]:5432/r", "a loopback address (::1)"},
		{"mysql://u@127.8.9.10/r", "a loopback address"},
		{"postgres://u@/r?socket=/run/postgresql/.s.PGSQL.5432", "a DSN without a host"},
	} {
		r := dbarena(t, append(append([]string{}, base...), "--results", tc.results)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "--results-reachable") {
			t.Errorf("--results %s: exit %d, %q; want 2 and %q", tc.results, r.code, r.stderr, tc.want)
		}
		if strings.Contains(r.stderr, "s3cret") {
			t.Errorf("--results %s: the password is shown", tc.results)
		}
		// Told the pods reach it, k8s run goes on (to open the store).
		r = dbarena(t, append(append([]string{}, base...), "--results", tc.results, "--results-reachable")...)
		if strings.Contains(r.stderr, "cannot reach") || !strings.Contains(r.stderr, "open results store") && !strings.Contains(r.stderr, "--kubeconfig") {
			t.Errorf("--results %s --results-reachable: exit %d, %s", tc.results, r.code, r.stderr)
		}
	}
	// Another host is reachable as far as dbarena can tell.
	r := dbarena(t, append(append([]string{}, base...), "--results", "mysql://u@results.example:3306/r")...)
	if strings.Contains(r.stderr, "cannot reach") {
		t.Errorf("a remote store refused: %s", r.stderr)
	}
}
