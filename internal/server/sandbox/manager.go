package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
)

// Manager creates and runs the sandboxes under Home/sandboxes. Its methods
// may be called from several goroutines and processes: each one takes an
// exclusive lock on the sandbox directory while it changes the sandbox.
type Manager struct {
	// Home is $DBARENA_HOME.
	Home string
	// ServerRoot holds the files of servers that do not run as the current
	// user (every server when dbarena runs as root), in ServerRoot/HASH/NAME
	// (mode 0700) owned by the server's OS user. Default /var/lib/dbarena.
	ServerRoot string
	// ServerUser is the unprivileged OS user servers run as when dbarena
	// runs as root (created with useradd if missing). "" gives every
	// sandbox a system user of its own, "dbarena-" and a hash of the home
	// and the sandbox name, created on its first start and deleted by
	// Remove, so that a server, or a program its superuser runs, reaches
	// no other sandbox's files or socket.
	ServerUser string
	// Notify, if set, receives one-line notices of changes to the system
	// made on the caller's behalf (a created or removed OS user).
	Notify func(msg string)
	// SearchDirs are the directories (glob patterns allowed) Discover
	// searches, in order.
	SearchDirs []string
	// StartTimeout bounds the wait for a started server to accept queries.
	StartTimeout time.Duration
	// StopTimeout bounds a clean shutdown before SIGKILL.
	StopTimeout time.Duration
}

// NewManager returns a Manager for home with defaults: $PATH then the usual
// system directories as search path, 60 s start and stop timeouts.
func NewManager(home string) *Manager {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, defaultSearchDirs...)
	return &Manager{
		Home:         home,
		ServerRoot:   "/var/lib/dbarena",
		SearchDirs:   dirs,
		StartTimeout: 60 * time.Second,
		StopTimeout:  60 * time.Second,
	}
}

// Default starts (creating it on first use) the sandbox "default" from the
// first discovered server, MySQL family first.
func (m *Manager) Default(ctx context.Context) (*Sandbox, error) {
	return m.Start(ctx, Spec{Name: "default"})
}

// Get returns the sandbox with its live state; errors.Is(err, ErrNotFound)
// when there is none.
func (m *Manager) Get(name string) (*Sandbox, error) {
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	rec, err := m.load(name)
	if err != nil {
		return nil, err
	}
	return m.view(rec), nil
}

// List returns every sandbox, by name, with its live state. Sandboxes that
// cannot be read are left out and reported in the error.
func (m *Manager) List() ([]*Sandbox, error) {
	entries, err := os.ReadDir(m.root())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	var out []*Sandbox
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !nameRE.MatchString(e.Name()) {
			continue
		}
		rec, err := m.load(e.Name())
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
			continue
		}
		out = append(out, m.view(rec))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

// Admin returns the superuser connection of the sandbox name through its
// unix socket (see Sandbox.AdminTarget): for what the workload account may
// not do, such as SET GLOBAL.
func (m *Manager) Admin(name string) (target.Target, error) {
	sb, err := m.Get(name)
	if err != nil {
		return target.Target{}, err
	}
	return sb.AdminTarget(), nil
}
