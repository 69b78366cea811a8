package dump

import (
	"errors"
	"strings"
	"testing"
)

var mariadb1011 = Server{MariaDB: true, Version: 101106}

// TestClassifyVersionComments: statements are read as the server reads
// them; where an account or CREATE DATABASE reading depends on version
// comments, the statement is refused.
func TestClassifyVersionComments(t *testing.T) {
	for _, c := range []struct {
		name    string
		sql     string
		syn     Syntax
		srv     Server
		kind    Kind
		account bool
		db      string
		refused bool
	}{
		{"mariadb runs its own comment", "/*M!100100 SET NAMES utf8mb4 */", MySQL, mariadb1011, Session, false, "", false},
		{"mysql skips a mariadb comment", "/*M!100100 SET NAMES utf8mb4 */", MySQL, Server{Version: 80036}, Skip, false, "", false},
		{"future version skipped", "/*!999999 SET NAMES utf8mb4 */", MySQL, mariadb1011, Skip, false, "", false},
		{"mariadb-dump sandbox line", "/*M!999999\\- enable the sandbox mode */ \n-- MariaDB dump\n/*!40101 SET @OLD=@@X */", MySQL, mariadb1011, Session, false, "", false},
		{"database hidden in a skipped comment", "CREATE /*M!999999 DATABASE sbtest */ DEFINER=root@localhost PROCEDURE sbtest.esc() SQL SECURITY DEFINER GRANT ALL PRIVILEGES ON *.* TO 'dbarena'@'127.0.0.1' WITH GRANT OPTION", MySQL, mariadb1011, PostData, false, "", true},
		{"grant hidden behind a run comment", "/*!40101 GRANT */ ALL ON *.* TO x", MySQL, mariadb1011, Skip, true, "", true},
		{"database in a plain comment", "CREATE /* DATABASE x */ USER evil IDENTIFIED BY 'pw'", MySQL, mariadb1011, Skip, true, "", false},
		{"mysql reserved database", "CREATE DATABASE IF NOT EXISTS mysql", MySQL, mariadb1011, Database, false, "mysql", false},
		{"postgres has no version comments", "CREATE /*! DATABASE x */ ROLE evil SUPERUSER LOGIN PASSWORD 'evilpw'", Postgres, Server{}, Skip, true, "", false},
		{"postgres comments nest", "/* /* */ SELECT 1 */ ALTER ROLE dbarena PASSWORD 'x'", Postgres, Server{}, Skip, true, "", false},
		{"postgres create database", `CREATE DATABASE "shop" WITH TEMPLATE = template0 ENCODING = 'UTF8'`, Postgres, Server{}, Database, false, "shop", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := Classify(Raw{SQL: c.sql, Line: 7}, c.syn, "d.sql", c.srv)
			if c.refused {
				var bi *BadInputError
				if !errors.As(err, &bi) || !strings.HasPrefix(err.Error(), "d.sql:7: ") {
					t.Fatalf("want a refusal naming d.sql:7, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Kind != c.kind || st.Account != c.account || st.Name != c.db {
				t.Errorf("got %s account=%v name %q; want %s account=%v name %q", st.Kind, st.Account, st.Name, c.kind, c.account, c.db)
			}
		})
	}
}

// TestClassifyAccount: account and privilege statements are Skip and
// marked Account, whatever their case or modifiers.
func TestClassifyAccount(t *testing.T) {
	for _, c := range []struct {
		sql     string
		syn     Syntax
		account bool
	}{
		{"GRANT ALL ON *.* TO 'u'@'%'", MySQL, true},
		{"revoke select on t from u", MySQL, true},
		{"CREATE USER 'u'@'%' IDENTIFIED BY 'secret'", MySQL, true},
		{"CREATE OR REPLACE USER u", MySQL, true},
		{"ALTER USER dbarena IDENTIFIED BY 'x'", MySQL, true},
		{"DROP USER u", MySQL, true},
		{"RENAME USER a TO b", MySQL, true},
		{"CREATE ROLE r", MySQL, true},
		{"SET PASSWORD = PASSWORD('x')", MySQL, true},
		{"SET PASSWORD FOR 'dbarena'@'127.0.0.1' = 'x'", MySQL, true},
		{"SET ROLE r", MySQL, true},
		{"SET DEFAULT ROLE r FOR u", MySQL, true},
		{"SET STATEMENT max_statement_time=1 FOR SET PASSWORD = PASSWORD('x')", MySQL, true},
		{"/*!40101 SET NAMES utf8 */", MySQL, false},
		{"CREATE TABLE user (a int)", MySQL, false},
		{"CREATE TABLE `role` (a int)", MySQL, false},
		{"ALTER ROLE dbarena PASSWORD 'x'", Postgres, true},
		{"CREATE ROLE evil SUPERUSER", Postgres, true},
		{"DROP ROLE IF EXISTS x", Postgres, true},
		{"SET ROLE postgres", Postgres, true},
		{"SET SESSION AUTHORIZATION postgres", Postgres, true},
		{"RESET ROLE", Postgres, true},
		{"ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO x", Postgres, true},
		{"GRANT ALL ON SCHEMA public TO bob", Postgres, true},
		{"SET search_path = public", Postgres, false},
		{"ALTER TABLE public.t OWNER TO bob", Postgres, false},
	} {
		st, err := Classify(Raw{SQL: c.sql, Line: 1}, c.syn, "f", mariadb1011)
		if err != nil {
			t.Errorf("%q: %v", c.sql, err)
			continue
		}
		if st.Account != c.account || (c.account && st.Kind != Skip) {
			t.Errorf("%q: %s account=%v, want account=%v", c.sql, st.Kind, st.Account, c.account)
		}
	}
}

// TestClassifyAdmin: server administration statements are Skip and
// marked Admin; transactions and tables named alike are not.
func TestClassifyAdmin(t *testing.T) {
	for _, c := range []struct {
		sql   string
		admin bool
	}{
		{"flush /*!50503 binary */ logs", true},
		{"FLUSH TABLES", true},
		{"RESET MASTER", true},
		{"PURGE BINARY LOGS TO 'mysql-bin.000003'", true},
		{"CHANGE MASTER TO MASTER_HOST='h'", true},
		{"STOP SLAVE", true},
		{"START REPLICA", true},
		{"INSTALL PLUGIN x SONAME 'x.so'", true},
		{"START TRANSACTION", false},
		{"CHANGE_LOG", false},
		{"CREATE TABLE flush (a int)", false},
		{"INSERT INTO reset VALUES (1)", false},
	} {
		st, err := Classify(Raw{SQL: c.sql, Line: 1}, MySQL, "f", mariadb1011)
		if err != nil {
			t.Fatalf("%q: %v", c.sql, err)
		}
		if st.Admin != c.admin || (c.admin && st.Kind != Skip) {
			t.Errorf("%q: %s admin=%v, want admin=%v", c.sql, st.Kind, st.Admin, c.admin)
		}
	}
}

func TestDatabaseOptions(t *testing.T) {
	for _, c := range []struct {
		sql  string
		syn  Syntax
		want map[string]string
	}{
		{"CREATE DATABASE /*!32312 IF NOT EXISTS*/ `w` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */", MySQL,
			map[string]string{"CHARSET": "utf8mb4", "COLLATE": "utf8mb4_general_ci"}},
		{"CREATE DATABASE w CHARSET = 'latin1'", MySQL, map[string]string{"CHARSET": "latin1"}},
		{"CREATE DATABASE w", MySQL, nil},
		{"CREATE DATABASE shop WITH TEMPLATE = template0 ENCODING = 'UTF8' LOCALE = 'en_US.utf8'", Postgres,
			map[string]string{"ENCODING": "UTF8", "LOCALE": "en_US.utf8"}},
	} {
		st, err := Classify(Raw{SQL: c.sql, Line: 1}, c.syn, "f", mariadb1011)
		if err != nil || st.Kind != Database || len(st.DatabaseOptions) != len(c.want) {
			t.Errorf("%q: %v %s %v", c.sql, err, st.Kind, st.DatabaseOptions)
			continue
		}
		for k, v := range c.want {
			if st.DatabaseOptions[k] != v {
				t.Errorf("%q: %s = %q, want %q", c.sql, k, st.DatabaseOptions[k], v)
			}
		}
	}
}

// TestClassifyRealDumps: the statements of issue 34's public dumps.
func TestClassifyRealDumps(t *testing.T) {
	for _, c := range []struct {
		sql       string
		syn       Syntax
		kind      Kind
		name, op  string
		table     string
		fk, trig  bool
		include   string
		meta, raw bool
	}{
		{sql: "DROP SCHEMA IF EXISTS sakila", kind: DropDatabase, name: "sakila"},
		{sql: "/*!40000 DROP DATABASE IF EXISTS `world`*/", kind: DropDatabase, name: "world"},
		{sql: "DROP DATABASE IF EXISTS \"x\"", syn: Postgres, kind: DropDatabase, name: "x"},
		{sql: "DROP SCHEMA IF EXISTS app CASCADE", syn: Postgres, kind: Schema},
		{sql: "commit", kind: Txn, op: "commit"},
		{sql: "COMMIT WORK", kind: Txn, op: "commit"},
		{sql: "START TRANSACTION", kind: Txn, op: "begin"},
		{sql: "BEGIN", kind: Txn, op: "begin"},
		{sql: "BEGIN NOT ATOMIC SELECT 1; END", kind: Schema},
		{sql: "ROLLBACK TO SAVEPOINT a", kind: Schema},
		{sql: "END", syn: Postgres, kind: Txn, op: "commit"},
		{sql: "ABORT", syn: Postgres, kind: Txn, op: "rollback"},
		{sql: "CREATE DEFINER=`root`@`localhost` TRIGGER `ins_film` AFTER INSERT ON `film` FOR EACH ROW BEGIN INSERT INTO film_text VALUES (new.film_id); END", kind: Schema, table: "film", trig: true},
		{sql: "CREATE TRIGGER t BEFORE INSERT ON docs FOR EACH ROW EXECUTE FUNCTION f()", syn: Postgres, kind: PostData},
		{sql: "CREATE TABLE film (id INT, language_id INT, CONSTRAINT fk FOREIGN KEY (language_id) REFERENCES language (id))", kind: Schema, table: "film", fk: true},
		{sql: "CREATE TABLE t (note TEXT DEFAULT 'REFERENCES')", kind: Schema, table: "t"},
		{sql: "CREATE TABLE things (id int, kind int REFERENCES kinds)", syn: Postgres, kind: Schema, table: "things", fk: true},
		{sql: "source load_dept.sql", kind: Skip, include: "load_dept.sql", raw: true},
		{sql: ". sub/x.sql", kind: Skip, include: "sub/x.sql", raw: true},
		{sql: "ir 'a b.sql'", syn: Postgres, kind: Skip, include: "'a b.sql'", raw: true},
		{sql: "i", syn: Postgres, kind: Schema, meta: true, raw: true},
	} {
		st, err := Classify(Raw{SQL: c.sql, Line: 1, Meta: c.raw}, c.syn, "f.sql", Server{})
		if err != nil {
			t.Errorf("%q: %v", c.sql, err)
			continue
		}
		if st.Kind != c.kind || st.Name != c.name || st.TxnOp != c.op || st.Table != c.table || st.ForeignKey != c.fk || st.Trigger != c.trig || st.Include != c.include || st.Meta != c.meta {
			t.Errorf("%q: kind %v name %q op %q table %q fk %v trigger %v include %q meta %v", c.sql, st.Kind, st.Name, st.TxnOp, st.Table, st.ForeignKey, st.Trigger, st.Include, st.Meta)
		}
	}
}
