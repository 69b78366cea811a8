package dumpload

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// qualifiedDump is a mysqldump-style dump of database db whose trigger
// names its table, itself and the table it writes with the database
// (trigger is the CREATE TRIGGER, "DB" standing for the database): the
// audit table holds 2 rows of its own, item 2000 rows sent over many
// statements (so that they are still loading when the trigger comes).
func qualifiedDump(db, trigger string) string {
	var b strings.Builder
	b.WriteString("CREATE DATABASE /*!32312 IF NOT EXISTS*/ `" + db + "`;\nUSE `" + db + "`;\n")
	b.WriteString("DROP TABLE IF EXISTS `audit`;\nCREATE TABLE `audit` (`id` INT AUTO_INCREMENT PRIMARY KEY, `msg` VARCHAR(40)) ENGINE=InnoDB;\n")
	b.WriteString("INSERT INTO `audit` VALUES (1,'old 1'),(2,'old 2');\n")
	b.WriteString("DROP TABLE IF EXISTS `item`;\nCREATE TABLE `item` (`id` INT PRIMARY KEY, `v` VARCHAR(20)) ENGINE=InnoDB;\n")
	for i := 0; i < 100; i++ {
		b.WriteString(values("item", i*20+1, 20))
	}
	b.WriteString(strings.ReplaceAll(trigger, "DB", db) + "\n")
	return b.String()
}

var qualifiedTriggers = map[string]string{
	"plain": "CREATE TRIGGER DB.item_ai AFTER INSERT ON DB.item FOR EACH ROW INSERT INTO DB.audit (msg) VALUES (CONCAT('new ', NEW.id));",
	"versioned": "DELIMITER ;;\n/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER `DB`.`item_ai` AFTER INSERT ON `DB`.`item` FOR EACH ROW " +
		"INSERT INTO `DB`.`audit` (msg) VALUES (CONCAT('new ', NEW.id)) */;;\nDELIMITER ;",
}

// TestMariaDBQualifiedTrigger: a trigger written with database-qualified
// names is created after its table's rows, as an unqualified one is: the
// audit table keeps its own 2 rows (the trigger firing during the load
// gave it 2000 more); with --database the qualified names go to the
// target database (the load failed with "TRIGGER command denied"), and
// a name in another database is refused with file and line.
func TestMariaDBQualifiedTrigger(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	admin := adminTarget(t, env.Target)
	var who string
	if err := env.DB.QueryRow("SELECT CURRENT_USER()").Scan(&who); err != nil {
		t.Fatal(err)
	}
	user, host, _ := strings.Cut(who, "@")
	for _, form := range []string{"plain", "versioned"} {
		t.Run(form, func(t *testing.T) {
			src := "shopq_" + form
			dir := writeFiles(t, map[string]string{"shop.sql": qualifiedDump(src, qualifiedTriggers[form])})
			files := []string{filepath.Join(dir, "shop.sql")}
			// The dump's own database.
			if _, err := Load(boundedCtx(t), env, Options{Files: files, Threads: 4, Admin: admin, DropExisting: true}); err != nil {
				t.Fatal(err)
			}
			if n := count(t, env.Target, src, "item"); n != "2000" {
				t.Errorf("item: %s rows", n)
			}
			if n := count(t, env.Target, src, "audit"); n != "2" {
				t.Errorf("audit: %s rows, want 2 (the trigger fired during the load)", n)
			}
			// Into another database: everything goes there.
			dst := "qdst_" + form
			if _, err := Load(boundedCtx(t), env, Options{Files: files, Database: dst, Threads: 4, Admin: admin, DropExisting: true}); err != nil {
				t.Fatalf("--database %s: %v", dst, err)
			}
			if n := count(t, env.Target, dst, "item"); n != "2000" {
				t.Errorf("%s.item: %s rows", dst, n)
			}
			if n := count(t, env.Target, dst, "audit"); n != "2" {
				t.Errorf("%s.audit: %s rows, want 2", dst, n)
			}
			h := openDB(t, env.Target, dst)
			if _, err := h.Exec("INSERT INTO item VALUES (5000, 'after')"); err != nil {
				t.Fatal(err)
			}
			if n := count(t, env.Target, dst, "audit"); n != "3" {
				t.Errorf("%s.audit after an insert: %s rows, want 3 (the trigger is in %s)", dst, n, dst)
			}
			if n := count(t, env.Target, src, "audit"); n != "2" {
				t.Errorf("%s.audit: %s rows (the trigger of %s wrote into the source)", src, n, dst)
			}
		})
	}
	t.Run("foreign", func(t *testing.T) {
		// A dump whose trigger writes into a database it neither
		// creates nor uses, which the loading account may write: with
		// --database the load stops at that line, and nothing runs there.
		if _, err := openDB(t, *admin, "").Exec("CREATE DATABASE IF NOT EXISTS qforeign"); err != nil {
			t.Fatal(err)
		}
		if _, err := openDB(t, *admin, "").Exec("GRANT ALL ON qforeign.* TO " + mysqlString(user) + "@" + mysqlString(host)); err != nil {
			t.Fatal(err)
		}
		body := qualifiedDump("shopf", "CREATE TRIGGER item_ai AFTER INSERT ON item FOR EACH ROW INSERT INTO `qforeign`.`audit` (msg) VALUES ('x');")
		dir := writeFiles(t, map[string]string{"shop.sql": body})
		line := strings.Count(body, "\n")
		_, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "shop.sql")}, Database: "qdst_f", Threads: 2, Admin: admin, DropExisting: true})
		var bi *dump.BadInputError
		want := "shop.sql:" + strconv.Itoa(line) + ": the statement names `qforeign`.`audit`" + `, in database "qforeign", which is not the dump's (its own: "shopf")`
		if !errors.As(err, &bi) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		var n int
		if err := openDB(t, *admin, "").QueryRow("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA IN ('qdst_f', 'qforeign')").Scan(&n); err != nil || n != 0 {
			t.Errorf("triggers created: %d, %v", n, err)
		}
	})
}

// TestMariaDBDropExistingFirstLoad: --drop-existing on a dump that drops
// and creates its database, loaded for the first time (the loading
// account has no rights on that database yet), loads: the DROP is not
// run (nothing there is the load's), the sandbox admin creates the
// database. It failed with "Access denied ... to database".
func TestMariaDBDropExistingFirstLoad(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	admin := adminTarget(t, env.Target)
	if _, err := openDB(t, *admin, "").Exec("DROP DATABASE IF EXISTS dfirst"); err != nil {
		t.Fatal(err)
	}
	body := "DROP DATABASE IF EXISTS `dfirst`;\nCREATE DATABASE `dfirst`;\nUSE `dfirst`;\nCREATE TABLE t1 (id INT PRIMARY KEY, v VARCHAR(20));\n" + values("t1", 1, 5)
	dir := writeFiles(t, map[string]string{"d.sql": body})
	res, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "d.sql")}, DropExisting: true, Threads: 2, Admin: admin})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, env.Target, "dfirst", "t1"); n != "5" {
		t.Errorf("t1: %s rows", n)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "d.sql:1: DROP DATABASE IF EXISTS `dfirst` not run: the loading account has no rights on that database") {
		t.Errorf("notes %q", res.Notes)
	}
}
