package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// readOnlyDir makes dir read-only (a read-only bind mount of itself, which
// binds root too) until the test ends; it skips when mounts are not
// allowed, except in CI.
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bind mount (CI runs as root): %v", err)
		}
		t.Skipf("cannot bind mount: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
}

// TestResultsReadOnlyStore: a store file 0444 on a read-only file system
// used to fail every results command; the reading ones now work.
func TestResultsReadOnlyStore(t *testing.T) {
	src, ids := resultsFixture(t)
	if err := os.Chmod(src, 0o444); err != nil {
		t.Fatal(err)
	}
	readOnlyDir(t, filepath.Dir(src))
	list := dbarena(t, "results", "list", "--results", src).mustSucceed(t)
	if strings.Count(list.stdout, "oltp_read_write") != 2 {
		t.Errorf("results list:\n%s", list.stdout)
	}
	dbarena(t, "results", "show", itoa(ids[1]), "--results", src).mustSucceed(t)
	exp := dbarena(t, "results", "export", itoa(ids[0]), "-o", "-", "--results", src).mustSucceed(t)
	if !strings.HasPrefix(exp.stdout, `{"format":"dbarena.export/v1","runs":1}`) {
		t.Errorf("export: %.80q", exp.stdout)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	dbarena(t, "report", itoa(ids[0]), itoa(ids[1]), "--results", src, "-o", html).mustSucceed(t)
	dbarena(t, "compare", itoa(ids[0]), itoa(ids[1]), "--results", src).mustSucceed(t)
	// Writing still fails, with one line saying why.
	out := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(out, []byte(exp.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	r := dbarena(t, "results", "import", out, "--results", src)
	if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("import into a read-only store: exit %d %q", r.code, r.stderr)
	}
}

// TestResultsStoreFullFallback: a run whose store cannot be written (a
// full file system) keeps its summary in dbarena-run-*.json, says so, and
// that file (0600) can be imported once there is room again, once.
func TestResultsStoreFullFallback(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a small tmpfs (CI runs as root): %v", err)
		}
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	work := t.TempDir()
	t.Chdir(work) // the fallback file is written in the working directory
	results := filepath.Join(dir, "r.db")
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	ar := startRun(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--time", "6",
		"--threads", "2", "--report-interval", "1", "--results", results, "--monitor", "off")
	time.Sleep(2 * time.Second)
	fillFileSystem(t, dir)
	r := ar.wait(t)
	files, _ := filepath.Glob(filepath.Join(work, "dbarena-run-*.json"))
	if r.code != ExitFailed || len(files) != 1 || !strings.Contains(r.stderr, "the run summary is in dbarena-run-") {
		t.Fatalf("exit %d, fallback files %v, stderr %q: want 1 and one file named", r.code, files, r.stderr)
	}
	fi, err := os.Stat(files[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("fallback file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	_ = os.Remove(filepath.Join(dir, "filler"))

	into := filepath.Join(t.TempDir(), "into.db")
	imp := dbarena(t, "results", "import", files[0], "--results", into).mustSucceed(t)
	if !strings.Contains(imp.stdout, "Imported 1 runs") {
		t.Errorf("import said %q", imp.stdout)
	}
	list := dbarena(t, "results", "list", "--results", into).mustSucceed(t)
	if !strings.Contains(list.stdout, "oltp_point_select") {
		t.Errorf("imported run not listed:\n%s", list.stdout)
	}
	again := dbarena(t, "results", "import", files[0], "--results", into).mustSucceed(t)
	if !strings.Contains(again.stdout, "Imported 0 runs") || !strings.Contains(again.stdout, "Skipped 1 runs") {
		t.Errorf("second import said %q", again.stdout)
	}
}

// TestPlanShowReadOnlyStore: plan show only reads, so a read-only store
// serves it.
func TestPlanShowReadOnlyStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	for round := 1; round <= 2; round++ {
		r := &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: "oltp_read_only", Threads: 2,
			StartedAt: start.Add(time.Duration(round) * time.Minute), EndedAt: start.Add(time.Duration(round+1) * time.Minute),
			Throughput: summary.Throughput{TPS: 100 + float64(round)},
			Plan:       &summary.PlanRef{Name: "ro", Cell: "threads=2", Coords: map[string]string{"threads": "2"}, Round: round},
			Tags:       map[string]string{"plan": "ro", "plan.cell": "threads=2", "plan.round": strconv.Itoa(round), "plan.session": "s1"}}
		if _, err := st.SaveRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	want := dbarena(t, "plan", "show", "ro", "--results", path).mustSucceed(t)
	readOnlyDir(t, filepath.Dir(path))
	got := dbarena(t, "plan", "show", "ro", "--results", path).mustSucceed(t)
	if got.stdout != want.stdout || !strings.Contains(got.stdout, "threads=2") {
		t.Errorf("plan show on a read-only store:\n%s\nwant:\n%s", got.stdout, want.stdout)
	}
}
