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

	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/target"
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

// Layout implements engine. MySQL-family servers run as the current user
// (root included, with --user=root), so every file lives under dir.
func (mysqlFamily) Layout(dir, _ string, _ int) layout {
	run := shortRunDir(filepath.Join(dir, "run"), "mysqld.sock.lock")
	return layout{
		Dir:       dir,
		ServerDir: dir,
		Datadir:   filepath.Join(dir, "data"),
		RunDir:    run,
		Socket:    filepath.Join(run, "mysqld.sock"),
		PIDFile:   filepath.Join(dir, "mysqld.pid"),
		ErrorLog:  filepath.Join(dir, "error.log"),
		TmpDir:    filepath.Join(dir, "tmp"),
		Config:    filepath.Join(dir, "my.cnf"),
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
	instances := e.bin.Flavor != target.FlavorMariaDB || versionAtLeast(e.bin.Version, "10.2.2")
	opts = append(opts, mysqlSizing(c.FileLimit, conns, instances)...)
	opts = append(opts, extra...)
	opts = mergeSettings(opts, e.profileSettings(c.Profile)...)
	opts = mergeSettings(opts, Setting{"innodb_buffer_pool_size", formatSize(c.BufferPool, "K", "M", "G")})
	opts = mergeSettings(opts, c.Settings...)
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
// which only the owner of the private socket directory can use.
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

// Bootstrap implements engine: the database, and the account at 127.0.0.1
// and localhost with every privilege (sysbench and tpcc need broad rights).
func (e mysqlFamily) Bootstrap(ctx context.Context, admin target.Target, a account) error {
	d := dialect.MySQLDialect{}
	cfg := d.Config(admin, dialect.OpenOptions{MaxConns: 1})
	// CREATE USER and GRANT cannot be prepared: the driver must quote the
	// arguments itself.
	cfg.InterpolateParams = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("connect as root: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	stmts := []stmt{{"CREATE DATABASE IF NOT EXISTS " + d.QuoteIdent(a.Database), nil}}
	// MariaDB before 10.2 has no ALTER USER: SET PASSWORD does the same.
	setPassword := "ALTER USER ?@? IDENTIFIED BY ?"
	if e.bin.Flavor == target.FlavorMariaDB && e.bin.Version != "" && !versionAtLeast(e.bin.Version, "10.2") {
		setPassword = "SET PASSWORD FOR ?@? = PASSWORD(?)"
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		stmts = append(stmts,
			stmt{"CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?", []any{a.User, host, a.Password}},
			stmt{setPassword, []any{a.User, host, a.Password}},
			stmt{"GRANT ALL PRIVILEGES ON *.* TO ?@? WITH GRANT OPTION", []any{a.User, host}},
		)
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s.q, s.args...); err != nil {
			return fmt.Errorf("bootstrap %q: %w", s.q, err)
		}
	}
	return nil
}

// stmt is one SQL statement with its arguments.
type stmt struct {
	q    string
	args []any
}
