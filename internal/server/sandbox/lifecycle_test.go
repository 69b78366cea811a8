package sandbox

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// These tests start real servers. A missing binary skips them, or fails
// them when CI is set.

// serverFlavors are the flavors tested against real servers here.
var serverFlavors = []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres}

// testManager returns a Manager in a fresh home whose sandboxes are removed
// when the test ends. A long home exercises the short-socket fallback.
func testManager(t *testing.T, long bool) *Manager {
	t.Helper()
	home := t.TempDir()
	if long {
		home = filepath.Join(home, strings.Repeat("h", 90))
	}
	m := NewManager(home)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		list, _ := m.List()
		for _, sb := range list {
			if err := m.Remove(ctx, sb.Name); err != nil {
				t.Errorf("cleanup: remove %s: %v", sb.Name, err)
			}
		}
	})
	return m
}

// requireServer skips the test (fails it under CI) without a flavor binary.
func requireServer(t *testing.T, m *Manager, f target.Flavor) {
	t.Helper()
	bins, err := m.Discover()
	for _, b := range bins {
		if b.Flavor == f {
			return
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no %s server binary (discover: %v)", f, err)
	}
	t.Skipf("no %s server binary (discover: %v)", f, err)
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openDB connects to tgt and checks it answers.
func openDB(t *testing.T, tgt target.Target) *sql.DB {
	t.Helper()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.PingContext(testCtx(t)); err != nil {
		t.Fatalf("connect to %s: %v", tgt.MaskedDSN(), err)
	}
	return db
}

// queryOne returns the single value of q.
func queryOne(t *testing.T, tgt target.Target, q string) string {
	t.Helper()
	db := openDB(t, tgt)
	var v string
	if err := db.QueryRowContext(testCtx(t), q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	db.Close()
	return v
}

// useWorkloadAccount creates a table and a row as the workload account
// over TCP, as a benchmark would.
func useWorkloadAccount(t *testing.T, sb *Sandbox) {
	t.Helper()
	tgt := sb.Target()
	if tgt.Host != "127.0.0.1" || tgt.Socket != "" || tgt.Password == "" || tgt.Sandbox != sb.Name {
		t.Fatalf("Target() = %+v (password set: %v), want TCP 127.0.0.1 with a password", tgt, tgt.Password != "")
	}
	db := openDB(t, tgt)
	defer db.Close()
	ctx := testCtx(t)
	for _, q := range []string{
		"DROP TABLE IF EXISTS probe",
		"CREATE TABLE probe (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO probe VALUES (1, 'x')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s as %s: %v", q, tgt.User, err)
		}
	}
}

// listenAddrs lists the TCP addresses pid listens on, from /proc.
func listenAddrs(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("read fds of %d: %v", pid, err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var addrs []string
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A = LISTEN
				continue
			}
			addrs = append(addrs, decodeAddr(fields[1]))
		}
		f.Close()
	}
	return addrs
}

// decodeAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080".
func decodeAddr(s string) string {
	hexIP, hexPort, _ := strings.Cut(s, ":")
	port, _ := strconv.ParseUint(hexPort, 16, 16)
	if len(hexIP) != 8 {
		return "[" + hexIP + "]:" + strconv.FormatUint(port, 10)
	}
	n, _ := strconv.ParseUint(hexIP, 16, 32)
	return fmt.Sprintf("%d.%d.%d.%d:%d", n&0xff, n>>8&0xff, n>>16&0xff, n>>24, port)
}

// checkPrivate checks that dirs are 0700 and files 0600.
func checkPrivate(t *testing.T, dirs, files []string) {
	t.Helper()
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			t.Errorf("stat %s: %v", d, err)
		} else if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want a 0700 directory", d, fi.Mode())
		}
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Errorf("stat %s: %v", f, err)
		} else if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, fi.Mode())
		}
	}
}

