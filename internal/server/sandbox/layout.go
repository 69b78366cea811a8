package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
)

// record is what sandbox.json holds.
type record struct {
	Schema     string        `json:"schema"`
	Name       string        `json:"name"`
	Flavor     target.Flavor `json:"flavor"`
	Version    string        `json:"version"`
	Server     string        `json:"server"`
	Basedir    string        `json:"basedir,omitempty"`
	Port       int           `json:"port"`
	Profile    string        `json:"profile"`
	Settings   []Setting     `json:"settings,omitempty"`
	BufferPool string        `json:"buffer_pool"`
	User       string        `json:"user"`
	Database   string        `json:"database"`
	// Allocator is preloaded into the server (Spec.Allocator); Preload is
	// the library the running server was started with.
	Allocator string `json:"allocator,omitempty"`
	Preload   string `json:"preload,omitempty"`
	// TLS: the server has a generated certificate (Spec.TLS).
	TLS bool `json:"tls,omitempty"`
	// ServerUser is the OS user the server runs as, when not the owner:
	// the sandbox's own (Manager.sandboxUserName), Manager.ServerUser, or
	// the shared "dbarena" or "postgres" of an older dbarena.
	ServerUser string `json:"server_user,omitempty"`
	// State is the recorded intent: running or stopped.
	State State `json:"state"`
	PID   int   `json:"pid,omitempty"`
	// Command is the start command's arguments; the live process must
	// show them in its command line.
	Command     []string `json:"command,omitempty"`
	Initialized bool     `json:"initialized"`
	// Secured: the superuser has the admin password (and, MySQL family,
	// the installer's passwordless accounts are gone). PostgreSQL data
	// directories of older dbarena versions, whose superuser was trusted
	// on the socket, are not.
	Secured   bool      `json:"secured,omitempty"`
	Layout    layout    `json:"layout"`
	CreatedAt time.Time `json:"created_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
}

const recordSchema = "dbarena.sandbox/v1"

func (m *Manager) root() string { return filepath.Join(m.Home, "sandboxes") }

func (m *Manager) dir(name string) string { return filepath.Join(m.root(), name) }

// serverRootFor is this home's directory under ServerRoot.
func (m *Manager) serverRootFor() string {
	abs, err := filepath.Abs(m.Home)
	if err != nil {
		abs = m.Home
	}
	return filepath.Join(m.ServerRoot, shortHash(abs))
}

// serverDir is where the files the server's OS user must own go: the
// sandbox directory, or one under ServerRoot for a server that cannot run
// as the current user.
func (m *Manager) serverDir(name string, u osUser) string {
	if u.set {
		return filepath.Join(m.serverRootFor(), name)
	}
	return m.dir(name)
}

// lockNew makes the sandbox directory if needed and locks it.
func (m *Manager) lockNew(ctx context.Context, name string) (unlock func(), err error) {
	if err := mkdirPrivate(m.root(), osUser{}); err != nil {
		return nil, err
	}
	if err := mkdirPrivate(m.dir(name), osUser{}); err != nil {
		return nil, err
	}
	return lockDir(ctx, m.dir(name))
}

// loadOrNew reads sandbox.json of name, or returns a new record with the
// defaults when there is none.
func (m *Manager) loadOrNew(name string) (rec *record, isNew bool, err error) {
	rec, err = m.load(name)
	if errors.Is(err, ErrNotFound) {
		return &record{Schema: recordSchema, Name: name, Profile: ProfileDefault, State: StateStopped,
			User: DefaultUser, Database: DefaultDatabase, CreatedAt: time.Now().UTC()}, true, nil
	}
	return rec, false, err
}

// load reads sandbox.json of name.
func (m *Manager) load(name string) (*record, error) {
	data, err := os.ReadFile(filepath.Join(m.dir(name), "sandbox.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox %q: %w", name, err)
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("sandbox %q: read sandbox.json: %w", name, err)
	}
	return &rec, nil
}

// save writes sandbox.json of rec.
func (m *Manager) save(rec *record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("sandbox %q: encode: %w", rec.Name, err)
	}
	return writePrivate(filepath.Join(m.dir(rec.Name), "sandbox.json"), append(data, '\n'), osUser{})
}

// marker is what the live server's /proc/PID/cmdline must contain.
func (rec *record) marker() string { return strings.Join(rec.Command, "\x00") }

// liveState checks the recorded process: running if it is alive and its
// port is listening, dead if it was started but is gone or not listening.
func (rec *record) liveState() State {
	if rec.State != StateRunning {
		return StateStopped
	}
	if alive(rec.PID, rec.marker()) && listening(rec.Port) {
		return StateRunning
	}
	return StateDead
}

// prepareDirs creates the sandbox's private directories.
func (m *Manager) prepareDirs(rec *record, u osUser) error {
	l := rec.Layout
	if u.set {
		// ServerRoot and the per-home directory are traversable, not
		// listable, and stay dbarena's: each sandbox runs as a user of its
		// own, whose directory below them (0700) no other can enter.
		for _, d := range []string{m.ServerRoot, m.serverRootFor()} {
			if err := os.MkdirAll(d, 0o711); err != nil {
				return fmt.Errorf("create %s: %w", d, err)
			}
			if err := os.Chmod(d, 0o711); err != nil {
				return fmt.Errorf("chmod %s: %w", d, err)
			}
			if err := os.Lchown(d, os.Geteuid(), os.Getegid()); err != nil {
				return fmt.Errorf("chown %s: %w", d, err)
			}
		}
	}
	dirs := []string{l.ServerDir, l.RunDir, l.TmpDir}
	if rec.Flavor.Family() == target.MySQL {
		dirs = append(dirs, fileDir(l))
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if err := mkdirPrivate(d, u); err != nil {
			return err
		}
	}
	// A server that writes its own log must own it; dbarena appends the
	// installer's output to it too.
	if u.set && within(l.ErrorLog, l.ServerDir) {
		f, err := os.OpenFile(l.ErrorLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("create %s: %w", l.ErrorLog, err)
		}
		f.Close()
		if err := u.chown(l.ErrorLog); err != nil {
			return err
		}
	}
	return nil
}

// fileDir is the only directory the server's file functions (LOAD_FILE,
// INTO OUTFILE, LOAD DATA INFILE) reach: secure_file_priv.
func fileDir(l layout) string { return filepath.Join(l.ServerDir, "files") }

func writeFiles(files []configFile, u osUser) error {
	for _, f := range files {
		if err := writePrivate(f.Path, f.Content, u); err != nil {
			return err
		}
	}
	return nil
}

// configChanged reports whether any rendered file differs from the one on disk.
func configChanged(files []configFile) bool {
	for _, f := range files {
		old, err := os.ReadFile(f.Path)
		if err != nil || string(old) != string(f.Content) {
			return true
		}
	}
	return false
}

// cleanStale removes pid and socket files a dead server left behind.
func (m *Manager) cleanStale(rec *record) {
	l := rec.Layout
	for _, p := range []string{l.PIDFile, l.Socket, l.Socket + ".lock"} {
		if p != "" {
			_ = removeIfExists(p)
		}
	}
}

// discardUnsaved removes what a failed start of a new sandbox made (its
// OS user included), unless it got as far as recording it (then Remove
// finds every path and the user).
func (m *Manager) discardUnsaved(rec *record) {
	if _, err := os.Stat(filepath.Join(m.dir(rec.Name), "sandbox.json")); err == nil {
		return
	}
	for _, d := range append(rec.Layout.owned(), m.dir(rec.Name)) {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), userLockRetry)
	defer cancel()
	_ = m.removeSandboxUser(ctx, rec)
}
