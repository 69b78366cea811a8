package sandbox

import (
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

// testConfig is a serverConfig for engine e with a sandbox in /home/u/.dbarena.
func testConfig(e engine, profile string, settings ...Setting) serverConfig {
	dir := "/home/u/.dbarena/sandboxes/box"
	return serverConfig{
		Layout: e.Layout(dir, dir, 15432), Port: 15432, Profile: profile,
		Settings: settings, BufferPool: 128 << 20,
	}
}

func render(t *testing.T, e engine, c serverConfig) map[string]string {
	t.Helper()
	files, err := e.RenderConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[f.Path] = string(f.Content)
	}
	return out
}

// lines returns the non-comment lines of a config file.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func TestMyCnf(t *testing.T) {
	maria := mariadbEngine{mysqlFamily: mysqlFamily{bin: Binary{Flavor: target.FlavorMariaDB, Version: "10.11.19", Server: "/usr/sbin/mariadbd"}}, installer: "/usr/bin/mariadb-install-db"}
	mysql8 := mysqlEngine{mysqlFamily{bin: Binary{Flavor: target.FlavorMySQL, Version: "8.0.36", Server: "/opt/mysql/bin/mysqld"}}}
	percona := mysqlEngine{mysqlFamily{bin: Binary{Flavor: target.FlavorPercona, Version: "8.0.36-28", Server: "/opt/ps/bin/mysqld"}}}
	common := []string{
		"[mysqld]", "datadir = /home/u/.dbarena/sandboxes/box/data", "socket = /home/u/.dbarena/sandboxes/box/run/mysqld.sock",
		"port = 15432", "bind_address = 127.0.0.1", "pid_file = /home/u/.dbarena/sandboxes/box/mysqld.pid",
		"log_error = /home/u/.dbarena/sandboxes/box/error.log", "max_connections = 2064", "max_prepared_stmt_count = 1048576", "skip_name_resolve = ON",
	}
	tests := []struct {
		name     string
		e        engine
		profile  string
		settings []Setting
		want     []string
		notWant  []string
	}{
		{"mariadb default", maria, ProfileDefault, nil, append(common, "innodb_buffer_pool_size = 128M"),
			[]string{"log_bin = binlog", "skip_log_bin", "loose_mysqlx = OFF"}},
		{"mariadb durable", maria, ProfileDurable, nil,
			append(common, "innodb_flush_log_at_trx_commit = 1", "log_bin = binlog", "sync_binlog = 1", "innodb_doublewrite = ON"), nil},
		{"mariadb fast", maria, ProfileFast, nil,
			append(common, "innodb_flush_log_at_trx_commit = 2", "skip_log_bin", "sync_binlog = 0", "innodb_doublewrite = OFF"),
			[]string{"log_bin = binlog"}},
		{"settings override profile", maria, ProfileFast,
			[]Setting{{"innodb-flush-log-at-trx-commit", "0"}, {"innodb_buffer_pool_size", "1G"}, {"tmp_table_size", "64M"}, {"init_connect", "SET @a = 'x y'"}},
			[]string{"innodb_flush_log_at_trx_commit = 0", "innodb_buffer_pool_size = 1G", "tmp_table_size = 64M", `init_connect = "SET @a = 'x y'"`},
			[]string{"innodb_flush_log_at_trx_commit = 2", "innodb_buffer_pool_size = 128M"}},
		{"mysql 8 fast", mysql8, ProfileFast, nil,
			append(common, "loose_mysqlx = OFF", "skip_log_bin", "innodb_doublewrite = OFF"), nil},
		{"percona durable", percona, ProfileDurable, nil,
			append(common, "loose_mysqlx = OFF", "log_bin = binlog", "sync_binlog = 1", "server_id = 1"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(tt.e, tt.profile, tt.settings...)
			files := render(t, tt.e, c)
			cnf, ok := files["/home/u/.dbarena/sandboxes/box/my.cnf"]
			if !ok || len(files) != 1 {
				t.Fatalf("RenderConfig files = %v, want only my.cnf", files)
			}
			got := lines(cnf)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("my.cnf lacks %q:\n%s", w, cnf)
				}
			}
			for _, nw := range tt.notWant {
				if slices.Contains(got, nw) {
					t.Errorf("my.cnf has %q:\n%s", nw, cnf)
				}
			}
			// Each option appears once, so later sources really override.
			seen := map[string]bool{}
			for _, l := range got[slices.Index(got, "[mysqld]")+1:] {
				k, _, _ := strings.Cut(l, " = ")
				if k = normKey(k); seen[k] {
					t.Errorf("option %q appears twice:\n%s", k, cnf)
				}
				seen[k] = true
			}
		})
	}
}

