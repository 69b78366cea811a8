package sandbox

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// mysqlFamily holds what MariaDB, MySQL and Percona Server share: the
// layout, my.cnf, the shutdown signal and the account bootstrap.
type mysqlFamily struct {
	bin Binary
}

// mariadbEngine initialises with mariadb-install-db (mysql_install_db on
// old versions).
type mariadbEngine struct {
	mysqlFamily
	// installer is the path of mariadb-install-db or mysql_install_db.
	installer string
}

// mysqlEngine serves MySQL and Percona Server 5.7 and newer, which
// initialise with mysqld --initialize-insecure.
type mysqlEngine struct {
	mysqlFamily
}

var (
	_ engine = mariadbEngine{}
	_ engine = mysqlEngine{}
)

func newMariaDBEngine(b Binary, basedir string) (mariadbEngine, error) {
	var candidates []string
	if basedir != "" {
		for _, sub := range []string{"scripts", "bin"} {
			for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
				candidates = append(candidates, filepath.Join(basedir, sub, name))
			}
		}
	} else {
		serverDir := filepath.Dir(b.Server)
		for _, dir := range []string{filepath.Join(filepath.Dir(serverDir), "bin"), serverDir} {
			for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
				candidates = append(candidates, filepath.Join(dir, name))
			}
		}
		for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
			if p, err := exec.LookPath(name); err == nil {
				candidates = append(candidates, p)
			}
		}
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return mariadbEngine{mysqlFamily: mysqlFamily{bin: b}, installer: c}, nil
		}
	}
	return mariadbEngine{}, fmt.Errorf("no mariadb-install-db or mysql_install_db for %s (looked at %s): %w",
		b.Server, strings.Join(candidates, ", "), ErrNoServer)
}

func (e mysqlFamily) Flavor() target.Flavor { return e.bin.Flavor }

func (mysqlFamily) ConfigBeforeInit() bool { return true }

func (mysqlFamily) StopSignal() syscall.Signal { return syscall.SIGTERM }

// Layout implements engine. Every file the server writes lives in
// serverDir, which the server's OS user owns (the sandbox directory itself
// when the server runs as the current user).
func (mysqlFamily) Layout(dir, serverDir string, _ int) layout {
	run := shortRunDir(filepath.Join(serverDir, "run"), "mysqld.sock.lock")
	return layout{
		Dir:       dir,
		ServerDir: serverDir,
		Datadir:   filepath.Join(serverDir, "data"),
		RunDir:    run,
		Socket:    filepath.Join(run, "mysqld.sock"),
		PIDFile:   filepath.Join(serverDir, "mysqld.pid"),
		ErrorLog:  filepath.Join(serverDir, "error.log"),
		TmpDir:    filepath.Join(serverDir, "tmp"),
		Config:    filepath.Join(serverDir, "my.cnf"),
	}
}

// profileSettings are the MySQL-family settings of each profile.
func (mysqlFamily) profileSettings(profile string) []Setting {
	switch profile {
	case ProfileDurable:
		return []Setting{
			{"innodb_flush_log_at_trx_commit", "1"},
			{"log_bin", "binlog"},
			{"sync_binlog", "1"},
			{"innodb_doublewrite", "ON"},
		}
	case ProfileFast:
		return []Setting{
			{"innodb_flush_log_at_trx_commit", "2"},
			{"skip_log_bin", ""},
			{"sync_binlog", "0"},
			{"innodb_doublewrite", "OFF"},
		}
	}
	return nil
}

var mycnfTemplate = template.Must(template.New("my.cnf").Funcs(template.FuncMap{"optval": mycnfValue}).Parse(
	`# my.cnf of dbarena sandbox {{.Name}}, rendered on every start: edits are lost.
# Add settings with: dbarena server start {{.Name}} --set KEY=VALUE
[client]
socket = {{optval .Socket}}
port = {{.Port}}

[mysqld]
{{- range .Options}}
{{.Key}}{{if .Value}} = {{optval .Value}}{{end}}
{{- end}}
`))

