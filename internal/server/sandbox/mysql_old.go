package sandbox

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// mysqlOldEngine serves Oracle MySQL and Percona Server 5.1 to 5.6, which
// have neither mysqld --initialize nor ALTER USER, IF [NOT] EXISTS on
// accounts or TLS in every build. The data directory is a copy of the
// ready one a distribution ships (share/data_dir, as MySQL Connector/MXJ
// does) or is made from share/mysql_system_tables*.sql as mysql_install_db
// does; either way mysqld --bootstrap then locks it down (root@localhost
// with the admin password, no other account) before the first start, so
// no passwordless root ever serves a connection.
type mysqlOldEngine struct {
	mysqlFamily
}

var (
	_ engine    = mysqlOldEngine{}
	_ stdinInit = mysqlOldEngine{}
)

// minMySQLVersion is the oldest MySQL a sandbox runs.
const minMySQLVersion = "5.1"

// oldMySQL reports whether b is an Oracle MySQL or Percona Server older
// than 5.7 (mysqlOldEngine).
func oldMySQL(b Binary) bool {
	return (b.Flavor == target.FlavorMySQL || b.Flavor == target.FlavorPercona) &&
		b.Version != "" && !versionAtLeast(b.Version, "5.7")
}

// stdinInit is an engine whose InitCommand reads SQL from stdin;
// initInput prepares the (empty, private) data directory, owned by u, and
// returns that SQL, which gives the superuser rootPassword: the sandbox is
// secured once InitCommand succeeds.
type stdinInit interface {
	initInput(c serverConfig, u osUser, rootPassword string) ([]byte, error)
}

// tlsRefuser is an engine whose server may lack TLS: refuseTLS says why a
// TLS sandbox cannot be made, nil when it can.
type tlsRefuser interface {
	refuseTLS(c serverConfig) error
}

// tableCacheInstances reports whether the server knows
// table_open_cache_instances (MariaDB 10.2.2, MySQL 5.6.6).
func (e mysqlFamily) tableCacheInstances() bool {
	if e.bin.Flavor == target.FlavorMariaDB {
		return versionAtLeast(e.bin.Version, "10.2.2")
	}
	return e.bin.Version == "" || versionAtLeast(e.bin.Version, "5.6.6")
}

// adaptOptions rewrites rendered my.cnf options for the server's version:
// MySQL before 5.6 ignores an InnoDB boolean written ON or OFF ("ignoring
// option '--innodb-doublewrite' due to invalid value 'OFF'") and keeps
// its default, so they become 1 and 0 there; performance_schema_instrument
// (5.6) is left out.
func (e mysqlFamily) adaptOptions(opts []Setting) []Setting {
	if !oldMySQL(e.bin) || versionAtLeast(e.bin.Version, "5.6") {
		return opts
	}
	out := make([]Setting, 0, len(opts))
	for _, o := range opts {
		if normKey(o.Key) == "performance_schema_instrument" {
			continue // 5.6 added it; 5.5 starts with every instrument on
		}
		if strings.HasPrefix(normKey(o.Key), "innodb_") {
			switch strings.ToUpper(o.Value) {
			case "ON", "TRUE", "YES":
				o.Value = "1"
			case "OFF", "FALSE", "NO":
				o.Value = "0"
			}
		}
		out = append(out, o)
	}
	return out
}