func TestMySQLFamilyCommands(t *testing.T) {
	maria := func(v string) mariadbEngine {
		return mariadbEngine{mysqlFamily: mysqlFamily{bin: Binary{Flavor: target.FlavorMariaDB, Version: v, Server: "/opt/m/bin/mariadbd"}}, installer: "/opt/m/scripts/mariadb-install-db"}
	}
	mysql := func(f target.Flavor, v string) mysqlEngine {
		return mysqlEngine{mysqlFamily{bin: Binary{Flavor: f, Version: v, Server: "/opt/my/bin/mysqld"}}}
	}
	const cnf = "--defaults-file=/home/u/.dbarena/sandboxes/box/my.cnf"
	tests := []struct {
		name    string
		e       engine
		basedir string
		asRoot  bool
		init    string
		start   string
	}{
		{"mariadb 10.11 as root", maria("10.11.19"), "", true,
			"/opt/m/scripts/mariadb-install-db " + cnf + " --skip-name-resolve --auth-root-authentication-method=normal --skip-test-db --user=root",
			"/opt/m/bin/mariadbd " + cnf + " --user=root"},
		{"mariadb 10.3 basedir", maria("10.3.39"), "/opt/m", false,
			"/opt/m/scripts/mariadb-install-db " + cnf + " --basedir=/opt/m --skip-name-resolve",
			"/opt/m/bin/mariadbd " + cnf},
		{"mariadb 10.1 mysql_install_db skips the host name check", maria("10.1.23"), "/opt/m", true,
			"/opt/m/scripts/mariadb-install-db " + cnf + " --basedir=/opt/m --skip-name-resolve --force --user=root",
			"/opt/m/bin/mariadbd " + cnf + " --user=root"},
		{"mysql 8 as root", mysql(target.FlavorMySQL, "8.0.36"), "/opt/my", true,
			"/opt/my/bin/mysqld " + cnf + " --initialize-insecure --basedir=/opt/my --user=root",
			"/opt/my/bin/mysqld " + cnf + " --user=root"},
		{"mysql 5.7", mysql(target.FlavorMySQL, "5.7.44"), "", false,
			"/opt/my/bin/mysqld " + cnf + " --initialize-insecure",
			"/opt/my/bin/mysqld " + cnf},
		{"percona 8", mysql(target.FlavorPercona, "8.0.36-28"), "/opt/my", false,
			"/opt/my/bin/mysqld " + cnf + " --initialize-insecure --basedir=/opt/my",
			"/opt/my/bin/mysqld " + cnf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(tt.e, ProfileDefault)
			c.Basedir, c.AsRoot = tt.basedir, tt.asRoot
			if got := tt.e.InitCommand(c).String(); got != tt.init {
				t.Errorf("InitCommand =\n  %s\nwant\n  %s", got, tt.init)
			}
			if got := tt.e.StartCommand(c).String(); got != tt.start {
				t.Errorf("StartCommand =\n  %s\nwant\n  %s", got, tt.start)
			}
			if !tt.e.ConfigBeforeInit() || tt.e.StopSignal() != syscall.SIGTERM {
				t.Error("MySQL family: config goes in before init; SIGTERM stops")
			}
			if c.Basedir != "" {
				if cnf := render(t, tt.e, c)["/home/u/.dbarena/sandboxes/box/my.cnf"]; !strings.Contains(cnf, "basedir = /opt/") {
					t.Errorf("my.cnf lacks basedir:\n%s", cnf)
				}
			}
			admin := tt.e.AdminTarget(c)
			if admin.User != "root" || admin.Socket != c.Layout.Socket || admin.Password != "" {
				t.Errorf("AdminTarget = %+v, want root through the socket", admin)
			}
		})
	}
}

func TestEngineFor(t *testing.T) {
	for _, tt := range []struct {
		b  Binary
		ok bool
	}{
		{Binary{Flavor: target.FlavorMySQL, Version: "8.0.36"}, true},
		{Binary{Flavor: target.FlavorPercona, Version: "5.7.44-48"}, true},
		{Binary{Flavor: target.FlavorMySQL, Version: "5.6.51"}, true},
		{Binary{Flavor: target.FlavorMySQL, Version: "5.0.96"}, false},
		{Binary{Flavor: target.FlavorPostgres, Version: "15.18"}, true},
		{Binary{Flavor: "oracle", Version: "23"}, false},
	} {
		e, err := engineFor(tt.b)
		if (err == nil) != tt.ok {
			t.Errorf("engineFor(%+v) = %v, %v; want ok=%v", tt.b, e, err, tt.ok)
		}
	}
}