// mycnfValue quotes an option value when my.cnf parsing would change it.
func mycnfValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t#'\"\\;") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(v) + `"`
}

// renderMyCnf renders my.cnf from the core options, the profile, the
// buffer pool, engine extras and the user's settings, later ones winning.
func (e mysqlFamily) renderMyCnf(c serverConfig, extra []Setting) ([]configFile, error) {
	l := c.Layout
	opts := []Setting{
		{"datadir", l.Datadir},
		{"socket", l.Socket},
		{"port", strconv.Itoa(c.Port)},
		{"bind_address", "127.0.0.1"},
		{"pid_file", l.PIDFile},
		{"log_error", l.ErrorLog},
		{"tmpdir", l.TmpDir},
		// LOAD_FILE, LOAD DATA INFILE and SELECT ... INTO OUTFILE reach
		// only this private directory.
		{"secure_file_priv", fileDir(l)},
	}
	if c.Basedir != "" {
		opts = append([]Setting{{"basedir", c.Basedir}}, opts...)
	}
	opts = append(opts,
		Setting{"server_id", "1"},
		Setting{"skip_name_resolve", "ON"},
		Setting{"character_set_server", "utf8mb4"},
		Setting{"max_connect_errors", "1000000"},
	)
	// Files are budgeted for the connections asked for with --set, if any.
	var conns int64
	for _, s := range c.Settings {
		if normKey(s.Key) == "max_connections" {
			conns, _ = strconv.ParseInt(s.Value, 10, 64)
		}
	}
	opts = append(opts, mysqlSizing(c.FileLimit, conns, e.tableCacheInstances())...)
	opts = append(opts, extra...)
	opts = mergeSettings(opts, e.profileSettings(c.Profile)...)
	opts = mergeSettings(opts, Setting{"innodb_buffer_pool_size", formatSize(c.BufferPool, "K", "M", "G")})
	opts = mergeSettings(opts, c.Settings...)
	opts = e.adaptOptions(append(opts, perfSchemaWaits(c.Settings)...))
	var buf bytes.Buffer
	err := mycnfTemplate.Execute(&buf, struct {
		Name    string
		Socket  string
		Port    int
		Options []Setting
	}{filepath.Base(l.Dir), l.Socket, c.Port, opts})
	if err != nil {
		return nil, fmt.Errorf("render my.cnf: %w", err)
	}
	return []configFile{{Path: l.Config, Content: buf.Bytes()}}, nil
}

// perfSchemaWaits returns the wait instruments a sandbox enables when
// its settings switch performance_schema on (--set performance_schema=ON)
// without choosing instruments: every wait/% instrument, which the
// monitor's wait profile reads (docs/CLI.md, "Wait profile"). Left as
// the server ships it, performance_schema times file and table I/O but no
// mutex or rwlock.
func perfSchemaWaits(settings []Setting) []Setting {
	on := false
	for _, s := range settings {
		switch normKey(s.Key) {
		case "performance_schema_instrument":
			return nil
		case "performance_schema":
			v := strings.ToUpper(s.Value)
			on = v == "ON" || v == "1" || v == "TRUE"
		}
	}
	if !on {
		return nil
	}
	return []Setting{{"performance_schema_instrument", "wait/%=ON"}}
}

// RenderConfig implements engine.
func (e mariadbEngine) RenderConfig(c serverConfig) ([]configFile, error) {
	return e.renderMyCnf(c, nil)
}

// RenderConfig implements engine. The X Protocol plugin is switched off:
// it would listen on every interface, on a port shared by all sandboxes.
func (e mysqlEngine) RenderConfig(c serverConfig) ([]configFile, error) {
	return e.renderMyCnf(c, []Setting{{"loose_mysqlx", "OFF"}})
}