// shareDir is the directory holding the server's error messages and
// system table scripts: basedir/share or basedir/share/mysql (system
// binaries: next to their bin directory, or /usr/share/mysql).
func (e mysqlOldEngine) shareDir(c serverConfig) string {
	var roots []string
	if c.Basedir != "" {
		roots = append(roots, filepath.Join(c.Basedir, "share"), filepath.Join(c.Basedir, "share", "mysql"))
	} else {
		top := filepath.Dir(filepath.Dir(e.bin.Server))
		roots = append(roots, filepath.Join(top, "share", "mysql"), filepath.Join(top, "share"), "/usr/share/mysql")
	}
	for _, r := range roots {
		if fileExists(filepath.Join(r, "mysql_system_tables.sql")) || fileExists(filepath.Join(r, "english", "errmsg.sys")) {
			return r
		}
	}
	return roots[0]
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// RenderConfig implements engine. Besides the family's options: where the
// error messages are (an unpacked basedir's share is not where the build
// looks), and what 5.5's defaults get wrong for a benchmark against
// today's servers: 1 MB packets (dumps and batched loads fail), 5 MB redo
// logs (distorting every write benchmark: set before the first start,
// which creates them), a shared tablespace and no thread cache.
func (e mysqlOldEngine) RenderConfig(c serverConfig) ([]configFile, error) {
	share := e.shareDir(c)
	var extra []Setting
	if versionAtLeast(e.bin.Version, "5.5") {
		extra = append(extra, Setting{"lc_messages_dir", share})
	} else {
		extra = append(extra, Setting{"language", filepath.Join(share, "english")})
	}
	extra = append(extra,
		Setting{"max_allowed_packet", "16M"},
		Setting{"innodb_log_file_size", "96M"},
		Setting{"innodb_file_per_table", "1"},
		Setting{"thread_cache_size", "256"},
	)
	return e.renderMyCnf(c, extra)
}

// InitCommand implements engine: mysqld --bootstrap runs the SQL of
// initInput. Binary logging is off: the statements are no transaction to
// replay.
func (e mysqlOldEngine) InitCommand(c serverConfig) command {
	args := []string{"--defaults-file=" + c.Layout.Config, "--bootstrap", "--skip-log-bin",
		"--default-storage-engine=MyISAM", "--max_allowed_packet=8M", "--net_buffer_length=16K"}
	if c.AsRoot {
		args = append(args, "--user=root")
	}
	return command{Path: e.bin.Server, Args: args}
}

// initInput implements stdinInit. The shipped data directory is copied
// when there is one; else the system tables are created from the share
// scripts. Then every account but root@localhost is deleted, with the
// anonymous grants on test, and root@localhost gets rootPassword's
// mysql_native_password hash (the plain password is in no file or log).
func (e mysqlOldEngine) initInput(c serverConfig, u osUser, rootPassword string) ([]byte, error) {
	share := e.shareDir(c)
	datadir := c.Layout.Datadir
	var sqlIn bytes.Buffer
	if ready := filepath.Join(share, "data_dir"); fileExists(filepath.Join(ready, "mysql", "user.frm")) {
		if err := copyTree(ready, datadir, u); err != nil {
			return nil, fmt.Errorf("copy the shipped data directory %s: %w", ready, err)
		}
	} else {
		tables := filepath.Join(share, "mysql_system_tables.sql")
		if !fileExists(tables) {
			return nil, fmt.Errorf("%s %s: neither a ready data directory (%s) nor %s: cannot initialise a data directory",
				e.bin.Flavor, e.bin.Version, ready, tables)
		}
		for _, d := range []string{"mysql", "test"} {
			if err := mkdirPrivate(filepath.Join(datadir, d), u); err != nil {
				return nil, err
			}
		}
		sqlIn.WriteString("use mysql;\n")
		for _, f := range []string{"mysql_system_tables.sql", "mysql_system_tables_data.sql", "fill_help_tables.sql"} {
			data, err := os.ReadFile(filepath.Join(share, f))
			if errors.Is(err, fs.ErrNotExist) && f == "fill_help_tables.sql" {
				continue // HELP stays empty
			}
			if err != nil {
				return nil, fmt.Errorf("initialise %s %s: %w", e.bin.Flavor, e.bin.Version, err)
			}
			sqlIn.Write(data)
			sqlIn.WriteString("\n")
		}
	}
	sqlIn.WriteString("use mysql;\n")
	sqlIn.WriteString("DELETE FROM mysql.user WHERE NOT (User = 'root' AND Host = 'localhost');\n")
	fmt.Fprintf(&sqlIn, "UPDATE mysql.user SET Password = %s WHERE User = 'root' AND Host = 'localhost';\n",
		sqlString(nativePasswordHash(rootPassword)))
	sqlIn.WriteString("DELETE FROM mysql.db WHERE User = '';\n")
	sqlIn.WriteString("DELETE FROM mysql.tables_priv WHERE User = '';\n")
	sqlIn.WriteString("DELETE FROM mysql.columns_priv WHERE User = '';\n")
	if versionAtLeast(e.bin.Version, "5.5.7") {
		sqlIn.WriteString("DELETE FROM mysql.proxies_priv WHERE NOT (User = 'root' AND Host = 'localhost');\n")
	}
	return sqlIn.Bytes(), nil
}

// nativePasswordHash is the mysql_native_password hash of pw, as
// PASSWORD() computes it: '*' and the upper-case hex of SHA1(SHA1(pw)).
func nativePasswordHash(pw string) string {
	h1 := sha1.Sum([]byte(pw))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// copyTree copies the directory src into the existing directory dst,
// files 0600 and directories 0700, owned by u.
func copyTree(src, dst string, u osUser) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return mkdirPrivate(to, u)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return writePrivate(to, data, u)
		}
		return nil // no links or devices in a data directory
	})
}

