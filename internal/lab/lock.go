package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockedError is returned by LockPlan when another process holds the
// plan's lock.
type LockedError struct {
	Plan string
	Path string
	// PID is the holder's process id, 0 when its lock file does not say.
	PID int
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s (lock %s); wait for it to end, or add --wait DURATION", e.Holder(), e.Path)
}

// Holder says who holds the lock: "plan NAME is being run by process PID".
func (e *LockedError) Holder() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("plan %s is being run by %s", e.Plan, holder)
}

// PlanLock is a held plan lock; Unlock releases it.
type PlanLock struct {
	f *os.File
}

// Unlock releases the lock (the kernel also does when the process dies).
func (l *PlanLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// LockPlan takes the lock of plan name in dir (created 0700 if missing):
// an flock(2) on dir/plan-NAME-HASH.lock, so that two `plan run` of one plan
// (which share its session, its sandboxes and their tables) cannot run at
// once. The lock file holds the holder's pid. The kernel releases the lock
// when its process ends, even by kill -9, so a crashed run leaves no stale
// lock. With wait <= 0 it fails at once with a *LockedError when another
// process holds the lock; otherwise it retries until wait has passed.
func LockPlan(dir, name string, wait time.Duration) (*PlanLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("plan lock: %w", err)
	}
	path := filepath.Join(dir, lockName(name))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("plan lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("plan lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			pid := holder(path)
			f.Close()
			return nil, &LockedError{Plan: name, Path: path, PID: pid}
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The lock is ours: say who holds it.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &PlanLock{f: f}, nil
}

// holder reads the pid written in the lock file at path, 0 if none.
func holder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}

// lockName is the lock file's name for plan name: readable and unique
// (a hash of the exact name).
func lockName(name string) string {
	sum := sha256.Sum256([]byte(name))
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	if len(clean) > 40 {
		clean = clean[:40]
	}
	return "plan-" + clean + "-" + hex.EncodeToString(sum[:6]) + ".lock"
}
