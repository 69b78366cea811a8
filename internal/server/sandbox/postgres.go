package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// postgresEngine serves PostgreSQL. The server refuses to run as root, so
// when dbarena runs as root the Manager runs initdb and postgres as an
// unprivileged user and places the server's files in a directory that user
// owns (serverDir).
type postgresEngine struct {
	bin Binary
}

var (
	_ engine         = postgresEngine{}
	_ passwordAtInit = postgresEngine{}
	_ passwordSetter = postgresEngine{}
)

// pgSuperuser is the bootstrap superuser initdb creates.
const pgSuperuser = "postgres"

func (e postgresEngine) Flavor() target.Flavor { return target.FlavorPostgres }

// ConfigBeforeInit implements engine: initdb wants an empty data directory.
func (postgresEngine) ConfigBeforeInit() bool { return false }

// StopSignal implements engine: SIGINT is the "fast" shutdown; SIGTERM
// ("smart") would wait for every client to disconnect.
func (postgresEngine) StopSignal() syscall.Signal { return syscall.SIGINT }

// Layout implements engine.
func (postgresEngine) Layout(dir, serverDir string, port int) layout {
	run := shortRunDir(filepath.Join(serverDir, "run"), ".s.PGSQL.65535.lock")
	data := filepath.Join(serverDir, "data")
	return layout{
		Dir:       dir,
		ServerDir: serverDir,
		Datadir:   data,
		RunDir:    run,
		Socket:    filepath.Join(run, ".s.PGSQL."+strconv.Itoa(port)),
		PIDFile:   filepath.Join(data, "postmaster.pid"),
		ErrorLog:  filepath.Join(dir, "error.log"),
		Config:    filepath.Join(data, "postgresql.conf"),
	}
}

func (postgresEngine) profileSettings(profile string) []Setting {
	switch profile {
	case ProfileDurable:
		return []Setting{{"fsync", "on"}, {"synchronous_commit", "on"}, {"full_page_writes", "on"}}
	case ProfileFast:
		return []Setting{{"fsync", "off"}, {"synchronous_commit", "off"}, {"full_page_writes", "off"}}
	}
	return nil
}

var pgConfTemplate = template.Must(template.New("postgresql.conf").Funcs(template.FuncMap{"pgval": pgValue}).Parse(
	`# postgresql.conf of dbarena sandbox {{.Name}}, rendered on every start: edits are lost.
# Add settings with: dbarena server start {{.Name}} --set KEY=VALUE
{{- range .Options}}
{{.Key}} = {{pgval .Value}}
{{- end}}
`))

// pgHBATemplate: every connection, through the socket as over TCP
// (127.0.0.1 only), gives its password; nothing is trusted, so that
// another process of the server's OS user (a shell the superuser got with
// COPY ... TO PROGRAM) is no superuser without the password either.
var pgHBATemplate = template.Must(template.New("pg_hba.conf").Parse(
	`# pg_hba.conf of dbarena sandbox {{.Name}}, rendered on every start.
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 {{.Auth}}
host    all       all   127.0.0.1/32  {{.Auth}}
`))

// pgAuthMethod is the password method of pg_hba.conf: scram-sha-256, or
// md5 before PostgreSQL 14, whose initdb stores the superuser's password
// as an md5 hash (md5 in pg_hba.conf still speaks SCRAM to a role whose
// password is stored as SCRAM).
func pgAuthMethod(version string) string {
	if version != "" && !versionAtLeast(version, "14") {
		return "md5"
	}
	return "scram-sha-256"
}

