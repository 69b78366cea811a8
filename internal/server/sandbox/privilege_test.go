package sandbox

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestUnprivileged: a sandbox cannot be used to become root. Its server
// runs as an unprivileged OS user, its files are private, root cannot log
// in over TCP (from an unprivileged OS user), and the workload account can
// neither read nor write server-side files.
func TestUnprivileged(t *testing.T) {
	for _, flavor := range serverFlavors {
		t.Run(string(flavor), func(t *testing.T) {
			t.Parallel()
			m := testManager(t, false)
			requireServer(t, m, flavor)
			checkUnprivileged(t, m, Spec{Name: "priv", Flavor: flavor, Profile: ProfileFast})
		})
	}
}

// TestUnprivilegedOldMariaDB runs the same checks on the MariaDB 10.1 and
// 10.2 of the server catalogue (mysql_install_db, no ALTER USER), when
// scripts/fetch-servers has registered them.
func TestUnprivilegedOldMariaDB(t *testing.T) {
	home := os.Getenv("DBARENA_HOME")
	if home == "" {
		h, _ := os.UserHomeDir()
		home = filepath.Join(h, ".local", "share", "dbarena")
	}
	data, err := os.ReadFile(filepath.Join(home, "servers.json"))
	var entries []struct {
		Name, Version, Basedir string
		Flavor                 target.Flavor
	}
	if err == nil {
		var doc struct {
			Servers json.RawMessage `json:"servers"`
		}
		if json.Unmarshal(data, &doc) == nil && len(doc.Servers) > 0 {
			data = doc.Servers
		}
		_ = json.Unmarshal(data, &entries)
	}
	found := false
	for _, e := range entries {
		if e.Flavor != target.FlavorMariaDB || versionAtLeast(e.Version, "10.3") {
			continue
		}
		found = true
		t.Run(e.Version, func(t *testing.T) {
			m := testManager(t, false)
			checkUnprivileged(t, m, Spec{Name: "old", Flavor: target.FlavorMariaDB, Basedir: e.Basedir, Profile: ProfileFast})
		})
	}
	if !found {
		t.Skipf("no MariaDB 10.1/10.2 in the server catalogue %s (run scripts/fetch-servers to test the old bootstrap)", filepath.Join(home, "servers.json"))
	}
}

func checkUnprivileged(t *testing.T, m *Manager, spec Spec) {
	t.Helper()
	ctx := testCtx(t)
	sb, err := m.Start(ctx, spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	rec, err := m.load(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	mysqlFamily := sb.Flavor.Family() == target.MySQL

	t.Run("server not root", func(t *testing.T) {
		if uid := processUID(t, sb.PID); uid == 0 {
			t.Errorf("server pid %d runs as root", sb.PID)
		}
		if os.Geteuid() == 0 && sb.ServerUser == "" {
			t.Errorf("Sandbox.ServerUser is empty, want the OS user the server runs as")
		}
	})

	t.Run("files private", func(t *testing.T) {
		for _, root := range rec.Layout.owned() {
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return nil // gone meanwhile
				}
				if fi.Mode()&(fs.ModeSocket|fs.ModeSymlink) == 0 && fi.Mode().Perm()&0o007 != 0 {
					t.Errorf("%s has mode %v: others may use it", p, fi.Mode().Perm())
				}
				return nil
			})
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("walk %s: %v", root, err)
			}
		}
		if fi, err := os.Stat(adminPasswordPath(rec.Layout.Dir)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("admin password file: %v, %v; want mode 0600", fi, err)
		}
	})

	t.Run("superuser not over TCP", func(t *testing.T) {
		super := sb.AdminTarget()
		super.Socket, super.Host, super.Password = "", "127.0.0.1", ""
		users := []string{super.User}
		if mysqlFamily {
			users = append(users, "") // anonymous
		}
		for _, u := range users {
			tgt := super
			tgt.User = u
			if err := tryConnect(t, tgt); err == nil {
				t.Errorf("%q logged in over TCP without a password", u)
			}
		}
		if mysqlFamily {
			admin := openDB(t, sb.AdminTarget())
			var n int
			if err := admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.user WHERE User = '' OR (User = 'root' AND Host <> 'localhost')").Scan(&n); err != nil || n != 0 {
				t.Errorf("%d anonymous or remote root accounts left (%v)", n, err)
			}
		}
		if admin := sb.AdminTarget(); mysqlFamily {
			tcp := admin
			tcp.Socket, tcp.Host = "", "127.0.0.1"
			if err := tryConnect(t, tcp); err == nil {
				t.Error("root logged in over TCP with the admin password; want the socket only")
			}
		}
	})

	t.Run("unprivileged OS user", func(t *testing.T) { checkFromNobody(t, sb) })

	t.Run("workload account", func(t *testing.T) {
		db := openDB(t, sb.Target())
		if mysqlFamily {
			checkMySQLWorkloadAccount(t, db, rec)
		} else {
			checkPostgresWorkloadAccount(t, db)
		}
	})

	if mysqlFamily {
		t.Run("secure_file_priv", func(t *testing.T) {
			admin := openDB(t, sb.AdminTarget())
			var dir string
			if err := admin.QueryRowContext(ctx, "SELECT @@secure_file_priv").Scan(&dir); err != nil {
				t.Fatal(err)
			}
			if !within(filepath.Clean(dir), rec.Layout.ServerDir) {
				t.Errorf("secure_file_priv = %q, want a directory inside %s", dir, rec.Layout.ServerDir)
			}
			var got sql.NullString
			if err := admin.QueryRowContext(ctx, "SELECT LOAD_FILE('/etc/passwd')").Scan(&got); err != nil || got.Valid {
				t.Errorf("root LOAD_FILE('/etc/passwd') = %v, %v; want NULL", got, err)
			}
		})

		t.Run("account of an older dbarena loses its privileges", func(t *testing.T) {
			admin := openDB(t, sb.AdminTarget())
			tgt := sb.Target()
			if _, err := admin.ExecContext(ctx, "GRANT ALL PRIVILEGES ON *.* TO '"+tgt.User+"'@'127.0.0.1' WITH GRANT OPTION"); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Start(ctx, Spec{Name: sb.Name}); err != nil {
				t.Fatal(err)
			}
			db := openDB(t, tgt)
			checkMySQLWorkloadAccount(t, db, rec)
		})
	}
}