func TestPostgresConfig(t *testing.T) {
	e := postgresEngine{bin: Binary{Flavor: target.FlavorPostgres, Version: "15.18", Server: "/usr/lib/postgresql/15/bin/postgres"}}
	base := []string{
		"listen_addresses = '127.0.0.1'", "port = '15432'", "max_connections = '1019'", "superuser_reserved_connections = '3'",
		"unix_socket_directories = '/home/u/.dbarena/sandboxes/box/run'", "unix_socket_permissions = '0700'",
		"password_encryption = 'scram-sha-256'",
	}
	tests := []struct {
		name     string
		profile  string
		pool     int64
		settings []Setting
		want     []string
		notWant  []string
	}{
		{"default", ProfileDefault, 128 << 20, nil, append(base, "shared_buffers = '128MB'"), []string{"fsync = 'off'"}},
		{"durable", ProfileDurable, 1 << 30, nil,
			append(base, "shared_buffers = '1GB'", "fsync = 'on'", "synchronous_commit = 'on'", "full_page_writes = 'on'"), nil},
		{"fast", ProfileFast, 100 << 10, nil,
			append(base, "shared_buffers = '100kB'", "fsync = 'off'", "synchronous_commit = 'off'", "full_page_writes = 'off'"), nil},
		{"odd pool rounds up to kB", ProfileDefault, 1000, nil, []string{"shared_buffers = '1kB'"}, nil},
		{"settings override", ProfileFast, 128 << 20,
			[]Setting{{"synchronous_commit", "local"}, {"work_mem", "64MB"}, {"search_path", "it's"}},
			[]string{"synchronous_commit = 'local'", "work_mem = '64MB'", "search_path = 'it''s'"},
			[]string{"synchronous_commit = 'off'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(e, tt.profile, tt.settings...)
			c.BufferPool = tt.pool
			files := render(t, e, c)
			conf := files["/home/u/.dbarena/sandboxes/box/data/postgresql.conf"]
			got := lines(conf)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("postgresql.conf lacks %q:\n%s", w, conf)
				}
			}
			for _, nw := range tt.notWant {
				if slices.Contains(got, nw) {
					t.Errorf("postgresql.conf has %q:\n%s", nw, conf)
				}
			}
			hba := lines(files["/home/u/.dbarena/sandboxes/box/data/pg_hba.conf"])
			// Nothing is trusted, not even the socket.
			wantHBA := []string{"local   all       all                 scram-sha-256", "host    all       all   127.0.0.1/32  scram-sha-256"}
			if !slices.Equal(hba, wantHBA) {
				t.Errorf("pg_hba.conf = %q, want %q", hba, wantHBA)
			}
		})
	}
	t.Run("commands", func(t *testing.T) {
		c := testConfig(e, ProfileFast)
		c.PasswordFile = "/home/u/.dbarena/sandboxes/box/.init-password"
		init := e.InitCommand(c).String()
		want := "/usr/lib/postgresql/15/bin/initdb -D /home/u/.dbarena/sandboxes/box/data -U postgres --pwfile=/home/u/.dbarena/sandboxes/box/.init-password --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync"
		if init != want {
			t.Errorf("InitCommand =\n  %s\nwant\n  %s", init, want)
		}
		if got := e.StartCommand(c).String(); got != "/usr/lib/postgresql/15/bin/postgres -D /home/u/.dbarena/sandboxes/box/data" {
			t.Errorf("StartCommand = %s", got)
		}
		if e.ConfigBeforeInit() || e.StopSignal() != syscall.SIGINT {
			t.Error("postgres: config goes in after initdb; SIGINT (fast shutdown) stops")
		}
		if s := c.Layout.Socket; s != "/home/u/.dbarena/sandboxes/box/run/.s.PGSQL.15432" {
			t.Errorf("socket = %s", s)
		}
		cmd, stdin := e.setPasswordCommand(c, "pw'x")
		if !slices.Contains(cmd.Args, "--single") || !slices.Contains(cmd.Args, "log_statement=none") || strings.Contains(cmd.String(), "pw") {
			t.Errorf("setPasswordCommand = %s: want single-user mode, statements unlogged, no password in the arguments", cmd)
		}
		if got := string(stdin); got != "ALTER ROLE postgres PASSWORD 'pw''x'\n" {
			t.Errorf("setPasswordCommand stdin = %q", got)
		}
	})
	t.Run("md5 before 14", func(t *testing.T) {
		old := postgresEngine{bin: Binary{Flavor: target.FlavorPostgres, Version: "13.4", Server: "/opt/pg13/bin/postgres"}}
		hba := lines(render(t, old, testConfig(old, ProfileFast))["/home/u/.dbarena/sandboxes/box/data/pg_hba.conf"])
		want := []string{"local   all       all                 md5", "host    all       all   127.0.0.1/32  md5"}
		if !slices.Equal(hba, want) {
			t.Errorf("PostgreSQL 13 pg_hba.conf = %q, want %q", hba, want)
		}
		if init := old.InitCommand(testConfig(old, ProfileFast)).String(); !strings.Contains(init, "--auth-local=md5 --auth-host=md5") {
			t.Errorf("PostgreSQL 13 InitCommand = %s", init)
		}
	})
}