// InitCommand implements engine.
func (e mariadbEngine) InitCommand(c serverConfig) command {
	args := []string{"--defaults-file=" + c.Layout.Config}
	if c.Basedir != "" {
		args = append(args, "--basedir="+c.Basedir)
	}
	args = append(args, "--skip-name-resolve")
	if !versionAtLeast(e.bin.Version, "10.3") {
		// Old mysql_install_db insists on resolving the host name with a
		// resolveip that unpacked builds may lack; --force skips only that.
		args = append(args, "--force")
	}
	if versionAtLeast(e.bin.Version, "10.4") {
		args = append(args, "--auth-root-authentication-method=normal")
	}
	if versionAtLeast(e.bin.Version, "10.5") {
		args = append(args, "--skip-test-db")
	}
	if c.AsRoot {
		args = append(args, "--user=root")
	}
	return command{Path: e.installer, Args: args}
}

// InitCommand implements engine: root@localhost gets an empty password,
// replaced on the first start (secureSQL) before connections are served.
func (e mysqlEngine) InitCommand(c serverConfig) command {
	args := []string{"--defaults-file=" + c.Layout.Config, "--initialize-insecure"}
	if c.Basedir != "" {
		args = append(args, "--basedir="+c.Basedir)
	}
	if c.AsRoot {
		args = append(args, "--user=root")
	}
	return command{Path: e.bin.Server, Args: args}
}

// StartCommand implements engine. --defaults-file must come first.
func (e mysqlFamily) StartCommand(c serverConfig) command {
	args := []string{"--defaults-file=" + c.Layout.Config}
	if c.AsRoot {
		args = append(args, "--user=root")
	}
	return command{Path: e.bin.Server, Args: args}
}

// AdminTarget implements engine: root through the unix socket.
func (e mysqlFamily) AdminTarget(c serverConfig) target.Target {
	return target.Target{Flavor: e.bin.Flavor, Version: e.bin.Version, Socket: c.Layout.Socket, User: "root"}
}

// secureSQL implements rootSecurer: the init file of the first start
// drops the accounts the installer made that TCP could reach (root at
// 127.0.0.1, ::1 and the host name, anonymous ones), drops anonymous
// grants, and gives root@localhost a password. One statement per line, as
// init files want.
func (e mysqlFamily) secureSQL(rootPassword, hostname string) string {
	var b strings.Builder
	for _, acct := range [][2]string{{"root", "127.0.0.1"}, {"root", "::1"}, {"root", hostname}, {"", "localhost"}, {"", hostname}} {
		if acct[1] == "" || (acct[0] == "root" && acct[1] == "localhost") {
			continue
		}
		fmt.Fprintf(&b, "DROP USER IF EXISTS %s@%s;\n", sqlString(acct[0]), sqlString(acct[1]))
	}
	if e.bin.Flavor == target.FlavorMariaDB {
		// Old installers grant every user (User '') the test databases.
		b.WriteString("DELETE FROM mysql.db WHERE User = '';\nFLUSH PRIVILEGES;\n")
	}
	fmt.Fprintf(&b, "%s;\n", e.setPasswordSQL("root", "localhost", rootPassword))
	return b.String()
}

// setPasswordSQL sets an account's password; MariaDB before 10.2 has no
// ALTER USER, SET PASSWORD with PASSWORD() does the same.
func (e mysqlFamily) setPasswordSQL(user, host, password string) string {
	if e.oldMariaDB() {
		return fmt.Sprintf("SET PASSWORD FOR %s@%s = PASSWORD(%s)", sqlString(user), sqlString(host), sqlString(password))
	}
	return fmt.Sprintf("ALTER USER %s@%s IDENTIFIED BY %s", sqlString(user), sqlString(host), sqlString(password))
}

func (e mysqlFamily) oldMariaDB() bool {
	return e.bin.Flavor == target.FlavorMariaDB && e.bin.Version != "" && !versionAtLeast(e.bin.Version, "10.2")
}

