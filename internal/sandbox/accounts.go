package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbarena/dbarena/internal/target"
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

// serverUserFor picks the OS user of servers that refuse to run as root.
func (m *Manager) serverUserFor(e engine) (osUser, error) {
	if os.Geteuid() != 0 || e.Flavor() != target.FlavorPostgres {
		return osUser{}, nil
	}
	names := []string{"postgres", "dbarena"}
	if m.ServerUser != "" {
		names = []string{m.ServerUser}
	}
	for _, n := range names {
		if u, err := user.Lookup(n); err == nil {
			return toOSUser(u)
		}
	}
	name := names[len(names)-1]
	out, err := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
		"--shell", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		return osUser{}, fmt.Errorf("create OS user %q for %s (it refuses to run as root): %w: %s", name, e.Flavor(), err, strings.TrimSpace(string(out)))
	}
	u, err := user.Lookup(name)
	if err != nil {
		return osUser{}, fmt.Errorf("look up OS user %q: %w", name, err)
	}
	return toOSUser(u)
}

func toOSUser(u *user.User) (osUser, error) {
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return osUser{}, fmt.Errorf("OS user %q: non-numeric uid/gid", u.Username)
	}
	return osUser{Name: u.Username, UID: uid, GID: gid, set: true}, nil
}