// settingProbe is a harmless setting per flavor and how to read it back.
func settingProbe(f target.Flavor) (Setting, string, string) {
	if f == target.FlavorPostgres {
		return Setting{"work_mem", "7MB"}, "SHOW work_mem", "7MB"
	}
	return Setting{"max_connections", "321"}, "SELECT @@max_connections", "321"
}

func TestLifecycle(t *testing.T) {
	for _, flavor := range serverFlavors {
		t.Run(string(flavor), func(t *testing.T) {
			t.Parallel()
			m := testManager(t, true)
			requireServer(t, m, flavor)
			ctx := testCtx(t)
			spec := Spec{Name: "life", Flavor: flavor, Profile: ProfileFast}
			// A descriptor dbarena inherited without close-on-exec (a
			// flock(1) lock, say) must not stay open in the server.
			inherited := filepath.Join(t.TempDir(), "inherited.lock")
			fd, err := syscall.Open(inherited, syscall.O_RDONLY|syscall.O_CREAT, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(fd)

			sb, err := m.Start(ctx, spec)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", sb.PID)); err == nil {
				for _, e := range fds {
					if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", sb.PID, e.Name())); l == inherited {
						t.Errorf("the server keeps dbarena's inherited descriptor %s open", l)
					}
				}
			}
			if sb.State != StateRunning || sb.PID <= 0 || sb.Flavor != flavor || sb.Version == "" || sb.Port == 0 {
				t.Fatalf("Start = %+v, want a running %s sandbox", sb, flavor)
			}
			if len(sb.Socket) > 107 {
				t.Errorf("socket path %q is longer than sun_path", sb.Socket)
			}
			first := sb.PID

			t.Run("workload account over TCP", func(t *testing.T) { useWorkloadAccount(t, sb) })
			t.Run("admin over socket", func(t *testing.T) { queryOne(t, sb.AdminTarget(), "SELECT 1") })

			t.Run("private files", func(t *testing.T) {
				rec, err := m.load(sb.Name)
				if err != nil {
					t.Fatal(err)
				}
				l := rec.Layout
				checkPrivate(t,
					[]string{m.root(), l.Dir, l.ServerDir, l.Datadir, l.RunDir},
					[]string{filepath.Join(l.Dir, "sandbox.json"), filepath.Join(l.Dir, "password"), l.Config, l.ErrorLog})
				data, err := os.ReadFile(filepath.Join(l.Dir, "sandbox.json"))
				if err != nil || strings.Contains(string(data), sb.Target().Password) {
					t.Errorf("sandbox.json holds the password (or cannot be read: %v)", err)
				}
				if flavor == target.FlavorPostgres && os.Geteuid() == 0 {
					var st syscall.Stat_t
					if err := syscall.Stat(l.Datadir, &st); err != nil || st.Uid == 0 {
						t.Errorf("postgres datadir %s owned by uid %d (err %v), want the unprivileged server user", l.Datadir, st.Uid, err)
					}
				}
			})

			t.Run("listens on 127.0.0.1 only", func(t *testing.T) {
				addrs := listenAddrs(t, sb.PID)
				if len(addrs) == 0 {
					t.Fatalf("pid %d listens on no TCP address", sb.PID)
				}
				for _, a := range addrs {
					if a != "127.0.0.1:"+strconv.Itoa(sb.Port) {
						t.Errorf("listens on %s, want only 127.0.0.1:%d", a, sb.Port)
					}
				}
			})

			t.Run("start again is idempotent", func(t *testing.T) {
				again, err := m.Start(ctx, Spec{Name: "life"})
				if err != nil || again.PID != first || again.Port != sb.Port {
					t.Fatalf("Start again = %+v, %v; want the same server (pid %d)", again, err, first)
				}
			})

			probe, query, want := settingProbe(flavor)
			t.Run("new setting restarts and applies", func(t *testing.T) {
				changed, err := m.Start(ctx, Spec{Name: "life", Settings: []Setting{probe}})
				if err != nil {
					t.Fatal(err)
				}
				if changed.PID == first {
					t.Error("a changed setting did not restart the server")
				}
				if got := queryOne(t, changed.Target(), query); got != want {
					t.Errorf("%s = %s, want %s", query, got, want)
				}
			})

			t.Run("stop", func(t *testing.T) {
				if err := m.Stop(ctx, "life"); err != nil {
					t.Fatal(err)
				}
				got, err := m.Get("life")
				if err != nil || got.State != StateStopped || got.PID != 0 || portOpen(got.Port) {
					t.Fatalf("after Stop: %+v, %v; want stopped with the port closed", got, err)
				}
				if err := m.Stop(ctx, "life"); err != nil {
					t.Errorf("Stop of a stopped sandbox: %v", err)
				}
			})

			t.Run("restart keeps settings", func(t *testing.T) {
				re, err := m.Restart(ctx, "life")
				if err != nil || re.State != StateRunning {
					t.Fatalf("Restart = %+v, %v", re, err)
				}
				if got := queryOne(t, re.Target(), query); got != want {
					t.Errorf("%s = %s after restart, want %s", query, got, want)
				}
			})

			t.Run("killed server is dead, then starts again", func(t *testing.T) {
				cur, err := m.Get("life")
				if err != nil || cur.State != StateRunning {
					t.Fatalf("Get = %+v, %v", cur, err)
				}
				if err := syscall.Kill(cur.PID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(10 * time.Second)
				for {
					got, err := m.Get("life")
					if err != nil {
						t.Fatal(err)
					}
					if got.State == StateDead {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("Get after SIGKILL: state %s, want dead", got.State)
					}
					time.Sleep(50 * time.Millisecond)
				}
				list, err := m.List()
				if err != nil || len(list) != 1 || list[0].State != StateDead {
					t.Fatalf("List = %v, %v; want the dead sandbox", list, err)
				}
				back, err := m.Start(ctx, Spec{Name: "life"})
				if err != nil || back.State != StateRunning {
					t.Fatalf("Start after kill = %+v, %v", back, err)
				}
				useWorkloadAccount(t, back)
			})

			t.Run("remove leaves nothing", func(t *testing.T) {
				rec, err := m.load("life")
				if err != nil {
					t.Fatal(err)
				}
				pid := rec.PID
				if err := m.Remove(ctx, "life"); err != nil {
					t.Fatal(err)
				}
				for _, p := range []string{rec.Layout.Dir, rec.Layout.ServerDir, rec.Layout.RunDir, m.serverRootFor()} {
					if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s still exists after Remove (%v)", p, err)
					}
				}
				if alive(pid, rec.marker()) {
					t.Errorf("server pid %d still running after Remove", pid)
				}
				if _, err := m.Get("life"); !errors.Is(err, ErrNotFound) {
					t.Errorf("Get after Remove: %v, want ErrNotFound", err)
				}
				if err := m.Remove(ctx, "life"); !errors.Is(err, ErrNotFound) {
					t.Errorf("Remove twice: %v, want ErrNotFound", err)
				}
			})
		})
	}
}

