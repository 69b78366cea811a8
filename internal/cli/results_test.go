package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
)

// resultsFixture makes a store file with two runs and returns its path and
// their ids.
func resultsFixture(t *testing.T) (string, []int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	var ids []int64
	for i, status := range []string{summary.StatusComplete, summary.StatusDegraded} {
		r := &summary.Run{
			Schema: summary.Schema, Status: status, Workload: "oltp_read_write", Threads: 4 + i,
			StartedAt: start.Add(time.Duration(i) * time.Minute), EndedAt: start.Add(time.Duration(i+1) * time.Minute),
			Target:     summary.Target{Flavor: "mariadb", Version: "10.11", DSN: "mysql://u:***@h/db"},
			Throughput: summary.Throughput{TPS: 100 + float64(i)},
			Intervals:  []summary.Interval{{TS: 1, TPS: 99}, {TS: 2, TPS: 101}},
			Tags:       map[string]string{"series": "a"},
			Plan:       &summary.PlanRef{Name: "p", Cell: "c", Round: 1},
			Histogram:  "HISTFAAAACl4nJNpmSzMwMDAyQABzFCaEUTPmnGTjU3Qv3M/OhVXOjMDAwAjMwXM",
		}
		id, err := st.SaveRun(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return path, ids
}

func showJSON(t *testing.T, id, results string) map[string]any {
	t.Helper()
	r := dbarena(t, "results", "show", id, "--json", "--results", results).mustSucceed(t)
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("show --json: %v", err)
	}
	delete(m, "id")
	return m
}

func TestResultsExportImport(t *testing.T) {
	src, ids := resultsFixture(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "runs.jsonl")
	dbarena(t, "results", "export", itoa(ids[0]), itoa(ids[1]), "-o", out, "--results", src).mustSucceed(t)

	dst := filepath.Join(dir, "dst.db")
	r := dbarena(t, "results", "import", out, "--results", dst).mustSucceed(t)
	if !strings.Contains(r.stdout, "Imported 2 runs") {
		t.Errorf("import said %q", r.stdout)
	}
	for i := range ids {
		a, b := showJSON(t, itoa(ids[i]), src), showJSON(t, itoa(ids[i]), dst)
		ab, _ := json.Marshal(a)
		bb, _ := json.Marshal(b)
		if string(ab) != string(bb) {
			t.Errorf("run %d changed on the way:\n%s\n%s", ids[i], ab, bb)
		}
	}

	// A run exported while running arrives aborted, and list shows it.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	running := filepath.Join(dir, "running.jsonl")
	body := strings.Replace(lines[0], `"runs":2`, `"runs":1`, 1) + strings.Replace(lines[1], `"status":"complete"`, `"status":"running"`, 1)
	if err := os.WriteFile(running, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	dbarena(t, "results", "import", running, "--results", dst).mustSucceed(t)
	list := dbarena(t, "results", "list", "--results", dst).mustSucceed(t)
	if !strings.Contains(list.stdout, "aborted") {
		t.Errorf("results list does not show the aborted run:\n%s", list.stdout)
	}

	t.Run("to stdout", func(t *testing.T) {
		r := dbarena(t, "results", "export", itoa(ids[0]), "-o", "-", "--results", src).mustSucceed(t)
		if !strings.HasPrefix(r.stdout, `{"format":"dbarena.export/v1","runs":1}`) {
			t.Errorf("stdout starts %.60q", r.stdout)
		}
	})
}

func TestResultsExportImportErrors(t *testing.T) {
	src, ids := resultsFixture(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"format":"dbarena.export/v1","runs":1}`+"\n{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missingDir := filepath.Join(dir, "nope", "r.db")
	tests := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"bad line", []string{"results", "import", bad, "--results", src}, 2, []string{bad, "line 2", "invalid JSON"}},
		{"no such file", []string{"results", "import", filepath.Join(dir, "none.jsonl"), "--results", src}, 2, []string{"none.jsonl"}},
		{"no file", []string{"results", "import", "--results", src}, 2, []string{"exactly one FILE"}},
		{"store dir missing", []string{"results", "list", "--results", missingDir}, 2, []string{missingDir, "no such directory"}},
		{"import into missing dir", []string{"results", "import", bad, "--results", missingDir}, 2, []string{"no such directory"}},
		{"unknown run", []string{"results", "export", "999", "-o", filepath.Join(dir, "x.jsonl"), "--results", src}, 2, []string{"999", "not found"}},
		{"no -o", []string{"results", "export", itoa(ids[0]), "--results", src}, 2, []string{"-o FILE"}},
		{"bad id", []string{"results", "export", "x", "-o", "-", "--results", src}, 2, []string{`"x"`}},
		{"output dir missing", []string{"results", "export", itoa(ids[0]), "-o", filepath.Join(dir, "nope", "x.jsonl"), "--results", src}, 2, []string{"nope"}},
		{"unknown scheme", []string{"results", "list", "--results", "redis://u:pw@h/db"}, 2, []string{"unknown scheme"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dbarena(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tt.code, r.stderr)
			}
			msg := strings.TrimSpace(r.stderr)
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tt.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, ":pw@") {
				t.Errorf("error shows a password: %q", msg)
			}
		})
	}
	if _, err := os.Stat(filepath.Dir(missingDir)); !os.IsNotExist(err) {
		t.Errorf("a missing store directory was created (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a failed export left its file (%v)", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a failed export left %s", e.Name())
		}
	}
}

// TestResultsDSNStore: runs move from a file into a MariaDB results store
// and back out; no output shows the DSN's password.
func TestResultsDSNStore(t *testing.T) {
	needServers(t)
	tgt := suite.mariadb.Target()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	// The workload account may not create databases: the sandbox's
	// superuser makes one and grants it.
	db, err := d.Open(suite.mariadb.AdminTarget(), dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE cli_results_dsn"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("DROP DATABASE cli_results_dsn") //nolint:errcheck // best effort
	if _, err := db.Exec("GRANT ALL ON cli_results_dsn.* TO ?@'127.0.0.1'", tgt.User); err != nil {
		t.Fatal(err)
	}
	tgt.Database = "cli_results_dsn"
	dsn := tgt.DSN()

	src, ids := resultsFixture(t)
	out := filepath.Join(t.TempDir(), "runs.jsonl")
	dbarena(t, "results", "export", itoa(ids[0]), itoa(ids[1]), "-o", out, "--results", src).mustSucceed(t)
	var outputs []string
	r := dbarena(t, "results", "import", out, "--results", dsn).mustSucceed(t)
	outputs = append(outputs, r.stdout, r.stderr)
	if !strings.Contains(r.stdout, "Imported 2 runs") || !strings.Contains(r.stdout, "***") {
		t.Errorf("import said %q", r.stdout)
	}
	r = dbarena(t, "results", "list", "--results", dsn).mustSucceed(t)
	outputs = append(outputs, r.stdout, r.stderr)
	if strings.Count(r.stdout, "oltp_read_write") != 2 {
		t.Errorf("list:\n%s", r.stdout)
	}
	r = dbarena(t, "results", "show", "999", "--results", dsn)
	outputs = append(outputs, r.stdout, r.stderr)
	if r.code != 2 {
		t.Errorf("show of a missing run: exit %d", r.code)
	}
	bad := strings.Replace(dsn, tgt.Password, tgt.Password+"x", 1)
	r = dbarena(t, "results", "list", "--results", bad)
	outputs = append(outputs, r.stdout, r.stderr)
	if r.code != 3 {
		t.Errorf("wrong password: exit %d, want 3 (%s)", r.code, r.stderr)
	}
	for _, o := range outputs {
		if strings.Contains(o, tgt.Password) {
			t.Errorf("output shows the password: %q", o)
		}
	}
}
