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
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

// requireRoot skips tests of the per-sandbox OS users, which only a root
// dbarena makes (as another user, every server runs as that user).
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("only a root dbarena gives each sandbox an OS user of its own")
	}
}

// osUserOf looks up the OS user a sandbox's server runs as.
func osUserOf(t *testing.T, sb *Sandbox) osUser {
	t.Helper()
	u, err := user.Lookup(sb.ServerUser)
	if err != nil {
		t.Fatalf("sandbox %s: OS user %q: %v", sb.Name, sb.ServerUser, err)
	}
	ou, err := toOSUser(u)
	if err != nil {
		t.Fatal(err)
	}
	return ou
}

// nobody is the unprivileged OS user of the system.
var nobody = osUser{Name: "nobody", UID: 65534, GID: 65534, set: true}

// runAs runs a command-line client as u with a minimal environment (the
// password, if any, in MYSQL_PWD and PGPASSWORD), and returns its error
// and output.
func runAs(t *testing.T, u osUser, password, client string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), client, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C"}
	if password != "" {
		cmd.Env = append(cmd.Env, "MYSQL_PWD="+password, "PGPASSWORD="+password)
	}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.credential()}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// clientFor finds the command-line client of the flavor family, skipping
// the test without one.
func clientFor(t *testing.T, f target.Family) string {
	t.Helper()
	names := []string{"psql"}
	if f == target.MySQL {
		names = []string{"mariadb", "mysql"}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skipf("no command-line client for %s (%v)", f, names)
	return ""
}

// TestIsolationAcrossHomes: sandboxes of two homes, as two DBARENA_HOMEs
// on one host have them, share no OS identity, and a compromised server of
// one (its superuser, or a shell run as its OS user) reaches neither the
// files nor the server of the other.
func TestIsolationAcrossHomes(t *testing.T) {
	requireRoot(t)
	mA, mB := testManager(t, false), testManager(t, false)
	for _, f := range serverFlavors {
		requireServer(t, mA, f)
	}
	ctx := testCtx(t)
	start := func(m *Manager, name string, f target.Flavor) *Sandbox {
		t.Helper()
		sb, err := m.Start(ctx, Spec{Name: name, Flavor: f, Profile: ProfileFast})
		if err != nil {
			t.Fatalf("start %s in %s: %v", name, m.Home, err)
		}
		return sb
	}
	myA, myB := start(mA, "my", target.FlavorMariaDB), start(mB, "my", target.FlavorMariaDB)
	pgA, pgB := start(mA, "pg", target.FlavorPostgres), start(mB, "pg", target.FlavorPostgres)
	all := []*Sandbox{myA, myB, pgA, pgB}

	t.Run("an OS user each", func(t *testing.T) {
		seen := map[int]string{}
		for _, sb := range all {
			u := osUserOf(t, sb)
			if other, dup := seen[u.UID]; dup {
				t.Errorf("%s and %s both run as uid %d (%s)", other, sb.Dir, u.UID, sb.ServerUser)
			}
			seen[u.UID] = sb.Dir
			if uid := processUID(t, sb.PID); uid != u.UID {
				t.Errorf("%s: server pid %d runs as uid %d, want %d (%s)", sb.Dir, sb.PID, uid, u.UID, sb.ServerUser)
			}
			rec, err := sb.manager(mA, mB).load(sb.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{rec.Layout.ServerDir, rec.Layout.Datadir, rec.Layout.RunDir} {
				fi, err := os.Stat(d)
				if err != nil {
					t.Fatal(err)
				}
				st := fi.Sys().(*syscall.Stat_t)
				if fi.Mode().Perm() != 0o700 || int(st.Uid) != u.UID {
					t.Errorf("%s: mode %v, uid %d; want 0700 and uid %d (%s)", d, fi.Mode().Perm(), st.Uid, u.UID, sb.ServerUser)
				}
			}
		}
	})

	t.Run("MariaDB superuser writes no log into another home", func(t *testing.T) {
		admin := openDB(t, myA.AdminTarget())
		t.Cleanup(func() {
			_, _ = admin.ExecContext(context.Background(), "SET GLOBAL general_log = OFF")
			_, _ = admin.ExecContext(context.Background(), "SET GLOBAL slow_query_log = OFF")
		})
		recA, err := mA.load(myA.Name)
		if err != nil {
			t.Fatal(err)
		}
		// The control: the same statements do write inside A's own directory.
		own := filepath.Join(fileDir(recA.Layout), "general.log")
		for _, q := range []string{"SET GLOBAL general_log_file = '" + own + "'", "SET GLOBAL general_log = ON", "SELECT 1", "SET GLOBAL general_log = OFF"} {
			if _, err := admin.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if _, err := os.Stat(own); err != nil {
			t.Fatalf("general_log_file in the sandbox's own directory was not written: %v", err)
		}
		for _, dir := range []string{myB.Datadir, pgB.Datadir, filepath.Dir(myB.Datadir)} {
			for _, v := range []string{"general_log", "slow_query_log"} {
				victim := filepath.Join(dir, "x-"+v+".log")
				_, err1 := admin.ExecContext(ctx, fmt.Sprintf("SET GLOBAL %s_file = '%s'", v, victim))
				_, err2 := admin.ExecContext(ctx, "SET GLOBAL "+v+" = ON")
				_, _ = admin.ExecContext(ctx, "SELECT SLEEP(0)")
				_, _ = admin.ExecContext(ctx, "SET GLOBAL "+v+" = OFF")
				if _, err := os.Lstat(victim); !errors.Is(err, fs.ErrNotExist) {
					os.Remove(victim)
					t.Errorf("SET GLOBAL %s_file = %s by sandbox A's root created the file (%v, %v)", v, victim, err1, err2)
				}
			}
			out := filepath.Join(dir, "outfile")
			if _, err := admin.ExecContext(ctx, "SELECT 1 INTO OUTFILE '"+out+"'"); err == nil {
				os.Remove(out)
				t.Errorf("SELECT INTO OUTFILE by sandbox A's root wrote %s", out)
			}
		}
	})

	t.Run("PostgreSQL socket wants the password", func(t *testing.T) {
		psql := clientFor(t, target.Postgres)
		args := []string{"-w", "-X", "-h", filepath.Dir(pgB.Socket), "-p", strconv.Itoa(pgB.Port), "-U", "postgres", "-d", "postgres", "-c", "SELECT 1"}
		root := osUser{}
		for _, tc := range []struct {
			who string
			u   osUser
		}{
			{"nobody", nobody},
			{"the OS user of A's PostgreSQL", osUserOf(t, pgA)},
			{"the OS user of A's MariaDB", osUserOf(t, myA)},
			{"root, who can reach the socket", root},
			{"B's own OS user", osUserOf(t, pgB)},
		} {
			if out, err := runAs(t, tc.u, "", psql, args...); err == nil {
				t.Errorf("%s: psql to B's socket as postgres without a password logged in: %s", tc.who, out)
			}
		}
		// The control: with the admin password, the same command works.
		if out, err := runAs(t, root, pgB.AdminTarget().Password, psql, args...); err != nil {
			t.Errorf("root with B's admin password: %v: %s", err, out)
		}
		if out, err := runAs(t, osUserOf(t, pgA), pgB.AdminTarget().Password, psql, args...); err == nil {
			t.Errorf("A's OS user reached B's socket (with B's password): %s", out)
		}
	})

	t.Run("MariaDB socket has no passwordless account", func(t *testing.T) {
		client := clientFor(t, target.MySQL)
		admin := openDB(t, myB.AdminTarget())
		rows, err := admin.QueryContext(ctx, "SELECT DISTINCT User FROM mysql.user")
		if err != nil {
			t.Fatal(err)
		}
		var users []string
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				t.Fatal(err)
			}
			users = append(users, u)
		}
		rows.Close()
		for _, u := range append(users, "", "root") {
			for _, ou := range []osUser{{}, osUserOf(t, myA), osUserOf(t, myB)} {
				if out, err := runAs(t, ou, "", client, "--no-defaults", "-S", myB.Socket, "-u", u, "-e", "SELECT 1"); err == nil {
					t.Errorf("OS user %q logged in to B as %q through the socket without a password: %s", ou.Name, u, out)
				}
			}
		}
	})
}

// TestRemoveDeletesOSUser: server rm deletes the sandbox's own OS user,
// after killing what still runs as it (a program its superuser started in
// a session of its own).
func TestRemoveDeletesOSUser(t *testing.T) {
	requireRoot(t)
	m := testManager(t, false)
	requireServer(t, m, target.FlavorPostgres)
	ctx := testCtx(t)
	sb, err := m.Start(ctx, Spec{Name: "gone", Flavor: target.FlavorPostgres, Profile: ProfileFast})
	if err != nil {
		t.Fatal(err)
	}
	u := osUserOf(t, sb)
	stray := exec.Command("sleep", "300")
	stray.SysProcAttr = &syscall.SysProcAttr{Credential: u.credential(), Setsid: true}
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- stray.Wait() }()
	t.Cleanup(func() { _ = stray.Process.Kill() })
	if err := m.Remove(ctx, sb.Name); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := user.Lookup(u.Name); err == nil {
		t.Errorf("OS user %s still exists after Remove", u.Name)
	}
	select {
	case <-waited:
	case <-ctx.Done():
		t.Errorf("a process of %s outlived Remove", u.Name)
	}
}

