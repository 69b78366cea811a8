package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Stop shuts the sandbox's server down (SIGKILL after StopTimeout). Stopping
// a stopped sandbox does nothing.
func (m *Manager) Stop(ctx context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	if _, err := m.load(name); err != nil {
		return err
	}
	unlock, err := lockDir(ctx, m.dir(name))
	if err != nil {
		return err
	}
	defer unlock()
	return m.stopLocked(ctx, name)
}

// stopLocked is Stop for a caller holding the sandbox lock.
func (m *Manager) stopLocked(ctx context.Context, name string) error {
	rec, err := m.load(name)
	if err != nil {
		return err
	}
	eng, err := engineFor(Binary{Flavor: rec.Flavor, Version: rec.Version, Server: rec.Server, Basedir: rec.Basedir})
	if err != nil {
		return err
	}
	return m.stopServer(ctx, rec, eng)
}

// stopServer stops rec's process if it is alive, kills leftovers of its
// process group, removes stale pid and socket files and records "stopped".
func (m *Manager) stopServer(ctx context.Context, rec *record, eng engine) error {
	if rec.PID > 0 {
		timeout := m.StopTimeout
		if timeout <= 0 {
			timeout = 60 * time.Second
		}
		if err := stopProcess(ctx, rec.PID, rec.marker(), eng.StopSignal(), timeout); err != nil {
			return fmt.Errorf("stop sandbox %q: %w", rec.Name, err)
		}
		killLeftovers(ctx, rec.PID)
	}
	m.cleanStale(rec)
	rec.State, rec.PID = StateStopped, 0
	return m.save(rec)
}

// kill stops a server whose start failed, without the caller's context.
func (m *Manager) kill(rec *record, eng engine) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = stopProcess(ctx, rec.PID, rec.marker(), eng.StopSignal(), 5*time.Second)
	m.cleanStale(rec)
}

// Restart stops the sandbox and starts it again with its recorded spec.
func (m *Manager) Restart(ctx context.Context, name string) (*Sandbox, error) {
	if err := m.Stop(ctx, name); err != nil {
		return nil, err
	}
	return m.Start(ctx, Spec{Name: name})
}

// Remove stops the sandbox and deletes every file it made, including
// server directories outside Home.
func (m *Manager) Remove(ctx context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	dir := m.dir(name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := m.load(name)
	if errors.Is(err, ErrNotFound) {
		// A directory without sandbox.json: a start that never got far.
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove sandbox %q: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if err := m.stopLocked(ctx, name); err != nil {
		return err
	}
	// A program the server started in a session of its own (COPY ... TO
	// PROGRAM) outlives it: nothing may keep running as the sandbox's
	// user once it is gone, nor hold its uid for a later one.
	if m.ownUser(rec) {
		killUserProcesses(ctx, rec.ServerUser)
	}
	var errs []error
	for _, d := range rec.Layout.owned() {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	if rec.Layout.ServerDir != "" && rec.Layout.ServerDir != rec.Layout.Dir {
		// Drop the per-home and root server directories once empty.
		parent := filepath.Dir(rec.Layout.ServerDir)
		if os.Remove(parent) == nil {
			_ = os.Remove(filepath.Dir(parent))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove sandbox %q: %w", name, err)
	}
	if err := m.removeSandboxUser(ctx, rec); err != nil {
		return fmt.Errorf("remove sandbox %q: %w", name, err)
	}
	return nil
}