// pgValue quotes a postgresql.conf value; quoting is valid for every type.
func pgValue(v string) string {
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// RenderConfig implements engine: postgresql.conf and pg_hba.conf in the
// data directory.
func (e postgresEngine) RenderConfig(c serverConfig) ([]configFile, error) {
	l := c.Layout
	opts := []Setting{
		{"listen_addresses", "127.0.0.1"},
		{"port", strconv.Itoa(c.Port)},
		{"unix_socket_directories", l.RunDir},
		{"unix_socket_permissions", "0700"},
		{"password_encryption", "scram-sha-256"},
		{"dynamic_shared_memory_type", "posix"},
		{"logging_collector", "off"},
		{"log_destination", "stderr"},
		{"lc_messages", "C"},
		{"timezone", "UTC"},
		{"log_timezone", "UTC"},
		{"datestyle", "iso, mdy"},
		{"default_text_search_config", "pg_catalog.english"},
	}
	opts = append(opts, postgresSizing()...)
	opts = mergeSettings(opts, e.profileSettings(c.Profile)...)
	// A bare number would count 8 kB pages: always give a unit.
	kb := (c.BufferPool + 1023) / 1024
	opts = mergeSettings(opts, Setting{"shared_buffers", formatSize(kb<<10, "kB", "MB", "GB")})
	for _, st := range c.Settings {
		opts = mergeSettings(opts, pgVersionSetting(e.bin.Version, st))
	}
	data := struct {
		Name    string
		Options []Setting
		Auth    string
	}{filepath.Base(l.Dir), opts, pgAuthMethod(e.bin.Version)}
	var conf, hba bytes.Buffer
	if err := pgConfTemplate.Execute(&conf, data); err != nil {
		return nil, fmt.Errorf("render postgresql.conf: %w", err)
	}
	if err := pgHBATemplate.Execute(&hba, data); err != nil {
		return nil, fmt.Errorf("render pg_hba.conf: %w", err)
	}
	return []configFile{
		{Path: l.Config, Content: conf.Bytes()},
		{Path: filepath.Join(l.Datadir, "pg_hba.conf"), Content: hba.Bytes()},
	}, nil
}

// InitCommand implements engine: the superuser gets the admin password
// from c.PasswordFile, and no connection is trusted from the start.
func (e postgresEngine) InitCommand(c serverConfig) command {
	auth := pgAuthMethod(e.bin.Version)
	args := []string{
		"-D", c.Layout.Datadir, "-U", pgSuperuser, "--pwfile=" + c.PasswordFile,
		"--auth-local=" + auth, "--auth-host=" + auth,
		"-E", "UTF8", "--locale=C",
	}
	if c.Profile == ProfileFast {
		args = append(args, "--no-sync")
	}
	return command{Path: filepath.Join(filepath.Dir(e.bin.Server), "initdb"), Args: args}
}

func (postgresEngine) passwordAtInit() {}

// setPasswordCommand implements passwordSetter: the server in single-user
// mode, which serves no connection, runs ALTER ROLE from stdin. Statement
// logging is off so that the password cannot reach the log.
func (e postgresEngine) setPasswordCommand(c serverConfig, password string) (command, []byte) {
	cmd := command{Path: e.bin.Server, Args: []string{
		"--single", "-D", c.Layout.Datadir, "-c", "log_statement=none", "-c", "log_min_duration_statement=-1",
		"-c", "log_min_error_statement=panic",
		"-c", "exit_on_error=on", "postgres",
	}}
	stdin := fmt.Sprintf("ALTER ROLE %s PASSWORD '%s'\n", pgSuperuser, strings.ReplaceAll(password, "'", "''"))
	return cmd, []byte(stdin)
}

// StartCommand implements engine.
func (e postgresEngine) StartCommand(c serverConfig) command {
	return command{Path: e.bin.Server, Args: []string{"-D", c.Layout.Datadir}}
}

// AdminTarget implements engine: the superuser through the unix socket
// (the Manager adds the admin password).
func (e postgresEngine) AdminTarget(c serverConfig) target.Target {
	return target.Target{
		Flavor: target.FlavorPostgres, Version: e.bin.Version,
		Socket: c.Layout.Socket, Port: c.Port, User: pgSuperuser, Database: "postgres",
	}
}

// Bootstrap implements engine: a LOGIN role with the password (and
// pg_monitor, for server metrics) and a database it owns. DDL takes no
// parameters, so the server quotes names and literals itself with format().
func (postgresEngine) Bootstrap(ctx context.Context, admin target.Target, a account) error {
	db, err := dialect.PostgresDialect{}.Open(admin, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return fmt.Errorf("connect as %s: %w", pgSuperuser, err)
	}
	defer db.Close()
	run := func(what, format string, args ...any) error {
		var q string
		if err := db.QueryRowContext(ctx, "SELECT format("+format+")", args...).Scan(&q); err != nil {
			return fmt.Errorf("bootstrap: %s: %w", what, err)
		}
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("bootstrap: %s: %w", what, err)
		}
		return nil
	}
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", a.User).Scan(&exists); err != nil {
		return fmt.Errorf("bootstrap: look up role %q: %w", a.User, err)
	}
	verb := "CREATE"
	if exists {
		verb = "ALTER"
	}
	if err := run(verb+" role", "'"+verb+" ROLE %I LOGIN PASSWORD %L', $1::text, $2::text", a.User, a.Password); err != nil {
		return err
	}
	if err := run("grant pg_monitor", "'GRANT pg_monitor TO %I', $1::text", a.User); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", a.Database).Scan(&exists); err != nil {
		return fmt.Errorf("bootstrap: look up database %q: %w", a.Database, err)
	}
	if !exists {
		if err := run("create database", "'CREATE DATABASE %I OWNER %I', $1::text, $2::text", a.Database, a.User); err != nil {
			return err
		}
	}
	return nil
}

