package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
)

// childEnv makes the test binary run the CLI (for kill -9 tests): its value
// is the arguments, separated by "\x1f".
const childEnv = "DBARENA_TEST_CHILD"

func runChild(args string) int {
	app := NewApp(os.Stdout, os.Stderr, append([]string{"dbarena"}, strings.Split(args, "\x1f")...), os.Getenv,
		func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) })
	return app.Main(context.Background())
}

func writePlan(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlanCheckErrors(t *testing.T) {
	tests := []struct {
		name string
		plan string
		want []string
	}{
		{"unknown key and bad threads", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [oltp_read_only]\naxes:\n  threads: [0]\nroundz: 2\n",
			[]string{"p.yaml:5: threads \"0\"", "p.yaml:6: unknown key \"roundz\""}},
		{"unknown workload", "name: x\nservers: [{flavor: mariadb}]\nworkloads:\n  - name: oltp_nope\n",
			[]string{"p.yaml:4: unknown workload \"oltp_nope\""}},
		{"bad workload parameter", "name: x\nservers: [{flavor: mariadb}]\nworkloads:\n  - name: oltp_read_only\n    params:\n      tables: many\n      colour: red\n",
			[]string{"p.yaml:6: tables: \"many\"", "p.yaml:7: workload oltp_read_only has no parameter \"colour\""}},
		{"bad axis value", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [oltp_read_only]\naxes:\n  table-size:\n    - 10\n    - lots\n",
			[]string{"p.yaml:7: table-size: \"lots\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writePlan(t, tt.plan)
			r := dbarena(t, "plan", "check", path)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("want one line, got %q", r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, filepath.Dir(path)+"/"+w) {
					t.Errorf("stderr %q lacks %q", r.stderr, w)
				}
			}
		})
	}
	t.Run("shipped plans are valid", func(t *testing.T) {
		files, _ := filepath.Glob("../../plans/*.yaml")
		if len(files) < 5 {
			t.Fatalf("plans: %v", files)
		}
		for _, f := range files {
			dbarena(t, "plan", "check", f, "--scale", "0.1").mustSucceed(t)
		}
	})
}

// dsnPlan is a plan on the suite's MariaDB sandbox (by DSN) and, when bad is
// set, a server that cannot be reached.
func dsnPlan(t *testing.T, name string, rounds int, bad bool) string {
	t.Helper()
	good := suite.mariadb.Target()
	text := fmt.Sprintf(`name: %s
servers:
  - name: good
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
`, name, good.User, good.Password, good.Port, good.Database)
	if bad {
		text += "  - name: gone\n    dsn: mysql://nobody:secret@127.0.0.1:1/sbtest\n"
	}
	text += fmt.Sprintf(`workloads:
  - name: oltp_point_select
    params: {tables: 1, table-size: 1000}
axes:
  threads: [1, 2]
rounds: %d
warmup: 0
duration: 1s
`, rounds)
	return writePlan(t, text)
}

func planRuns(t *testing.T, results, name string) []store.RunRow {
	t.Helper()
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.List(context.Background(), store.Filter{Tags: map[string]string{"plan": name}})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestPlanFailingCellIsStoredAndPlanGoesOn(t *testing.T) {
	needServers(t)
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "plan", "run", dsnPlan(t, "failing", 2, true), "--results", results)
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertNoPassword(t, "stdout", r.stdout)
	count := map[string]int{}
	for _, row := range planRuns(t, results, "failing") {
		count[row.Status]++
		if row.Tags["plan.cell"] == "" || row.Tags["plan.round"] == "" {
			t.Errorf("run %d lacks plan tags: %v", row.ID, row.Tags)
		}
	}
	// good: 2 threads x 2 rounds complete; gone: 2 x 2 failed.
	if count["complete"] != 4 || count["failed"] != 4 {
		t.Errorf("runs by status %v, want 4 complete and 4 failed\n%s", count, r.stdout)
	}
	for _, want := range []string{"failed: prepare: cannot reach mysql://nobody:***@127.0.0.1:1", "baseline", "good threads=2"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	show := dbarena(t, "plan", "show", "failing", "--results", results).mustSucceed(t)
	if !strings.Contains(show.stdout, "good threads=1") {
		t.Errorf("plan show:\n%s", show.stdout)
	}
}

func TestPlanResumeAfterKill9(t *testing.T) {
	needServers(t)
	results := filepath.Join(t.TempDir(), "r.db")
	path := dsnPlan(t, "resume", 4, false) // 2 cells x 4 rounds = 8 runs
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "DBARENA_HOME="+suite.home,
		childEnv+"="+strings.Join([]string{"plan", "run", path, "--results", results}, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once some runs are stored, before the plan ends.
	deadline := time.Now().Add(3 * time.Minute)
	var before int
	for time.Now().Before(deadline) {
		if _, err := os.Stat(results); err == nil {
			if before = len(planRuns(t, results, "resume")); before >= 3 {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	rows := planRuns(t, results, "resume")
	if len(rows) < 3 || len(rows) >= 8 {
		t.Fatalf("%d runs stored when killed, want 3..7", len(rows))
	}
	earlier := map[int64]bool{}
	for _, row := range rows {
		earlier[row.ID] = true
	}

	r := dbarena(t, "plan", "run", path, "--resume", "--results", results).mustSucceed(t)
	if !strings.Contains(r.stdout, "already complete") {
		t.Errorf("resume output:\n%s", r.stdout)
	}
	seen := map[string]int{}
	for _, row := range planRuns(t, results, "resume") {
		if row.Status != "complete" {
			continue // a run cut by the kill is stored as nothing at all
		}
		seen[row.Tags["plan.cell"]+" round "+row.Tags["plan.round"]]++
	}
	if len(seen) != 8 {
		t.Errorf("%d distinct complete cell rounds, want 8: %v", len(seen), seen)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
	for id := range earlier {
		if rows := planRuns(t, results, "resume"); !containsID(rows, id) {
			t.Errorf("run %d stored before the kill is gone", id)
		}
	}
}

func containsID(rows []store.RunRow, id int64) bool {
	for _, r := range rows {
		if r.ID == id {
			return true
		}
	}
	return false
}

func TestServerImport(t *testing.T) {
	// A directory without a server binary is bad input.
	r := dbarena(t, "server", "import", t.TempDir())
	if r.code != ExitUsage || !strings.Contains(r.stderr, "no mariadbd, mysqld or postgres") {
		t.Errorf("import of an empty directory: exit %d %s", r.code, r.stderr)
	}
	r = dbarena(t, "server", "start", "x", "--server", "nope")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--server nope: not in the server catalogue") {
		t.Errorf("start --server nope: exit %d %s", r.code, r.stderr)
	}
	needServers(t)
	basedir := filepath.Dir(filepath.Dir(suite.mariadb.Server)) // /usr for /usr/sbin/mariadbd
	dbarena(t, "server", "import", basedir, "--name", "sys-mariadb").mustSucceed(t)
	defer dbarena(t, "server", "forget", "sys-mariadb")
	list := dbarena(t, "server", "list").mustSucceed(t)
	if !strings.Contains(list.stdout, "sys-mariadb") || !strings.Contains(list.stdout, suite.mariadb.Version) {
		t.Errorf("server list:\n%s", list.stdout)
	}
	fi, err := os.Stat(filepath.Join(suite.home, "servers.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("catalogue file: %v %v", fi, err)
	}
}