func TestFailedStart(t *testing.T) {
	wantInLog := map[target.Flavor]string{
		target.FlavorMariaDB:  "no_such_setting",
		target.FlavorPostgres: `unrecognized configuration parameter "no_such_setting"`,
	}
	for _, flavor := range serverFlavors {
		t.Run(string(flavor), func(t *testing.T) {
			t.Parallel()
			m := testManager(t, false)
			requireServer(t, m, flavor)
			ctx := testCtx(t)
			_, err := m.Start(ctx, Spec{Name: "bad", Flavor: flavor, Profile: ProfileFast,
				Settings: []Setting{{"no_such_setting", "1"}}})
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("Start with a bad setting: %v, want a *StartError", err)
			}
			if !strings.Contains(se.LogTail, wantInLog[flavor]) || !strings.Contains(err.Error(), wantInLog[flavor]) {
				t.Errorf("error does not show the log line %q:\n%v", wantInLog[flavor], err)
			}
			if n := strings.Count(se.LogTail, "\n"); n >= 20 {
				t.Errorf("log tail has %d lines, want at most 20", n+1)
			}
			got, err := m.Get("bad")
			if err != nil || got.State != StateStopped || len(got.Settings) != 0 {
				t.Fatalf("after a failed start: %+v, %v; want stopped, without the bad setting", got, err)
			}
			// The failed setting is not kept: a plain start works.
			sb, err := m.Start(ctx, Spec{Name: "bad"})
			if err != nil {
				t.Fatalf("Start after the failure: %v", err)
			}
			useWorkloadAccount(t, sb)
		})
	}
}