// pgWALSegment is the WAL segment size wal_keep_segments counts in (the
// default wal_segment_size; initdb --wal-segsize is not used).
const pgWALSegment = 16 << 20

// pgVersionSetting translates a setting given with --set (or a plan's
// settings) to what the server's major takes, so that one plan runs on
// every major: wal_keep_segments (to 12) and wal_keep_size (from 13)
// become one another, in 16 MB segments, rounded up; log_connections,
// a list of aspects from 18 (receipt, authentication, authorization,
// setup_durations, all), is on before 18 when the list names any.
func pgVersionSetting(version string, s Setting) Setting {
	if version == "" {
		return s
	}
	switch normKey(s.Key) {
	case "wal_keep_size":
		if versionAtLeast(version, "13") {
			return s
		}
		if n, ok := pgBytes(s.Value, 1<<20); ok {
			return Setting{Key: "wal_keep_segments", Value: strconv.FormatInt((n+pgWALSegment-1)/pgWALSegment, 10)}
		}
	case "wal_keep_segments":
		if !versionAtLeast(version, "13") {
			return s
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(s.Value), 10, 64); err == nil && n >= 0 {
			return Setting{Key: "wal_keep_size", Value: strconv.FormatInt(n*(pgWALSegment>>20), 10) + "MB"}
		}
	case "log_connections":
		if versionAtLeast(version, "18") {
			return s
		}
		v := strings.ToLower(strings.TrimSpace(s.Value))
		switch v {
		case "", "off", "false", "no", "0":
			return Setting{Key: s.Key, Value: "off"}
		case "on", "true", "yes", "1":
			return s
		}
		for _, aspect := range strings.Split(v, ",") {
			switch strings.TrimSpace(aspect) {
			case "receipt", "authentication", "authorization", "setup_durations", "all":
				return Setting{Key: s.Key, Value: "on"}
			}
		}
	}
	return s
}

// pgBytes reads a PostgreSQL memory setting ("64MB", "1GB", "512kB", a
// bare number of unit bytes) as bytes.
func pgBytes(v string, unit int64) (int64, bool) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, false
	}
	switch strings.TrimSpace(v[i:]) {
	case "":
		return n * unit, true
	case "B":
		return n, true
	case "kB":
		return n << 10, true
	case "MB":
		return n << 20, true
	case "GB":
		return n << 30, true
	case "TB":
		return n << 40, true
	}
	return 0, false
}