func TestShortRunDir(t *testing.T) {
	short := "/home/u/.dbarena/sandboxes/box/run"
	if got := shortRunDir(short, "mysqld.sock.lock"); got != short {
		t.Errorf("shortRunDir(short) = %q, want it unchanged", got)
	}
	long := "/" + strings.Repeat("x", 100) + "/run"
	got := shortRunDir(long, ".s.PGSQL.65535.lock")
	if got == long || len(got)+len("/.s.PGSQL.65535.lock") > 107 {
		t.Errorf("shortRunDir(long) = %q, want a short path", got)
	}
	if again := shortRunDir(long, ".s.PGSQL.65535.lock"); again != got {
		t.Errorf("shortRunDir is not stable: %q then %q", got, again)
	}
	l := mysqlFamily{}.Layout("/"+strings.Repeat("y", 100), "", 0)
	if len(l.Socket) > 107 {
		t.Errorf("mysql socket %q is too long", l.Socket)
	}
	if !slices.Contains(l.owned(), l.RunDir) {
		t.Errorf("owned() = %v, want it to include the run dir outside the sandbox dir", l.owned())
	}
}

// TestMySQLSizing checks that the limits fit the file budget, so that
// mysqld keeps every value (it shrinks the table cache, or even
// max_connections, when the files it wants exceed open_files_limit).
func TestMySQLSizing(t *testing.T) {
	for _, tt := range []struct {
		limit     uint64
		conns     int64
		wantConns int64
		fullCache bool
		old       bool // MariaDB before 10.2.2: one table cache instance
	}{
		{0, 0, 2064, true, false},
		{^uint64(0), 0, 2064, true, false},
		{1 << 20, 0, 2064, true, false},
		{20000, 0, 2064, false, false},
		{4096, 0, 2064, false, false},
		{20000, 5000, 5000, false, false},
		{0, 0, 2064, true, true},
		{20000, 0, 2064, false, true},
	} {
		got := map[string]int64{}
		got["table_open_cache_instances"] = 1
		for _, s := range mysqlSizing(tt.limit, tt.conns, !tt.old) {
			n, err := strconv.ParseInt(s.Value, 10, 64)
			if err != nil {
				t.Fatalf("%s = %q: not a number", s.Key, s.Value)
			}
			got[s.Key] = n
			if s.Key == "table_open_cache_instances" && tt.old {
				t.Errorf("mysqlSizing(%d, %d, false) sets table_open_cache_instances", tt.limit, tt.conns)
			}
		}
		budget := int64(maxFileLimit)
		if tt.limit > 0 && tt.limit < maxFileLimit {
			budget = int64(tt.limit)
		}
		wanted := 10 + got["max_connections"] + got["table_open_cache"]*2*got["table_open_cache_instances"]
		if got["max_connections"] != tt.wantConns || got["max_prepared_stmt_count"] != 1048576 ||
			got["open_files_limit"] > budget || wanted > got["open_files_limit"] ||
			(got["table_open_cache"] == mysqlTableCache) != tt.fullCache {
			t.Errorf("mysqlSizing(%d, %d) = %v (files wanted %d, budget %d)", tt.limit, tt.conns, got, wanted, budget)
		}
		if got["table_open_cache"] < 2048*4 && tt.limit >= 20000 && tt.conns == 0 {
			t.Errorf("mysqlSizing(%d): table_open_cache %d holds fewer than 2048 connections x 4 tables", tt.limit, got["table_open_cache"])
		}
	}
}