// processUID is the uid of pid from /proc, or 0 if any of its real,
// effective, saved and file-system uids is root.
func processUID(t *testing.T, pid int) int {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 5 && fields[0] == "Uid:" {
			uid := -1
			for _, s := range fields[1:] {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("status of %d: %q", pid, sc.Text())
				}
				if n == 0 {
					return 0
				}
				uid = n
			}
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}

// tryConnect opens one connection to tgt.
func tryConnect(t *testing.T, tgt target.Target) error {
	t.Helper()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(testCtx(t))
}

func checkMySQLWorkloadAccount(t *testing.T, db *sql.DB, rec *record) {
	t.Helper()
	ctx := testCtx(t)
	var got sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT LOAD_FILE('/etc/passwd')").Scan(&got); err != nil || got.Valid {
		t.Errorf("LOAD_FILE('/etc/passwd') = %v, %v; want NULL", got, err)
	}
	for _, dir := range []string{os.TempDir(), fileDir(rec.Layout)} {
		out := filepath.Join(dir, "dbarena-outfile-probe")
		if _, err := db.ExecContext(ctx, "SELECT 1 INTO OUTFILE '"+out+"'"); err == nil {
			os.Remove(out)
			t.Errorf("the workload account wrote %s", out)
		}
	}
	rows, err := db.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"FILE", "SUPER", "GRANT OPTION", "ALL PRIVILEGES ON *.*"} {
			if strings.Contains(g, bad) {
				t.Errorf("workload account: %s (has %s)", g, bad)
			}
		}
	}
	// LOAD DATA LOCAL (TPC-C's bulk load) needs no FILE privilege.
	mysql.RegisterReaderHandler("privilege-probe", func() io.Reader { return strings.NewReader("1\n2\n") })
	defer mysql.DeregisterReaderHandler("privilege-probe")
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS load_probe (id INT PRIMARY KEY)",
		"DELETE FROM load_probe",
		"LOAD DATA LOCAL INFILE 'Reader::privilege-probe' INTO TABLE load_probe",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	// What monitoring and workloads need.
	for _, q := range []string{
		"SHOW GLOBAL STATUS LIKE 'Threads_connected'",
		"SELECT COUNT(*) FROM information_schema.INNODB_TRX",
		"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER <> CURRENT_USER()",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func checkPostgresWorkloadAccount(t *testing.T, db *sql.DB) {
	t.Helper()
	ctx := testCtx(t)
	var s string
	if err := db.QueryRowContext(ctx, "SELECT pg_read_file('/etc/passwd')").Scan(&s); err == nil {
		t.Error("the workload account read /etc/passwd with pg_read_file")
	}
	out := filepath.Join(os.TempDir(), "dbarena-copy-probe")
	if _, err := db.ExecContext(ctx, "COPY (SELECT 1) TO '"+out+"'"); err == nil {
		os.Remove(out)
		t.Errorf("the workload account wrote %s with COPY", out)
	}
	var super bool
	if err := db.QueryRowContext(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil || super {
		t.Errorf("workload account superuser = %v, %v", super, err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query <> '<insufficient privilege>'").Scan(&n); err != nil {
		t.Errorf("pg_stat_activity: %v", err)
	}
}

// checkFromNobody runs the flavor's command-line client as the OS user
// nobody (when the test runs as root): the workload account logs in with
// its password, the superuser neither over TCP nor through the socket.
func checkFromNobody(t *testing.T, sb *Sandbox) {
	t.Helper()
	port := strconv.Itoa(sb.Port)
	type attempt struct {
		what string
		args []string
		pw   string
		ok   bool
	}
	var client string
	var tries []attempt
	if sb.Flavor.Family() == target.MySQL {
		for _, c := range []string{"mariadb", "mysql"} {
			if p, err := exec.LookPath(c); err == nil {
				client = p
				break
			}
		}
		tcp := func(user string) []string {
			return []string{"--no-defaults", "-u", user, "--protocol=tcp", "-h", "127.0.0.1", "-P", port, "-e", "SELECT 1"}
		}
		tries = []attempt{
			{"workload account over TCP", tcp(sb.User), sb.Target().Password, true},
			{"root over TCP", tcp("root"), "", false},
			{"root over TCP, admin password", tcp("root"), sb.AdminTarget().Password, false},
			{"root through the socket", []string{"--no-defaults", "-S", sb.Socket, "-u", "root", "-e", "SELECT 1"}, "", false},
		}
	} else {
		if p, err := exec.LookPath("psql"); err == nil {
			client = p
		}
		tcp := []string{"-w", "-X", "-h", "127.0.0.1", "-p", port, "-c", "SELECT 1"}
		tries = []attempt{
			{"workload account over TCP", append([]string{"-U", sb.User, "-d", sb.Database}, tcp...), sb.Target().Password, true},
			{"postgres over TCP", append([]string{"-U", "postgres", "-d", "postgres"}, tcp...), "", false},
			{"postgres through the socket", []string{"-w", "-X", "-h", filepath.Dir(sb.Socket), "-p", port, "-U", "postgres", "-d", "postgres", "-c", "SELECT 1"}, "", false},
		}
	}
	if client == "" {
		t.Skipf("no command-line client for %s", sb.Flavor)
	}
	for _, a := range tries {
		cmd := exec.Command(client, a.args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C"}
		if a.pw != "" {
			cmd.Env = append(cmd.Env, "MYSQL_PWD="+a.pw, "PGPASSWORD="+a.pw)
		}
		cmd.Dir = "/"
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		out, err := cmd.CombinedOutput()
		if a.ok && err != nil {
			t.Errorf("%s: %v: %s", a.what, err, out)
		}
		if !a.ok && err == nil {
			t.Errorf("%s: logged in (%s)", a.what, strings.TrimSpace(string(out)))
		}
	}
}

// TestFlavorsShareHome: sandboxes of both flavors in one home run as
// different OS users when dbarena is root (one each); starting one must
// not lock the other out of its files.
func TestFlavorsShareHome(t *testing.T) {
	m := testManager(t, false)
	for _, f := range serverFlavors {
		requireServer(t, m, f)
	}
	ctx := testCtx(t)
	my, err := m.Start(ctx, Spec{Name: "my", Flavor: target.FlavorMariaDB, Profile: ProfileFast})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(ctx, Spec{Name: "pg", Flavor: target.FlavorPostgres, Profile: ProfileFast}); err != nil {
		t.Fatal(err)
	}
	rec, err := m.load(my.Name)
	if err != nil {
		t.Fatal(err)
	}
	// The server creates a file by path inside its directory.
	out := filepath.Join(fileDir(rec.Layout), "probe.txt")
	admin := openDB(t, my.AdminTarget())
	if _, err := admin.ExecContext(ctx, "SELECT 1 INTO OUTFILE '"+out+"'"); err != nil {
		t.Fatalf("INTO OUTFILE inside secure_file_priv after a PostgreSQL sandbox started: %v", err)
	}
}

// TestRootRunSandboxRefused: a MySQL-family sandbox an older dbarena made
// while running as root keeps its datadir (and its passwordless root) in
// the sandbox directory; starting it names the way out instead of running
// it as root again.
func TestRootRunSandboxRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root dbarena moves servers to an unprivileged user")
	}
	m := testManager(t, false)
	requireServer(t, m, target.FlavorMariaDB)
	bins, err := m.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var b Binary
	for _, b = range bins {
		if b.Flavor == target.FlavorMariaDB {
			break
		}
	}
	if err := mkdirPrivate(m.root(), osUser{}); err != nil {
		t.Fatal(err)
	}
	if err := mkdirPrivate(m.dir("old"), osUser{}); err != nil {
		t.Fatal(err)
	}
	rec := &record{Schema: recordSchema, Name: "old", Flavor: b.Flavor, Version: b.Version, Server: b.Server,
		Port: 1, Profile: ProfileFast, BufferPool: DefaultBufferPool, User: DefaultUser, Database: DefaultDatabase,
		State: StateStopped, Initialized: true, Layout: mysqlFamily{bin: b}.Layout(m.dir("old"), m.dir("old"), 1)}
	if err := m.save(rec); err != nil {
		t.Fatal(err)
	}
	_, err = m.Start(testCtx(t), Spec{Name: "old"})
	if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "dbarena server rm old") {
		t.Fatalf("Start of a root-run sandbox = %v, want an error naming dbarena server rm", err)
	}
}