// manager is whichever of ms manages sb.
func (s *Sandbox) manager(ms ...*Manager) *Manager {
	for _, m := range ms {
		if within(s.Dir, m.root()) {
			return m
		}
	}
	return ms[0]
}

// TestSharedUserSandboxMoves: a sandbox an older dbarena ran as the OS
// user it shared with every sandbox of its flavor ("dbarena", "postgres"),
// its PostgreSQL superuser trusted on the socket without a password, keeps
// its data and moves to an OS user of its own on its next start, its
// superuser then wanting the admin password.
func TestSharedUserSandboxMoves(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		flavor target.Flavor
		shared string
	}{{target.FlavorMariaDB, "dbarena"}, {target.FlavorPostgres, "postgres"}} {
		t.Run(string(tc.flavor), func(t *testing.T) {
			m := testManager(t, false)
			requireServer(t, m, tc.flavor)
			ctx := testCtx(t)
			m.ServerUser = tc.shared
			old, err := m.Start(ctx, Spec{Name: "old", Flavor: tc.flavor, Profile: ProfileFast})
			if err != nil {
				t.Fatal(err)
			}
			useWorkloadAccount(t, old)
			rec, err := m.load(old.Name)
			if err != nil {
				t.Fatal(err)
			}
			if tc.flavor == target.FlavorPostgres {
				// As an older dbarena left it: no superuser password, the
				// socket trusted, no admin password file.
				admin := openDB(t, old.AdminTarget())
				if _, err := admin.ExecContext(ctx, "ALTER ROLE postgres PASSWORD NULL"); err != nil {
					t.Fatal(err)
				}
				admin.Close()
				if err := m.Stop(ctx, old.Name); err != nil {
					t.Fatal(err)
				}
				hba := "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
				if err := os.WriteFile(filepath.Join(rec.Layout.Datadir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(adminPasswordPath(rec.Layout.Dir)); err != nil {
					t.Fatal(err)
				}
				if rec, err = m.load(old.Name); err != nil {
					t.Fatal(err)
				}
				rec.Secured = false
				if err := m.save(rec); err != nil {
					t.Fatal(err)
				}
			}
			m.ServerUser = ""
			sb, err := m.Start(ctx, Spec{Name: old.Name})
			if err != nil {
				t.Fatalf("start of a sandbox run as %s: %v", tc.shared, err)
			}
			if sb.ServerUser != m.sandboxUserName(sb.Name) {
				t.Errorf("ServerUser = %q, want %q", sb.ServerUser, m.sandboxUserName(sb.Name))
			}
			u := osUserOf(t, sb)
			if uid := processUID(t, sb.PID); uid != u.UID {
				t.Errorf("server runs as uid %d, want %d", uid, u.UID)
			}
			err = filepath.WalkDir(rec.Layout.ServerDir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil // a file the server removed meanwhile
				}
				if fi, err := d.Info(); err == nil && int(fi.Sys().(*syscall.Stat_t).Uid) != u.UID {
					t.Errorf("%s is still owned by uid %d", p, fi.Sys().(*syscall.Stat_t).Uid)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := queryOne(t, sb.Target(), "SELECT v FROM probe WHERE id = 1"); got != "x" {
				t.Errorf("workload data after the move: %q", got)
			}
			queryOne(t, sb.AdminTarget(), "SELECT 1")
			noPassword := sb.AdminTarget()
			noPassword.Password = ""
			if err := tryConnect(t, noPassword); err == nil {
				t.Error("the superuser logs in through the socket without a password after the move")
			}
		})
	}
}
