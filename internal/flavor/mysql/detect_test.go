package mysql

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

// TestDetect tells flavors apart from what real servers answer to
// SELECT @@version, @@version_comment and SHOW GLOBAL VARIABLES for
// DetectVariables. Where each string comes from:
//   - "here": read on 2026-11-28 from the servers this repository's
//     scripts/fetch-servers catalogues (MySQL 5.5.9 from Maven's
//     mysql-connector-mxj-db-files, MariaDB 10.1.23 and 10.2.11) and from
//     Debian 12's MariaDB 10.11, each in a dbarena sandbox.
//   - "so43611296": the Stack Overflow answer "How can I detect whether
//     connected database is MariaDB or MySQL" (questions/43611296), which
//     lists Percona's "5.5.31-30.3-log", "5.6.30-76.3-56-log",
//     "5.6.19-67.0-log", "5.1.53-rel11.7-log" and Ubuntu's
//     "5.5.35-0ubuntu0.12.04.2-log".
//   - "ps-banner": public text quoting a Percona server: the mysql client's
//     banner "Server version: 5.7.29-32-log Percona Server (GPL), Release 32,
//     Revision 56bce88"; a blog post on performance_schema "5.6.25-73.1-log
//     Percona Server (GPL), Release 73.1, Revision 07b797f"; a crash report
//     "Server Version: 8.0.22-13 Percona Server (GPL), Release 13, Revision
//     6f7822f".
//   - "ps-docs": Percona's documentation: 8.0 version numbers ("8.0.29-21",
//     server-version-numbers.html), the system variables of 8.x
//     (have_backup_locks, innodb_kill_idle_transaction,
//     innodb_track_changed_pages, expand_fast_index_creation), and
//     version_comment / version_suffix being settable (percona-server pull
//     request 2974), which is why variables matter.
//   - "ps-4097": percona-server pull request 4097, "VERSION raised to
//     5.6.50-90.0, PERCONA_INNODB_VERSION raised to 90.0" (innodb_version is
//     the two joined).
//   - "mdb-xtradb": MariaDB/server commit e7bb818116 (5.5's XtraDB
//     INNODB_VERSION_STR "5.5.55-MariaDB-" + 38.9) and bytebot.net's "MariaDB
//     10 – XtraDB & InnoDB versions" (10.0.10: XtraDB 5.6.15-63.0).
//   - "mdb-dumps": dump headers of public projects: HeidiSQL's "Server
//     version: 12.3.2-MariaDB-ubu2404-log - mariadb.org binary distribution",
//     mysqldump's "Server version 11.8.2-MariaDB-ubu2404", phpMyAdmin's
//     "11.4.2-MariaDB-ubu2404".
//   - "mysql-manual": the MySQL 5.7 manual's "MySQL Configuration and
//     Third-Party Tools" (5.7.4-m14, 5.7.32-ndb-7.5.21) and the InnoDB
//     Plugin 1.0 manual (MySQL 5.1's plugin reports 1.0.x).
func TestDetect(t *testing.T) {
	type vars = map[string]string
	tests := []struct {
		name, version, comment string
		vars                   vars
		want                   target.Flavor
	}{
		// Oracle MySQL.
		{"here: mysql 5.5.9", "5.5.9", "Source distribution", vars{"innodb_version": "1.1.5"}, target.FlavorMySQL},
		{"mysql-manual: mysql 5.1 with the InnoDB plugin", "5.1.44-log", "MySQL Community Server (GPL)", vars{"innodb_version": "1.0.6"}, target.FlavorMySQL},
		{"mysql 5.1 built-in InnoDB has no innodb_version", "5.1.37", "MySQL Community Server (GPL)", vars{}, target.FlavorMySQL},
		{"so43611296: ubuntu's mysql 5.5", "5.5.35-0ubuntu0.12.04.2-log", "(Ubuntu)", vars{}, target.FlavorMySQL},
		{"mysql 5.6", "5.6.51", "MySQL Community Server (GPL)", vars{"innodb_version": "5.6.51"}, target.FlavorMySQL},
		{"mysql-manual: mysql 5.7 milestone", "5.7.4-m14", "MySQL Community Server (GPL)", vars{"innodb_version": "5.7.4"}, target.FlavorMySQL},
		{"mysql-manual: ndb cluster", "5.7.32-ndb-7.5.21-cluster-gpl", "MySQL Cluster Community Server (GPL)", vars{"innodb_version": "5.7.32"}, target.FlavorMySQL},
		{"mysql 8.0", "8.0.36", "MySQL Community Server - GPL", vars{"innodb_version": "8.0.36"}, target.FlavorMySQL},
		{"debian's mysql 5.5", "5.5.62-0+deb8u1", "(Debian)", vars{}, target.FlavorMySQL},
		{"no variables answered", "8.0.36", "MySQL Community Server - GPL", nil, target.FlavorMySQL},

		// MariaDB, told first: it shares XtraDB's variables.
		{"here: mariadb 10.1.23 (XtraDB)", "10.1.23-MariaDB", "MariaDB Server",
			vars{"aria_block_size": "8192", "innodb_kill_idle_transaction": "0", "innodb_track_changed_pages": "OFF",
				"innodb_version": "5.6.35-80.0", "log_slow_verbosity": "", "userstat": "OFF"}, target.FlavorMariaDB},
		{"here: mariadb 10.1.23 with version and comment rewritten", "5.6.35-80.0", "Percona Server (GPL), Release 80.0",
			vars{"aria_block_size": "8192", "innodb_kill_idle_transaction": "0", "innodb_version": "5.6.35-80.0", "userstat": "OFF"}, target.FlavorMariaDB},
		{"here: mariadb 10.2.11", "10.2.11-MariaDB", "MariaDB Server",
			vars{"aria_block_size": "8192", "innodb_kill_idle_transaction": "0", "innodb_track_changed_pages": "OFF",
				"innodb_version": "5.7.20", "log_slow_verbosity": "", "userstat": "OFF"}, target.FlavorMariaDB},
		{"here: mariadb 10.11 on debian", "10.11.19-MariaDB-0+deb12u1", "Debian 12",
			vars{"aria_block_size": "8192", "log_slow_verbosity": "", "userstat": "OFF"}, target.FlavorMariaDB},
		{"mdb-xtradb: mariadb 5.5 (XtraDB)", "5.5.55-MariaDB", "MariaDB Server", vars{"innodb_version": "5.5.55-MariaDB-38.9", "aria_block_size": "8192"}, target.FlavorMariaDB},
		{"mdb-xtradb: mariadb 5.5, version rewritten", "5.5.55", "", vars{"innodb_version": "5.5.55-MariaDB-38.9"}, target.FlavorMariaDB},
		{"mdb-xtradb: mariadb 10.0.10 (XtraDB)", "10.0.10-MariaDB-log", "MariaDB Server", vars{"innodb_version": "5.6.15-63.0", "aria_block_size": "8192"}, target.FlavorMariaDB},
		{"mariadb 5.1 (Maria engine)", "5.1.44-MariaDB", "(MariaDB - http://mariadb.com/)", vars{"maria_block_size": "8192"}, target.FlavorMariaDB},
		{"mdb-dumps: mariadb 11.4", "11.4.2-MariaDB-ubu2404-log", "mariadb.org binary distribution", vars{"aria_block_size": "8192"}, target.FlavorMariaDB},
		{"mdb-dumps: mariadb 11.8, variables unanswered", "11.8.2-MariaDB-ubu2404", "mariadb.org binary distribution", nil, target.FlavorMariaDB},

		// Percona Server.
		{"so43611296: percona 5.1, comment unknown", "5.1.53-rel11.7-log", "", vars{}, target.FlavorPercona},
		{"so43611296: percona 5.5, comment unknown", "5.5.31-30.3-log", "", vars{"innodb_version": "5.5.31-30.3"}, target.FlavorPercona},
		{"ps-banner: percona 5.6", "5.6.25-73.1-log", "Percona Server (GPL), Release 73.1, Revision 07b797f",
			vars{"innodb_version": "5.6.25-73.1", "have_backup_locks": "YES", "log_slow_verbosity": "", "userstat": "OFF"}, target.FlavorPercona},
		{"ps-4097: percona 5.6 with comment and suffix rewritten", "5.6.50", "acme build", vars{"innodb_version": "5.6.50-90.0"}, target.FlavorPercona},
		{"so43611296: percona 5.6 with a build suffix", "5.6.30-76.3-56-log", "", nil, target.FlavorPercona},
		{"ps-banner: percona 5.7", "5.7.29-32-log", "Percona Server (GPL), Release 32, Revision 56bce88",
			vars{"innodb_version": "5.7.29-32", "have_backup_locks": "YES"}, target.FlavorPercona},
		{"ps-docs: percona 5.7 with version_comment and version_suffix rewritten", "5.7.29-acme", "acme build",
			vars{"innodb_version": "5.7.29-32", "have_backup_locks": "YES", "innodb_kill_idle_transaction": "0"}, target.FlavorPercona},
		{"ps-banner: percona 8.0", "8.0.22-13", "Percona Server (GPL), Release 13, Revision 6f7822f",
			vars{"innodb_version": "8.0.22-13", "have_backup_locks": "YES"}, target.FlavorPercona},
		{"ps-docs: percona 8.0, comment rewritten", "8.0.29-21", "acme build", vars{"innodb_version": "8.0.29-21"}, target.FlavorPercona},
		{"ps-docs: percona 8.0, version and comment rewritten", "8.0.29", "acme build",
			vars{"innodb_version": "8.0.29", "have_backup_locks": "YES", "expand_fast_index_creation": "OFF"}, target.FlavorPercona},
		{"ps-docs: percona 8.0, only its slow log variables", "8.0.29", "acme build",
			vars{"innodb_version": "8.0.29", "log_slow_verbosity": "", "userstat": "OFF"}, target.FlavorPercona},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect(tt.version, tt.comment, tt.vars); got != tt.want {
				t.Fatalf("Detect(%q, %q, %v) = %s, want %s", tt.version, tt.comment, tt.vars, got, tt.want)
			}
		})
	}
}