func TestDefault(t *testing.T) {
	t.Parallel()
	m := testManager(t, false)
	bins, err := m.Discover()
	if err != nil || len(bins) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no server binary: %v", err)
		}
		t.Skipf("no server binary: %v", err)
	}
	ctx := testCtx(t)
	sb, err := m.Default(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sb.Name != "default" || sb.Flavor != bins[0].Flavor || sb.Server != bins[0].Server {
		t.Errorf("Default() = %s %s (%s), want the first discovered: %s %s", sb.Name, sb.Flavor, sb.Server, bins[0].Flavor, bins[0].Server)
	}
	for _, b := range bins {
		if b.Flavor.Family() == target.MySQL && sb.Flavor.Family() != target.MySQL {
			t.Errorf("Default() picked %s although a MySQL-family server exists (%s)", sb.Flavor, b.Server)
		}
	}
	again, err := m.Default(ctx)
	if err != nil || again.PID != sb.PID {
		t.Errorf("Default() again = %+v, %v; want the running sandbox", again, err)
	}
	useWorkloadAccount(t, again)
}

// TestBadSpecLeavesNothing checks that a new sandbox whose spec is wrong
// (a missing or empty basedir, a port in use) fails with ErrInvalidSpec
// and leaves no directory behind, and that Remove deletes a directory a
// start left without sandbox.json.
func TestBadSpecLeavesNothing(t *testing.T) {
	m := testManager(t, false)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	bins, _ := m.Discover()
	for _, tt := range []struct {
		name string
		spec Spec
		want string
		skip bool
	}{
		{"missing", Spec{Basedir: "/nonexistent/dbarena"}, `basedir "/nonexistent/dbarena": no such directory`, false},
		{"empty", Spec{Basedir: t.TempDir()}, "no mariadbd, mysqld or postgres", false},
		{"port", Spec{Port: busyPort, Profile: ProfileFast}, fmt.Sprintf("port %d on 127.0.0.1 is already in use", busyPort), len(bins) == 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("no server binary")
			}
			tt.spec.Name = "bad-" + tt.name
			_, err := m.Start(testCtx(t), tt.spec)
			if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start(%+v) = %v, want ErrInvalidSpec mentioning %q", tt.spec, err, tt.want)
			}
			if _, err := os.Stat(m.dir(tt.spec.Name)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed start left %s behind (stat: %v)", m.dir(tt.spec.Name), err)
			}
			if u, err := user.Lookup(m.sandboxUserName(tt.spec.Name)); err == nil {
				t.Errorf("a failed start left the OS user %s (uid %s) behind", u.Username, u.Uid)
			}
		})
	}
	if list, err := m.List(); len(list) != 0 || err != nil {
		t.Errorf("List() = %v, %v; want nothing", list, err)
	}
	// A directory an older build left without sandbox.json.
	dir := m.dir("half")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(testCtx(t), "half"); err != nil {
		t.Fatalf("Remove of a half-made sandbox: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Remove left %s (stat: %v)", dir, err)
	}
}
