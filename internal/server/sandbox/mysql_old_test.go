package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

// catalogHome is the dbarena home whose server catalogue tests read:
// $DBARENA_HOME, else the default home.
func catalogHome() string {
	if home := os.Getenv("DBARENA_HOME"); home != "" {
		return home
	}
	h, _ := os.UserHomeDir()
	return filepath.Join(h, ".local", "share", "dbarena")
}

// oldMySQLBasedirs are the basedirs of the MySQL 5.1-5.6 in the server
// catalogue, by version. None: the test is skipped with a line naming
// scripts/fetch-servers, or fails under CI, whose test step fetches them.
func oldMySQLBasedirs(t *testing.T) map[string]string {
	t.Helper()
	home := catalogHome()
	data, err := os.ReadFile(filepath.Join(home, "servers.json"))
	var entries []struct {
		Version, Basedir string
		Flavor           target.Flavor
	}
	if err == nil {
		var doc struct {
			Servers json.RawMessage `json:"servers"`
		}
		if json.Unmarshal(data, &doc) == nil && len(doc.Servers) > 0 {
			data = doc.Servers
		}
		err = json.Unmarshal(data, &entries)
	}
	out := map[string]string{}
	for _, e := range entries {
		if (e.Flavor == target.FlavorMySQL || e.Flavor == target.FlavorPercona) && !versionAtLeast(e.Version, "5.7") {
			out[e.Version] = e.Basedir
		}
	}
	if len(out) == 0 {
		msg := "no MySQL 5.1-5.6 in the server catalogue of " + home + " (run scripts/fetch-servers test to fetch mysql-5.5.9)"
		if err != nil {
			msg += ": " + err.Error()
		}
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return out
}

// TestUnprivilegedOldMySQL: a MySQL 5.5 sandbox (no mysqld --initialize,
// no ALTER USER) is as locked down as MariaDB's: the server is no root,
// its files private, root unreachable over TCP and passwordless on no
// path, the workload account without FILE, SUPER or GRANT OPTION.
func TestUnprivilegedOldMySQL(t *testing.T) {
	for version, basedir := range oldMySQLBasedirs(t) {
		t.Run(version, func(t *testing.T) {
			m := testManager(t, false)
			spec := Spec{Name: "old", Flavor: target.FlavorMySQL, Basedir: basedir, Profile: ProfileFast}
			checkUnprivileged(t, m, spec)

			sb, err := m.Get(spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			t.Run("root needs its password on the socket", func(t *testing.T) {
				// MySQL 5.5.9 keeps accepting an empty password after SET
				// PASSWORD until FLUSH PRIVILEGES.
				root := sb.AdminTarget()
				root.Password = ""
				if err := tryConnect(t, root); err == nil {
					t.Error("root logged in on the socket without a password")
				}
				wl := sb.Target()
				wl.Password = ""
				if err := tryConnect(t, wl); err == nil {
					t.Error("the workload account logged in without a password")
				}
			})
			t.Run("settings as 5.5 reads them", func(t *testing.T) {
				admin := openDB(t, sb.AdminTarget())
				want := map[string]string{
					"innodb_doublewrite":    "OFF", // ON unless written as 0
					"innodb_file_per_table": "ON",
					"skip_name_resolve":     "ON",
					"max_connections":       "2064",
					"max_allowed_packet":    "16777216",
					"innodb_log_file_size":  "100663296",
				}
				for k, v := range want {
					var name, got string
					if err := admin.QueryRowContext(testCtx(t), "SHOW GLOBAL VARIABLES LIKE '"+k+"'").Scan(&name, &got); err != nil || got != v {
						t.Errorf("%s = %q (%v), want %q", k, got, err, v)
					}
				}
			})
			t.Run("restart", func(t *testing.T) {
				ctx := testCtx(t)
				if err := m.Stop(ctx, spec.Name); err != nil {
					t.Fatal(err)
				}
				sb, err := m.Start(ctx, Spec{Name: spec.Name, Profile: ProfileDurable})
				if err != nil {
					t.Fatalf("start again, durable: %v", err)
				}
				admin := openDB(t, sb.AdminTarget())
				var name, dw, lb string
				if err := admin.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'innodb_doublewrite'").Scan(&name, &dw); err != nil || dw != "ON" {
					t.Errorf("durable innodb_doublewrite = %q (%v), want ON", dw, err)
				}
				if err := admin.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'log_bin'").Scan(&name, &lb); err != nil || lb != "ON" {
					t.Errorf("durable log_bin = %q (%v), want ON", lb, err)
				}
				openDB(t, sb.Target())
			})
			t.Run("bootstrapped from the share scripts", func(t *testing.T) {
				// A basedir without a ready data directory, as a release
				// tarball has: mysqld --bootstrap with mysql_system_tables*.sql.
				top := t.TempDir()
				dir := filepath.Join(top, "base")
				if err := os.MkdirAll(filepath.Join(dir, "share"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(basedir, "bin"), filepath.Join(dir, "bin")); err != nil {
					t.Fatal(err)
				}
				shared, _ := os.ReadDir(filepath.Join(basedir, "share"))
				for _, e := range shared {
					if e.Name() != "data_dir" {
						if err := os.Symlink(filepath.Join(basedir, "share", e.Name()), filepath.Join(dir, "share", e.Name())); err != nil {
							t.Fatal(err)
						}
					}
				}
				// The server's OS user reads the basedir: open the test's
				// own directories (never the system temp directory).
				for d := dir; within(d, filepath.Dir(top)); d = filepath.Dir(d) {
					if err := os.Chmod(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				ctx := testCtx(t)
				sb, err := m.Start(ctx, Spec{Name: "boot", Flavor: target.FlavorMySQL, Basedir: dir, Profile: ProfileFast})
				if err != nil {
					t.Fatal(err)
				}
				admin := openDB(t, sb.AdminTarget())
				var accts string
				if err := admin.QueryRowContext(ctx, "SELECT GROUP_CONCAT(User, '@', Host ORDER BY User, Host) FROM mysql.user").Scan(&accts); err != nil {
					t.Fatal(err)
				}
				if want := sb.Target().User + "@127.0.0.1," + sb.Target().User + "@localhost,root@localhost"; accts != want {
					t.Errorf("accounts %s, want %s", accts, want)
				}
				var topics int
				if err := admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.help_topic").Scan(&topics); err != nil || topics == 0 {
					t.Errorf("help topics: %d, %v; want fill_help_tables.sql loaded", topics, err)
				}
				tcp := sb.AdminTarget()
				tcp.Socket, tcp.Host = "", "127.0.0.1"
				if err := tryConnect(t, tcp); err == nil {
					t.Error("root logged in over TCP")
				}
				if err := m.Remove(ctx, "boot"); err != nil {
					t.Error(err)
				}
			})
			t.Run("tls refused", func(t *testing.T) {
				_, err := m.Start(testCtx(t), Spec{Name: "oldtls", Flavor: target.FlavorMySQL, Basedir: basedir, TLS: true})
				if err == nil {
					t.Skip("this build has TLS")
				}
				if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "without TLS") {
					t.Errorf("TLS sandbox: %v; want ErrInvalidSpec naming TLS", err)
				}
			})
		})
	}
}

func TestOldMySQLConfig(t *testing.T) {
	e := mysqlOldEngine{mysqlFamily{bin: Binary{Flavor: target.FlavorMySQL, Version: "5.5.9", Server: "/x/bin/mysqld"}}}
	files, err := e.RenderConfig(serverConfig{Layout: e.Layout("/s/a", "/s/a", 3306), Basedir: "/x", Port: 3306,
		Profile: ProfileFast, BufferPool: 128 << 20, FileLimit: 20000,
		Settings: []Setting{{"innodb_stats_on_metadata", "OFF"}, {"innodb_file_per_table", "TRUE"}}})
	if err != nil {
		t.Fatal(err)
	}
	cnf := string(files[0].Content)
	for _, want := range []string{"\ninnodb_doublewrite = 0\n", "\ninnodb_stats_on_metadata = 0\n", "\ninnodb_file_per_table = 1\n", "\nlc_messages_dir = /x/share\n"} {
		if !strings.Contains(cnf, want) {
			t.Errorf("my.cnf lacks %q:\n%s", want, cnf)
		}
	}
	for _, bad := range []string{"table_open_cache_instances", "mysqlx"} {
		if strings.Contains(cnf, bad) {
			t.Errorf("my.cnf has %q, which MySQL 5.5 refuses:\n%s", bad, cnf)
		}
	}
	for _, l := range strings.Split(cnf, "\n") {
		if strings.HasPrefix(l, "innodb_") && (strings.HasSuffix(l, "= ON") || strings.HasSuffix(l, "= OFF")) {
			t.Errorf("my.cnf line %q: MySQL 5.5 ignores InnoDB booleans written ON/OFF", l)
		}
	}
	if got := nativePasswordHash("password"); got != "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19" {
		t.Errorf("PASSWORD('password') = %q", got)
	}
	for v, want := range map[string]bool{"5.0.96": false, "5.1.73": true, "5.5.9": true, "5.6.51": true, "5.7.44": false} {
		eng, err := engineFor(Binary{Flavor: target.FlavorMySQL, Version: v})
		_, old := eng.(mysqlOldEngine)
		if old != want && err == nil {
			t.Errorf("MySQL %s: old engine %v, want %v", v, old, want)
		}
		if v == "5.0.96" && (err == nil || !strings.Contains(err.Error(), "5.1 or newer")) {
			t.Errorf("MySQL 5.0: %v, want too old", err)
		}
	}
}