// secureSQL implements rootSecurer: initInput has secured the data
// directory already, so the first start needs no init file.
func (mysqlOldEngine) secureSQL(string, string) string { return "" }

// refuseTLS implements tlsRefuser: a build without SSL (MySQL
// Connector/MXJ's 5.5.9; have_ssl = NO) has no ssl-cert option at all.
func (e mysqlOldEngine) refuseTLS(c serverConfig) error {
	args := []string{"--no-defaults", "--verbose", "--help"}
	if versionAtLeast(e.bin.Version, "5.5") {
		args = append(args, "--lc-messages-dir="+e.shareDir(c))
	}
	out, _ := exec.Command(e.bin.Server, args...).CombinedOutput()
	if bytes.Contains(out, []byte("ssl-cert")) {
		return nil
	}
	return fmt.Errorf("%s %s (%s) was built without TLS (it has no ssl-cert option; have_ssl = NO): start it without --tls",
		e.bin.Flavor, e.bin.Version, e.bin.Server)
}

// Bootstrap implements engine as mysqlFamily.Bootstrap does, in the SQL
// 5.1 to 5.6 know: CREATE USER without IF NOT EXISTS and SET PASSWORD
// instead of ALTER USER, then FLUSH PRIVILEGES (MySQL 5.5.9 keeps
// accepting an account's old empty password after SET PASSWORD until
// then).
func (e mysqlOldEngine) Bootstrap(ctx context.Context, admin target.Target, a account) error {
	d := dialect.MySQLDialect{}
	db, err := openBootstrap(ctx, admin)
	if err != nil {
		return err
	}
	defer db.Close()
	stmts := []stmt{{"CREATE DATABASE IF NOT EXISTS " + d.QuoteIdent(a.Database), nil}}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		var exists, broad bool
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) > 0, COALESCE(MAX(Select_priv = 'Y' OR File_priv = 'Y'
			OR Super_priv = 'Y' OR Grant_priv = 'Y'), 0) FROM mysql.user WHERE User = ? AND Host = ?`, a.User, host).Scan(&exists, &broad)
		if err != nil {
			return fmt.Errorf("bootstrap: account %s@%s: %w", a.User, host, err)
		}
		if exists {
			stmts = append(stmts, stmt{"SET PASSWORD FOR ?@? = PASSWORD(?)", []any{a.User, host, a.Password}})
		} else {
			stmts = append(stmts, stmt{"CREATE USER ?@? IDENTIFIED BY ?", []any{a.User, host, a.Password}})
		}
		if broad {
			stmts = append(stmts, stmt{"REVOKE ALL PRIVILEGES, GRANT OPTION FROM ?@?", []any{a.User, host}})
		}
		stmts = append(stmts,
			stmt{"GRANT ALL PRIVILEGES ON " + d.QuoteIdent(a.Database) + ".* TO ?@?", []any{a.User, host}},
			stmt{"GRANT " + workloadGrants + " ON *.* TO ?@?", []any{a.User, host}},
		)
		if versionAtLeast(e.bin.Version, "5.5") {
			stmts = append(stmts, stmt{"GRANT SELECT ON performance_schema.* TO ?@?", []any{a.User, host}})
		}
	}
	stmts = append(stmts, stmt{"FLUSH PRIVILEGES", nil})
	return execBootstrap(ctx, db, stmts)
}