// FuzzDetect: whatever a server answers, Detect does not panic and keeps
// its order: a version or comment naming MariaDB, or Aria's variable, is
// MariaDB; else a comment naming Percona is Percona Server. names are
// variable names separated by commas, each present with value "".
func FuzzDetect(f *testing.F) {
	f.Add("10.1.23-MariaDB", "MariaDB Server", "5.6.35-80.0", "aria_block_size,innodb_kill_idle_transaction,userstat")
	f.Add("5.6.35-80.0", "Percona Server (GPL), Release 80.0", "5.6.35-80.0", "aria_block_size")
	f.Add("5.5.9", "Source distribution", "1.1.5", "")
	f.Add("8.0.29", "acme build", "8.0.29", "have_backup_locks")
	f.Add("5.5.35-0ubuntu0.12.04.2-log", "(Ubuntu)", "", "")
	f.Fuzz(func(t *testing.T, version, comment, innodb, names string) {
		vars := map[string]string{}
		if innodb != "" {
			vars["innodb_version"] = innodb
		}
		for _, n := range strings.Split(names, ",") {
			if n != "" {
				vars[n] = ""
			}
		}
		got := Detect(version, comment, vars)
		lv, lc := strings.ToLower(version), strings.ToLower(comment)
		_, aria := vars["aria_block_size"]
		switch {
		case strings.Contains(lv, "mariadb") || strings.Contains(lc, "mariadb") || aria:
			if got != target.FlavorMariaDB {
				t.Fatalf("Detect(%q, %q, %v) = %s, want mariadb", version, comment, vars, got)
			}
		case strings.Contains(lc, "percona") && !strings.Contains(strings.ToLower(innodb), "mariadb"):
			if _, maria := vars["maria_block_size"]; !maria && got != target.FlavorPercona {
				t.Fatalf("Detect(%q, %q, %v) = %s, want percona", version, comment, vars, got)
			}
		}
	})
}
