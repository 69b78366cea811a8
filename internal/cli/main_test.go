package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// The CLI tests share one dbarena home with two sandboxes: the default one
// (MariaDB, made the way a user's first command makes it) and "pg".
var suite struct {
	home     string
	mgr      *sandbox.Manager
	mariadb  *sandbox.Sandbox
	postgres *sandbox.Sandbox
	err      error
}

func TestMain(m *testing.M) {
	// As cmd/dbarena does: the driver's own log of lost connections only
	// repeats what dbarena counts and reports.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	if args := os.Getenv(childEnv); args != "" {
		os.Exit(runChild(args))
	}
	code := func() int {
		home, err := os.MkdirTemp("", "dbarena-cli-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(home)
		suite.home = home
		suite.mgr = sandbox.NewManager(home)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		suite.mariadb, suite.err = suite.mgr.Default(ctx)
		if suite.err == nil {
			suite.postgres, suite.err = suite.mgr.Start(ctx, sandbox.Spec{Name: "pg", Flavor: target.FlavorPostgres, Profile: "fast"})
		}
		defer func() {
			for _, name := range []string{"default", "pg"} {
				_ = suite.mgr.Remove(context.Background(), name)
			}
		}()
		return m.Run()
	}()
	os.Exit(code)
}

// needServers fails under CI and skips elsewhere when the sandboxes could
// not be started (no server binary installed).
func needServers(t testing.TB) {
	t.Helper()
	if suite.err == nil {
		return
	}
	if os.Getenv("CI") != "" || !errors.Is(suite.err, sandbox.ErrNoServer) {
		t.Fatalf("sandboxes: %v", suite.err)
	}
	t.Skipf("no database server installed: %v", suite.err)
}

// result is one in-process CLI invocation.
type result struct {
	code           int
	stdout, stderr string
}

// dbarena runs the CLI in-process with the suite's home.
func dbarena(t testing.TB, args ...string) result {
	t.Helper()
	return dbarenaCtx(t, context.Background(), nil, args...)
}

func dbarenaCtx(t testing.TB, ctx context.Context, interrupt <-chan struct{}, args ...string) result {
	t.Helper()
	return dbarenaLive(t, ctx, interrupt, &liveBuffer{}, args...)
}

// liveBuffer is a run's stdout that a test may read while the run writes it.
type liveBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *liveBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *liveBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until out holds s (a run's first interval line, say), and
// fails the test after limit.
func (l *liveBuffer) waitFor(t testing.TB, s string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); !strings.Contains(l.String(), s); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not print %q within %v:\n%s", s, limit, tail(l.String(), 2000))
		}
	}
}

// dbarenaLive is dbarenaCtx writing stdout to out as the run goes.
func dbarenaLive(t testing.TB, ctx context.Context, interrupt <-chan struct{}, out *liveBuffer, args ...string) result {
	t.Helper()
	var errb bytes.Buffer
	env := map[string]string{"DBARENA_HOME": suite.home, "HOME": suite.home}
	interrupts := func(ctx context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(ctx)
		if interrupt != nil {
			go func() {
				select {
				case <-interrupt:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
		return ctx, cancel
	}
	app := NewApp(out, &errb, append([]string{"dbarena"}, args...), func(k string) string { return env[k] }, interrupts)
	code := app.Main(ctx)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func (r result) mustSucceed(t testing.TB) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, tail(r.stdout, 3000), r.stderr)
	}
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// readSummary reads a --json file.
func readSummary(t testing.TB, path string) *summary.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run summary.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &run
}

func jsonPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "run.json")
}

// pgTarget is the --target of the PostgreSQL sandbox.
const pgTarget = "--target=sandbox:pg"

// flavors lists the two sandboxes as --target arguments ("" = default).
func flavors() []struct{ name, target string } {
	return []struct{ name, target string }{{"mariadb", ""}, {"postgres", pgTarget}}
}

// withTarget adds a --target argument when one is given.
func withTarget(tg string, args ...string) []string {
	if tg != "" {
		return append(args, tg)
	}
	return args
}

func assertNoPassword(t testing.TB, where, text string) {
	t.Helper()
	for _, sb := range []*sandbox.Sandbox{suite.mariadb, suite.postgres} {
		if sb == nil {
			continue
		}
		if pw := sb.Target().Password; pw != "" && strings.Contains(text, pw) {
			t.Fatalf("%s contains the password of sandbox %s", where, sb.Name)
		}
	}
}
