package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"testing"

	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// PostgresVersions are the catalogue names of the oldest and newest
// PostgreSQL majors dbarena ships (scripts/fetch-servers test registers
// them): each passes a smoke subset of the flavor tests that the system
// PostgreSQL passes in full.
var PostgresVersions = []string{"postgres-10", "postgres-18"}

// CatalogEntry is one server of the user's catalogue.
type CatalogEntry struct {
	Name    string        `json:"name"`
	Flavor  target.Flavor `json:"flavor"`
	Version string        `json:"version"`
	Basedir string        `json:"basedir"`
}

// CatalogHome is the dbarena home whose servers.json scripts/fetch-servers
// fills: $DBARENA_HOME, default ~/.local/share/dbarena (make test exports
// it).
func CatalogHome() string {
	if h := os.Getenv("DBARENA_HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return filepath.Join(h, ".local", "share", "dbarena")
}

// Catalogued returns the catalogue entry called name. When it is absent
// (or its server binary is gone) the test is skipped with one line naming
// the command that fetches it, or failed when CI is set.
func Catalogued(tb testing.TB, name string) CatalogEntry {
	tb.Helper()
	path := filepath.Join(CatalogHome(), "servers.json")
	e, err := readCatalog(path, name)
	if err == nil {
		if _, serr := os.Stat(e.Basedir); serr != nil {
			err = fmt.Errorf("catalogued in %s but its basedir is gone: %w", path, serr)
		}
	}
	if err != nil {
		msg := fmt.Sprintf("sandboxtest: server %s: %v (scripts/fetch-servers test fetches it; make test does under CI)", name, err)
		if os.Getenv("CI") != "" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return e
}

func readCatalog(path, name string) (CatalogEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return CatalogEntry{}, fmt.Errorf("no server catalogue %s", path)
	}
	if err != nil {
		return CatalogEntry{}, err
	}
	var doc struct {
		Servers []CatalogEntry `json:"servers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return CatalogEntry{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range doc.Servers {
		if e.Name == name {
			return e, nil
		}
	}
	return CatalogEntry{}, fmt.Errorf("not in the server catalogue %s", path)
}

// StartCatalogued starts a sandbox of the test's own on the catalogued
// server name (see Catalogued), removed when the test ends.
func StartCatalogued(tb testing.TB, name string, modify func(*sandbox.Spec)) *Sandbox {
	tb.Helper()
	e := Catalogued(tb, name)
	return StartNamed(tb, e.Flavor, func(s *sandbox.Spec) {
		s.Basedir = e.Basedir
		if modify != nil {
			modify(s)
		}
	})
}

// catalogShared holds the shared sandboxes of catalogued servers, by name
// (guarded by state.mu; cleanup removes them with the rest of the home).
var catalogShared = map[string]shared{}

// EnvCatalogued is Env on the catalogued server name: one shared sandbox
// per name per test binary.
func EnvCatalogued(tb testing.TB, name string) workload.Env {
	tb.Helper()
	return envOn(tb, startCatalogShared(tb, Catalogued(tb, name)))
}

func startCatalogShared(tb testing.TB, e CatalogEntry) target.Target {
	tb.Helper()
	state.mu.Lock()
	defer state.mu.Unlock()
	m, err := managerLocked()
	if err != nil {
		tb.Fatalf("sandboxtest: %v", err)
	}
	if s, ok := catalogShared[e.Name]; ok {
		if s.err != nil {
			tb.Fatalf("sandboxtest: %v", s.err)
		}
		return s.t
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	sb, err := m.Start(ctx, sandbox.Spec{Name: "shared-" + sanitize(e.Name), Flavor: e.Flavor, Basedir: e.Basedir, Profile: sandbox.ProfileFast})
	var s shared
	if err != nil {
		s.err = fmt.Errorf("start shared %s sandbox: %w", e.Name, err)
	} else {
		s.t = sb.Target()
	}
	catalogShared[e.Name] = s
	if s.err != nil {
		tb.Fatalf("sandboxtest: %v", s.err)
	}
	return s.t
}
