// Package sandboxtest starts real database servers for the tests of other
// packages, through dbarena's own sandbox code.
//
// Servers are shared: Start launches at most one server per flavor per test
// binary, in a private temporary home, with the "fast" profile. Use Main in
// TestMain so they are removed when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
//
// Tests that disturb their server (restart, kill) take their own with
// StartNamed. A missing server binary skips the test, or fails it when the
// environment variable CI is set.
package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// startTimeout bounds one sandbox start (init included).
const startTimeout = 2 * time.Minute

// state is per test binary: the one place in dbarena with package-level
// mutable state, because a test binary has no other home for it.
var state struct {
	mu      sync.Mutex
	home    string
	mgr     *sandbox.Manager
	shared  map[target.Flavor]shared
	counter int
}

type shared struct {
	t   target.Target
	err error
}

// Sandbox is a test's own sandbox.
type Sandbox struct {
	// Manager manages the sandbox (Stop, Restart, Get...).
	Manager *sandbox.Manager
	// Name is the sandbox name.
	Name string
	// Target is the workload account's connection.
	Target target.Target
}

// Manager returns the Manager of this test binary's private home.
func Manager(tb testing.TB) *sandbox.Manager {
	tb.Helper()
	state.mu.Lock()
	defer state.mu.Unlock()
	m, err := managerLocked()
	if err != nil {
		tb.Fatalf("sandboxtest: %v", err)
	}
	return m
}

func managerLocked() (*sandbox.Manager, error) {
	if state.mgr != nil {
		return state.mgr, nil
	}
	home, err := os.MkdirTemp("", "dbarena-test-")
	if err != nil {
		return nil, fmt.Errorf("create test home: %w", err)
	}
	state.home, state.mgr = home, sandbox.NewManager(home)
	state.shared = map[target.Flavor]shared{}
	return state.mgr, nil
}

// Start returns the workload target of this test binary's shared sandbox
// of flavor (mariadb or postgres), starting it on first use.
func Start(tb testing.TB, flavor target.Flavor) target.Target {
	tb.Helper()
	state.mu.Lock()
	defer state.mu.Unlock()
	m, err := managerLocked()
	if err != nil {
		tb.Fatalf("sandboxtest: %v", err)
	}
	if s, ok := state.shared[flavor]; ok {
		if s.err != nil {
			tb.Fatalf("sandboxtest: %v", s.err)
		}
		return s.t
	}
	requireBinary(tb, m, flavor)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	sb, err := m.Start(ctx, sandbox.Spec{Name: "shared-" + string(flavor), Flavor: flavor, Profile: sandbox.ProfileFast})
	var s shared
	if err != nil {
		s.err = fmt.Errorf("start shared %s sandbox: %w", flavor, err)
	} else {
		s.t = sb.Target()
	}
	state.shared[flavor] = s
	if s.err != nil {
		tb.Fatalf("sandboxtest: %v", s.err)
	}
	return s.t
}

// Env starts (or reuses) the flavor's shared server and returns a workload
// environment on it: a pool of up to 8 connections, closed when the test
// ends.
func Env(tb testing.TB, flavor target.Flavor) workload.Env {
	tb.Helper()
	return envOn(tb, Start(tb, flavor))
}

// envOn is a workload environment on tgt: a pool of up to 8 connections,
// closed when the test ends.
func envOn(tb testing.TB, tgt target.Target) workload.Env {
	tb.Helper()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		tb.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 8})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return workload.Env{DB: db, Dialect: d, Target: tgt}
}

// NewHome returns the Manager of a new private home of the test's own, as
// a second DBARENA_HOME on the host; its sandboxes are removed, and the
// home deleted, when the test ends. Start sandboxes in it with StartIn.
func NewHome(tb testing.TB) *sandbox.Manager {
	tb.Helper()
	home, err := os.MkdirTemp("", "dbarena-test-")
	if err != nil {
		tb.Fatalf("sandboxtest: create test home: %v", err)
	}
	m := sandbox.NewManager(home)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		list, err := m.List()
		if err != nil {
			tb.Errorf("sandboxtest: list %s: %v", home, err)
		}
		for _, sb := range list {
			if err := m.Remove(ctx, sb.Name); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
				tb.Errorf("sandboxtest: remove %s: %v", sb.Name, err)
			}
		}
		if err := os.RemoveAll(home); err != nil {
			tb.Errorf("sandboxtest: %v", err)
		}
	})
	return m
}

// StartNamed starts a sandbox of the test's own, which is removed when the
// test ends. modify, if not nil, adjusts the spec (profile fast, a
// generated name) before the start.
func StartNamed(tb testing.TB, flavor target.Flavor, modify func(*sandbox.Spec)) *Sandbox {
	tb.Helper()
	return StartIn(tb, Manager(tb), flavor, modify)
}

// StartIn is StartNamed in the home of m (see NewHome).
func StartIn(tb testing.TB, m *sandbox.Manager, flavor target.Flavor, modify func(*sandbox.Spec)) *Sandbox {
	tb.Helper()
	requireBinary(tb, m, flavor)
	state.mu.Lock()
	state.counter++
	name := fmt.Sprintf("t%d-%s", state.counter, sanitize(tb.Name()))
	state.mu.Unlock()
	if len(name) > 32 {
		name = name[:32]
	}
	spec := sandbox.Spec{Name: name, Flavor: flavor, Profile: sandbox.ProfileFast}
	if modify != nil {
		modify(&spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := m.Remove(ctx, spec.Name); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			tb.Errorf("sandboxtest: remove %s: %v", spec.Name, err)
		}
	})
	sb, err := m.Start(ctx, spec)
	if err != nil {
		tb.Fatalf("sandboxtest: start %s sandbox: %v", flavor, err)
	}
	return &Sandbox{Manager: m, Name: spec.Name, Target: sb.Target()}
}

// requireBinary skips the test (fails it under CI) when no server of
// flavor is installed.
func requireBinary(tb testing.TB, m *sandbox.Manager, flavor target.Flavor) {
	tb.Helper()
	bins, err := m.Discover()
	for _, b := range bins {
		if b.Flavor == flavor {
			return
		}
	}
	msg := fmt.Sprintf("sandboxtest: no %s server binary found (discover: %v)", flavor, err)
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// sanitize keeps the characters sandbox names allow.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// Main runs the tests, then removes every sandbox they started and the
// temporary home. Use it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if err := cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func cleanup() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.mgr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	list, err := state.mgr.List()
	errs := []error{err}
	for _, sb := range list {
		if err := state.mgr.Remove(ctx, sb.Name); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(state.home); err != nil {
		errs = append(errs, err)
	}
	state.mgr, state.home, state.shared = nil, "", nil
	return errors.Join(errs...)
}
