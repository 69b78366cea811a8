package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// osUser is the OS account a server process runs as. The zero value means
// "the current user".
type osUser struct {
	Name     string `json:"name,omitempty"`
	UID, GID int    `json:"-"`
	set      bool
}

func (u osUser) credential() *syscall.Credential {
	if !u.set {
		return nil
	}
	return &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}
}

// chown gives path to u (no-op for the current user).
func (u osUser) chown(path string) error {
	if !u.set {
		return nil
	}
	if err := os.Lchown(path, u.UID, u.GID); err != nil {
		return fmt.Errorf("chown %s to %s: %w", path, u.Name, err)
	}
	return nil
}

// chownTree gives every file under root (root included) to u, symbolic
// links themselves and not their targets. A missing root is no error.
func (u osUser) chownTree(root string) error {
	if !u.set {
		return nil
	}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return u.chown(p)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// serverUserName names the unprivileged OS user the server of sandbox
// name runs as when dbarena runs as root: Manager.ServerUser if set, else
// the sandbox's own system user (sandboxUserName), so that no two
// sandboxes, of this home or another, share an OS identity. The user is
// looked up, or made, by ensure just before the server's files are. When
// dbarena is not root, the server runs as the current user (the zero
// osUser).
func (m *Manager) serverUserName(name string) osUser {
	switch {
	case os.Geteuid() != 0:
		return osUser{}
	case m.ServerUser != "":
		return osUser{Name: m.ServerUser, set: true}
	}
	return osUser{Name: m.sandboxUserName(name), set: true}
}

// ensure fills in the uid and gid of u, creating the user as a system
// user (no home, no login shell) when it is missing; Notify says so.
func (m *Manager) ensure(u osUser, sandbox string) (osUser, error) {
	if !u.set {
		return u, nil
	}
	comment := "dbarena sandbox " + sandbox
	if u.Name == m.ServerUser {
		comment = "dbarena sandbox servers"
	}
	return m.ensureUser(u.Name, comment)
}

// sandboxUserName is the system user of sandbox name of this home:
// "dbarena-" and a hash of the home's absolute path and the name, stable
// across runs and within the 32 characters useradd allows.
func (m *Manager) sandboxUserName(name string) string {
	abs, err := filepath.Abs(m.Home)
	if err != nil {
		abs = m.Home
	}
	return sandboxUserPrefix + shortHash(abs+"\x00"+name)
}

// sandboxUserPrefix starts the name of every per-sandbox system user.
const sandboxUserPrefix = "dbarena-"

// userLockRetry bounds the retries of useradd and userdel while another
// process holds the lock of /etc/passwd.
const userLockRetry = 30 * time.Second

// ensureUser looks name up, creating it as a system user without a home
// or a login shell if it is missing.
func (m *Manager) ensureUser(name, comment string) (osUser, error) {
	if u, err := user.Lookup(name); err == nil {
		return toOSUser(u)
	}
	deadline := time.Now().Add(userLockRetry)
	for {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", "--comment", comment, name).CombinedOutput()
		u, lerr := user.Lookup(name)
		if lerr == nil { // made now, or by another process meanwhile
			if err == nil && m.Notify != nil {
				m.Notify(fmt.Sprintf("created system user %q (uid %s) to run a sandbox server without root", name, u.Uid))
			}
			return toOSUser(u)
		}
		if err == nil {
			err = lerr
		}
		if !lockBusy(out) || time.Now().After(deadline) {
			return osUser{}, fmt.Errorf("create OS user %q to run a sandbox server unprivileged: %w: %s", name, err, strings.TrimSpace(string(out)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockBusy reports whether useradd or userdel failed because another
// process was changing the user database.
func lockBusy(out []byte) bool {
	s := string(out)
	return strings.Contains(s, "cannot lock") || strings.Contains(s, "try again later")
}

// removeSandboxUser deletes the system user dbarena made for sandbox rec
// (never a user named by Manager.ServerUser or one recorded by an older
// dbarena), once nothing of the sandbox runs. Its uid may later be given
// to another user: Remove deletes every file the server made in its own
// directories first.
func (m *Manager) removeSandboxUser(ctx context.Context, rec *record) error {
	name := rec.ServerUser
	if !m.ownUser(rec) {
		return nil
	}
	if _, err := user.Lookup(name); err != nil {
		return nil // removed already
	}
	deadline := time.Now().Add(userLockRetry)
	for {
		out, err := exec.CommandContext(ctx, "userdel", name).CombinedOutput()
		if err == nil {
			if m.Notify != nil {
				m.Notify(fmt.Sprintf("removed system user %q of sandbox %s", name, rec.Name))
			}
			return nil
		}
		if !lockBusy(out) || time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("remove OS user %q: %w: %s", name, err, strings.TrimSpace(string(out)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func toOSUser(u *user.User) (osUser, error) {
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return osUser{}, fmt.Errorf("OS user %q: non-numeric uid/gid", u.Username)
	}
	if uid == 0 {
		return osUser{}, fmt.Errorf("OS user %q is root: sandbox servers must run unprivileged", u.Username)
	}
	return osUser{Name: u.Username, UID: uid, GID: gid, set: true}, nil
}

// rootSecurer is an engine whose installer leaves a passwordless
// superuser: the first start runs secureSQL as an init file, before the
// server serves any connection, to drop the accounts TCP could reach and
// give the superuser the admin password.
type rootSecurer interface {
	secureSQL(rootPassword, hostname string) string
}

var _ rootSecurer = mysqlFamily{}

// ownUser reports whether rec runs as the system user dbarena made for
// it alone.
func (m *Manager) ownUser(rec *record) bool {
	return os.Geteuid() == 0 && rec.ServerUser != "" && rec.ServerUser == m.sandboxUserName(rec.Name) && rec.ServerUser != m.ServerUser
}

// killUserProcesses kills every process of the OS user name (a sandbox's
// own user, which runs nothing but that sandbox's server) and waits up to
// 10 s for them to go.
func killUserProcesses(ctx context.Context, name string) {
	u, err := user.Lookup(name)
	if err != nil || os.Geteuid() != 0 {
		return
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil || uid == 0 {
		return
	}
	gone := func() bool {
		pids := userProcesses(uid)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(pids) == 0
	}
	waitFor(ctx, 10*time.Second, gone)
}

// userProcesses lists the processes any of whose uids is uid, from /proc.
func userProcesses(uid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "Uid:" {
				continue
			}
			for _, f := range fields[1:] {
				if n, err := strconv.Atoi(f); err == nil && n == uid {
					pids = append(pids, pid)
					break
				}
			}
			break
		}
	}
	return pids
}