// sqlString quotes s as a MySQL string literal (backslash escapes on).
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`).Replace(s) + "'"
}

// workloadGrants are the global privileges of the workload account besides
// ALL on its database: PROCESS for the InnoDB and processlist views of
// monitoring. Not FILE, SUPER or GRANT OPTION.
const workloadGrants = "PROCESS"

// Bootstrap implements engine: the database, and the account at 127.0.0.1
// and localhost with ALL on that database, workloadGrants and SELECT on
// performance_schema. An account made by an older dbarena with every
// privilege loses them first. Anonymous accounts and root at any host but
// localhost are dropped, whatever made them.
func (e mysqlFamily) Bootstrap(ctx context.Context, admin target.Target, a account) error {
	d := dialect.MySQLDialect{}
	db, err := openBootstrap(ctx, admin)
	if err != nil {
		return err
	}
	defer db.Close()
	stmts := []stmt{{"CREATE DATABASE IF NOT EXISTS " + d.QuoteIdent(a.Database), nil}}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		stmts = append(stmts,
			stmt{"CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?", []any{a.User, host, a.Password}},
			stmt{e.setPasswordSQL(a.User, host, a.Password), nil})
		var broad bool
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM mysql.user WHERE User = ? AND Host = ?
			AND (Select_priv = 'Y' OR File_priv = 'Y' OR Super_priv = 'Y' OR Grant_priv = 'Y')`, a.User, host).Scan(&broad)
		if err != nil {
			return fmt.Errorf("bootstrap: privileges of %s@%s: %w", a.User, host, err)
		}
		if broad {
			stmts = append(stmts, stmt{"REVOKE ALL PRIVILEGES, GRANT OPTION FROM ?@?", []any{a.User, host}})
		}
		stmts = append(stmts,
			stmt{"GRANT ALL PRIVILEGES ON " + d.QuoteIdent(a.Database) + ".* TO ?@?", []any{a.User, host}},
			stmt{"GRANT " + workloadGrants + " ON *.* TO ?@?", []any{a.User, host}},
			stmt{"GRANT SELECT ON performance_schema.* TO ?@?", []any{a.User, host}},
		)
	}
	return execBootstrap(ctx, db, stmts)
}

// openBootstrap connects to a new server as root, one connection, and
// drops the accounts reachable without a password (dropReachable).
func openBootstrap(ctx context.Context, admin target.Target) (*sql.DB, error) {
	cfg := dialect.MySQLDialect{}.Config(admin, dialect.OpenOptions{MaxConns: 1})
	// CREATE USER and GRANT cannot be prepared: the driver must quote the
	// arguments itself.
	cfg.InterpolateParams = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect as root: %w", err)
	}
	db := sql.OpenDB(conn)
	if err := dropReachable(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// execBootstrap runs the bootstrap statements in order, stopping at the
// first that fails.
func execBootstrap(ctx context.Context, db *sql.DB, stmts []stmt) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s.q, s.args...); err != nil {
			return fmt.Errorf("bootstrap %q: %w", s.q, err)
		}
	}
	return nil
}

// dropReachable drops anonymous accounts and root at hosts other than
// localhost (reachable over TCP, with empty passwords as installers make
// them).
func dropReachable(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "SELECT User, Host FROM mysql.user WHERE User = '' OR (User = 'root' AND Host <> 'localhost')")
	if err != nil {
		return fmt.Errorf("bootstrap: list accounts: %w", err)
	}
	var accts [][2]string
	for rows.Next() {
		var u, h string
		if err := rows.Scan(&u, &h); err != nil {
			rows.Close()
			return fmt.Errorf("bootstrap: list accounts: %w", err)
		}
		accts = append(accts, [2]string{u, h})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("bootstrap: list accounts: %w", err)
	}
	for _, a := range accts {
		if _, err := db.ExecContext(ctx, "DROP USER ?@?", a[0], a[1]); err != nil {
			return fmt.Errorf("bootstrap: drop account %q@%q: %w", a[0], a[1], err)
		}
	}
	return nil
}

// stmt is one SQL statement with its arguments.
type stmt struct {
	q    string
	args []any
}
