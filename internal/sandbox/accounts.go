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

// serverUserFor picks the unprivileged OS user servers run as when dbarena
// runs as root: ServerUser if set, else "postgres" (if it exists) or
// "dbarena" for PostgreSQL, and "dbarena" for the MySQL family (not the
// system's "mysql", who owns the system server's files). A missing user is
// created with useradd, and Notify says so.
func (m *Manager) serverUserFor(e engine) (osUser, error) {
	if os.Geteuid() != 0 {
		return osUser{}, nil
	}
	names := []string{serverUser}
	if e.Flavor() == target.FlavorPostgres {
		names = []string{"postgres", serverUser}
	}
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
	u, lerr := user.Lookup(name)
	if lerr != nil { // useradd may fail because another process created it meanwhile
		if err == nil {
			err = lerr
		}
		return osUser{}, fmt.Errorf("create OS user %q to run %s unprivileged: %w: %s", name, e.Flavor(), err, strings.TrimSpace(string(out)))
	}
	if err == nil && m.Notify != nil {
		m.Notify(fmt.Sprintf("created system user %q (uid %s) to run sandbox servers without root", name, u.Uid))
	}
	return toOSUser(u)
}

// serverUser is the OS user dbarena creates for its servers.
const serverUser = "dbarena"

func toOSUser(u *user.User) (osUser, error) {
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return osUser{}, fmt.Errorf("OS user %q: non-numeric uid/gid", u.Username)
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
