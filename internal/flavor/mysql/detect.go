package mysql

import (
	"context"
	"database/sql"
	"regexp"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// DetectVariables are the server variables Detect reads besides
// @@version and @@version_comment: SHOW GLOBAL VARIABLES answers them on
// every MySQL-family server from 5.0 on, and a server without one simply
// has no row for it.
var DetectVariables = []string{
	// MariaDB: Aria (5.2 on; "maria_" in 5.1) is always compiled in, and
	// MariaDB's XtraDB (5.5) puts "MariaDB" in innodb_version.
	"aria_block_size", "maria_block_size", "innodb_version",
	// Percona Server only (from 5.5/5.6 to 8.x): backup locks, XtraDB's
	// idle-transaction killer, changed page tracking and expanded fast
	// index creation. MariaDB's XtraDB (10.0, 10.1) has some of them,
	// which is why MariaDB is told first.
	"have_backup_locks", "innodb_kill_idle_transaction", "innodb_track_changed_pages",
	"expand_fast_index_creation",
	// Percona Server and MariaDB both: extended slow log and user
	// statistics; never Oracle MySQL.
	"log_slow_verbosity", "userstat",
}

// perconaOnly are the DetectVariables no MariaDB or Oracle MySQL has.
var perconaOnly = []string{"have_backup_locks", "innodb_kill_idle_transaction", "innodb_track_changed_pages", "expand_fast_index_creation"}

// perconaOrMariaDB are the DetectVariables of both Percona Server and
// MariaDB but not Oracle MySQL.
var perconaOrMariaDB = []string{"log_slow_verbosity", "userstat"}

// perconaVersionRE matches Percona Server's version string: the MySQL
// version, then its release, "5.5.31-30.3-log", "5.6.51-91.0",
// "5.7.44-48", "8.0.30-22", "5.1.53-rel11.7-log". Oracle's suffixes are
// words ("-log", "-debug", "-enterprise-commercial-advanced", "-m14",
// "-ndb-7.5.21") and distributions' start with a 0 followed by a word or
// '+' ("-0ubuntu0.18.04.1", "-0+deb8u1"): neither matches.
var perconaVersionRE = regexp.MustCompile(`^\d+\.\d+\.\d+-(?:rel)?[1-9]\d*(?:\.\d+)?(?:-|$)`)

// perconaInnoDBRE matches XtraDB's innodb_version: the MySQL version and
// Percona's InnoDB release, "5.6.51-91.0", "5.5.62-38.14" (Percona Server
// 5.5 to 5.7; MariaDB's XtraDB says the same, "5.6.36-82.1" in 10.1, so it
// is read only once MariaDB is ruled out). Oracle's is "1.0.6" (5.1's
// plugin), "1.1.8" (5.5) or the server version (5.6 on).
var perconaInnoDBRE = regexp.MustCompile(`^\d+\.\d+\.\d+-\d+\.\d+$`)

// Detect tells MariaDB, Percona Server and Oracle MySQL apart from
// @@version, @@version_comment and some server variables (vars, by
// lower-case name as DetectVariables lists them; absent means the server
// has no such variable). MariaDB is told first, since it shares
// Percona's XtraDB variables and innodb_version (up to 10.1), and it can
// be told even when its version string and comment have been changed
// (its Aria variables stay). Percona Server is told by its comment, its
// version's release suffix, XtraDB's innodb_version or a variable no
// other server has; Oracle MySQL is what remains.
func Detect(version, comment string, vars map[string]string) target.Flavor {
	v, c := strings.ToLower(version), strings.ToLower(comment)
	has := func(name string) bool { _, ok := vars[name]; return ok }
	switch {
	case strings.Contains(v, "mariadb"), strings.Contains(c, "mariadb"),
		has("aria_block_size"), has("maria_block_size"),
		strings.Contains(strings.ToLower(vars["innodb_version"]), "mariadb"):
		return target.FlavorMariaDB
	case strings.Contains(c, "percona"),
		perconaVersionRE.MatchString(version),
		perconaInnoDBRE.MatchString(vars["innodb_version"]):
		return target.FlavorPercona
	}
	// A variable of Percona's alone, or of Percona's and MariaDB's on a
	// server already known not to be MariaDB (no Aria): Percona Server.
	if slices.ContainsFunc(perconaOnly, has) || slices.ContainsFunc(perconaOrMariaDB, has) {
		return target.FlavorPercona
	}
	return target.FlavorMySQL
}

// detectVariables reads DetectVariables from db, by lower-case name.
func detectVariables(ctx context.Context, db *sql.DB) (map[string]string, error) {
	q := "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('" + strings.Join(DetectVariables, "','") + "')"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vars := map[string]string{}
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		vars[strings.ToLower(name)] = value.String
	}
	return vars, rows.Err()
}
