package dumpload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Dumps written the way the public samples are (Sakila, world, sakila-mv,
// employees, psql scripts), loaded into real servers: each quirk of
// issue 34's "Loading MySQL dumps".

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// boundedCtx ends a load that would hang on a lock.
func boundedCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func count(t *testing.T, tgt target.Target, db, table string) string {
	t.Helper()
	r := rowsOf(t, openDB(t, tgt, db), "SELECT COUNT(*) FROM "+table)
	if len(r) != 1 {
		t.Fatalf("count %s.%s: %q", db, table, r)
	}
	return strings.Trim(r[0], `"|`)
}

// values makes an extended INSERT of n rows (id, text) starting at from.
func values(table string, from, n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO `" + table + "` VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(" + strconv.Itoa(from+i) + ",'row " + strconv.Itoa(from+i) + "')")
	}
	b.WriteString(";\n")
	return b.String()
}

// TestMariaDBNoAutocommitDump: a mysqldump --no-autocommit dump (world's
// way: `set autocommit=0;` ... `commit;` around each table's data) keeps
// every row when its data loads over several connections; today's code
// rolled the data connections' rows back (they never saw the COMMIT).
func TestMariaDBNoAutocommitDump(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	var b strings.Builder
	b.WriteString("/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;\nSET @old_autocommit=@@autocommit;\n")
	for _, tb := range []string{"na", "nb", "nc"} {
		b.WriteString("DROP TABLE IF EXISTS `" + tb + "`;\nCREATE TABLE `" + tb + "` (id INT PRIMARY KEY, v VARCHAR(20));\n")
		b.WriteString("set autocommit=0;\n")
		for i := 0; i < 20; i++ {
			b.WriteString(values(tb, i*50+1, 50))
		}
		b.WriteString("commit;\n")
	}
	b.WriteString("SET autocommit=@old_autocommit;\n")
	dir := writeFiles(t, map[string]string{"world.sql": b.String()})
	res, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "world.sql")}, Database: "noac", Threads: 4,
		Admin: adminTarget(t, env.Target), LoadData: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range []string{"na", "nb", "nc"} {
		if n := count(t, env.Target, "noac", tb); n != "1000" {
			t.Errorf("%s: %s rows, want 1000", tb, n)
		}
	}
	for _, tb := range res.Tables {
		if tb.Sent != 1000 || tb.Loaded != 1000 || tb.Rows != 1000 {
			t.Errorf("table %+v", tb)
		}
	}
}

// TestMariaDBNoCommitRolledBack: a dump that sets autocommit=0 and never
// commits loses its rows as with the client, and the load says so: not
// complete (a RowsLostError), with a note.
func TestMariaDBNoCommitRolledBack(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	body := "CREATE TABLE nocommit (id INT PRIMARY KEY, v VARCHAR(20));\nSET autocommit=0;\n" + values("nocommit", 1, 10)
	dir := writeFiles(t, map[string]string{"d.sql": body})
	res, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "d.sql")}, Database: "nocommit", Threads: 2,
		Admin: adminTarget(t, env.Target), DropExisting: true})
	var lost *RowsLostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "nocommit: 10 rows sent, 0 loaded") {
		t.Fatalf("err = %v, want rows lost", err)
	}
	if n := count(t, env.Target, "nocommit", "nocommit"); n != "0" {
		t.Errorf("%s rows, want 0 (rolled back)", n)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "without COMMIT") {
		t.Errorf("notes %q", res.Notes)
	}
}

// sakilaSchema is Sakila's way: FOREIGN_KEY_CHECKS=0, DROP SCHEMA /
// CREATE SCHEMA / USE, inline foreign keys, and a trigger that fills
// another table from film, created before the data.
const sakilaSchema = `SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0;
SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0;
DROP SCHEMA IF EXISTS minisakila;
CREATE SCHEMA minisakila;
USE minisakila;
CREATE TABLE language (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE film (id INT PRIMARY KEY, title VARCHAR(40), language_id INT NOT NULL,
  KEY idx_title (title), CONSTRAINT fk_film_language FOREIGN KEY (language_id) REFERENCES language (id)) ENGINE=InnoDB;
CREATE TABLE film_text (film_id INT PRIMARY KEY, title VARCHAR(40)) ENGINE=InnoDB;
DELIMITER ;;
CREATE TRIGGER ins_film AFTER INSERT ON film FOR EACH ROW BEGIN
    INSERT INTO film_text (film_id, title) VALUES (new.id, new.title);
  END;;
DELIMITER ;
SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS;
`

// sakilaData: autocommit=0 blocks per table, LOCK TABLES and DISABLE
// KEYS inside them (sakila-mv's way), the child table before its parent.
func sakilaData() string {
	var b strings.Builder
	b.WriteString("SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0;\nSET @old_autocommit=@@autocommit;\nUSE minisakila;\n")
	b.WriteString("SET AUTOCOMMIT=0;\nLOCK TABLES `film` WRITE;\n/*!40000 ALTER TABLE `film` DISABLE KEYS */;\n")
	for i := 0; i < 5; i++ {
		b.WriteString(strings.Replace(values("film", i*100+1, 100), ")", ",1)", -1))
	}
	b.WriteString("/*!40000 ALTER TABLE `film` ENABLE KEYS */;\nUNLOCK TABLES;\nCOMMIT;\n")
	// The same table again: its DISABLE KEYS needs the metadata lock the
	// first block's connection holds until that block commits.
	b.WriteString("SET AUTOCOMMIT=0;\nLOCK TABLES `film` WRITE;\n/*!40000 ALTER TABLE `film` DISABLE KEYS */;\n")
	for i := 5; i < 10; i++ {
		b.WriteString(strings.Replace(values("film", i*100+1, 100), ")", ",1)", -1))
	}
	b.WriteString("/*!40000 ALTER TABLE `film` ENABLE KEYS */;\nUNLOCK TABLES;\nCOMMIT;\n")
	b.WriteString("SET AUTOCOMMIT=0;\nLOCK TABLES `language` WRITE;\n/*!40000 ALTER TABLE `language` DISABLE KEYS */;\n" + values("language", 1, 6) +
		"/*!40000 ALTER TABLE `language` ENABLE KEYS */;\nUNLOCK TABLES;\nCOMMIT;\n")
	b.WriteString("SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS;\nSET autocommit=@old_autocommit;\n")
	return b.String()
}

// TestMariaDBSakilaWay: the dump's database statements map onto the
// target (its name kept and created by dbarena, its DROP never run), its
// transactions commit on the connections that hold them (no lock waits,
// no hang on DISABLE KEYS), the trigger created before the data fills
// film_text, and every row arrives with the default options, every time.
func TestMariaDBSakilaWay(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	dir := writeFiles(t, map[string]string{"schema.sql": sakilaSchema, "data.sql": sakilaData()})
	files := []string{filepath.Join(dir, "schema.sql"), filepath.Join(dir, "data.sql")}
	admin := adminTarget(t, env.Target)
	// A database of that name with a table the dump does not know: a
	// load never drops it.
	if _, err := openDB(t, *admin, "").Exec("CREATE DATABASE IF NOT EXISTS minisakila"); err != nil {
		t.Fatal(err)
	}
	if _, err := openDB(t, *admin, "").Exec("CREATE TABLE IF NOT EXISTS minisakila.keepme (a INT)"); err != nil {
		t.Fatal(err)
	}
	var who string
	if err := env.DB.QueryRow("SELECT CURRENT_USER()").Scan(&who); err != nil {
		t.Fatal(err)
	}
	user, host, _ := strings.Cut(who, "@")
	if _, err := openDB(t, *admin, "").Exec("GRANT ALL ON minisakila.* TO " + mysqlString(user) + "@" + mysqlString(host)); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 3; run++ {
		o := DefaultOptions()
		o.Files, o.Admin, o.DropExisting = files, admin, true
		if run == 0 {
			o.DropExisting = false
			dropTables(t, *admin, "minisakila", "film_text", "film", "language")
		}
		res, err := Load(boundedCtx(t), env, o)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for table, want := range map[string]string{"film": "1000", "language": "6", "film_text": "1000"} {
			if n := count(t, env.Target, "minisakila", table); n != want {
				t.Errorf("run %d: %s has %s rows, want %s", run, table, n, want)
			}
		}
		notes := strings.Join(res.Notes, "\n")
		if run == 0 {
			if !strings.Contains(notes, "DROP DATABASE \"minisakila\" not run") {
				t.Errorf("notes %q", res.Notes)
			}
			if n := count(t, env.Target, "minisakila", "keepme"); n != "0" {
				t.Errorf("keepme: %s", n)
			}
		} else if !strings.Contains(notes, "ran DROP DATABASE IF EXISTS `minisakila`") {
			t.Errorf("run %d (--drop-existing): notes %q", run, res.Notes)
		}
		if len(res.Databases) != 1 || res.Databases[0] != "minisakila" {
			t.Errorf("databases %q", res.Databases)
		}
	}
}

func dropTables(t *testing.T, admin target.Target, db string, tables ...string) {
	t.Helper()
	h := openDB(t, admin, db)
	h.Exec("SET FOREIGN_KEY_CHECKS=0")
	for _, tb := range tables {
		if _, err := h.Exec("DROP TABLE IF EXISTS " + tb); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMariaDBDatabaseFlagKeepsTarget: with --database NAME the dump's
// DROP SCHEMA / CREATE SCHEMA / USE go to NAME, and the DROP does not
// drop it (nor the dump's own database).
func TestMariaDBDatabaseFlagKeepsTarget(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	body := "DROP SCHEMA IF EXISTS other;\nCREATE SCHEMA other;\nUSE other;\nCREATE TABLE t1 (id INT PRIMARY KEY, v VARCHAR(20));\n" + values("t1", 1, 5)
	dir := writeFiles(t, map[string]string{"d.sql": body})
	admin := adminTarget(t, env.Target)
	o := Options{Files: []string{filepath.Join(dir, "d.sql")}, Database: "renamed", Threads: 2, Admin: admin}
	if _, err := Load(boundedCtx(t), env, o); err != nil {
		t.Fatal(err)
	}
	if _, err := openDB(t, env.Target, "renamed").Exec("CREATE TABLE IF NOT EXISTS mine (a INT)"); err != nil {
		t.Fatal(err)
	}
	o.DropExisting = true
	res, err := Load(boundedCtx(t), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, env.Target, "renamed", "t1"); n != "5" {
		t.Errorf("t1: %s rows", n)
	}
	if n := count(t, env.Target, "renamed", "mine"); n != "0" {
		t.Errorf("mine: %s (dropped?)", n)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "not run") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestMariaDBIncludes: mysql's source and \. commands are followed
// relative to the dump with FollowIncludes, and refused with file and
// line without it; a file outside the dump's directory is refused.
func TestMariaDBIncludes(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	dir := writeFiles(t, map[string]string{
		"main.sql":         "CREATE TABLE dept (id INT PRIMARY KEY, v VARCHAR(20));\nsource load_dept.sql ;\n\\. sub/more.sql\nSELECT 1;\n",
		"load_dept.sql":    values("dept", 1, 3),
		"sub/more.sql":     values("dept", 4, 2),
		"escape.sql":       "source ../outside.sql\n",
		"loop.sql":         "source loop.sql\n",
		"../outside.sql":   "SELECT 1;\n",
		"sub/harmless.sql": "",
	})
	admin := adminTarget(t, env.Target)
	main := filepath.Join(dir, "main.sql")
	_, err := Load(boundedCtx(t), env, Options{Files: []string{main}, Database: "incl", Threads: 2, Admin: admin, DropExisting: true})
	if !IsBadInput(err) || !strings.Contains(err.Error(), main+":2") || !strings.Contains(err.Error(), "--follow-includes") {
		t.Fatalf("without FollowIncludes: %v", err)
	}
	res, err := Load(boundedCtx(t), env, Options{Files: []string{main}, Database: "incl", Threads: 2, Admin: admin, DropExisting: true, FollowIncludes: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, env.Target, "incl", "dept"); n != "5" || res.Rows != 5 {
		t.Errorf("dept: %s rows, result %d", n, res.Rows)
	}
	for _, f := range []string{"escape.sql", "loop.sql"} {
		_, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, f)}, Database: "incl", Admin: admin, FollowIncludes: true})
		if !IsBadInput(err) {
			t.Errorf("%s: %v, want bad input", f, err)
		}
	}
}

// TestMariaDBScriptInOrder: a plain script with foreign keys checked
// (no FOREIGN_KEY_CHECKS=0) loads in order with the default options,
// and with --format mysql on one connection.
func TestMariaDBScriptInOrder(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	var b strings.Builder
	b.WriteString("CREATE TABLE parent (id INT PRIMARY KEY, v VARCHAR(20));\nCREATE TABLE child (id INT PRIMARY KEY, v VARCHAR(20), FOREIGN KEY (id) REFERENCES parent (id));\n")
	for i := 0; i < 20; i++ {
		b.WriteString(values("parent", i*10+1, 10))
		b.WriteString(values("child", i*10+1, 10))
	}
	b.WriteString("INSERT INTO parent (id, v) SELECT id + 1000, v FROM child;\n")
	dir := writeFiles(t, map[string]string{"s.sql": b.String()})
	admin := adminTarget(t, env.Target)
	for _, format := range []string{"", "mysql"} {
		res, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "s.sql")}, Database: "script_" + format + "x",
			Threads: 4, Admin: admin, Format: format, DropExisting: true, DeferIndexes: true})
		if err != nil {
			t.Fatalf("format %q: %v", format, err)
		}
		if n := count(t, env.Target, "script_"+format+"x", "parent"); n != "400" {
			t.Errorf("format %q: parent %s rows", format, n)
		}
		notes := strings.Join(res.Notes, "\n")
		if format == "" && !strings.Contains(notes, "dump order on one connection") || format == "mysql" && !strings.Contains(notes, "plain mysql script") {
			t.Errorf("format %q: notes %q", format, res.Notes)
		}
	}
}

// TestMariaDBErrorsListed: the statement that stops a load is counted
// and listed; with --continue-on-error a lost row makes the load fail.
func TestMariaDBErrorsListed(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	body := "CREATE TABLE el (id INT PRIMARY KEY, v VARCHAR(20));\n" + values("el", 1, 3) + values("el", 3, 2) + values("el", 10, 1)
	dir := writeFiles(t, map[string]string{"e.sql": body})
	admin := adminTarget(t, env.Target)
	o := Options{Files: []string{filepath.Join(dir, "e.sql")}, Database: "errlist", Threads: 1, Admin: admin, DropExisting: true}
	res, err := Load(boundedCtx(t), env, o)
	if err == nil || res.ErrorCount != 1 || len(res.Errors) != 1 || res.Errors[0].Line != 3 || res.Errors[0].Code != "1062" {
		t.Fatalf("err %v, result errors %d %+v", err, res.ErrorCount, res.Errors)
	}
	o.ContinueOnError = true
	res, err = Load(boundedCtx(t), env, o)
	var lost *RowsLostError
	if !errors.As(err, &lost) || res.ErrorCount != 1 || !strings.Contains(err.Error(), "el: 6 rows sent, 4 loaded") {
		t.Fatalf("continue-on-error: err %v, errors %d", err, res.ErrorCount)
	}
	if run := res.Summary(env.Target, err); run.Status == "complete" {
		t.Error("a load that lost rows is stored complete")
	}
}

// TestPostgresScriptAndNames: a psql script with \i, inline foreign keys
// and unqualified names loads with --format psql; a pg_dump-style file
// naming a table qualified and unqualified lists it once.
func TestPostgresScriptAndNames(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	dir := writeFiles(t, map[string]string{
		"main.sql": "CREATE TABLE kinds (id int PRIMARY KEY);\nCREATE TABLE things (id int PRIMARY KEY, kind int REFERENCES kinds);\n\\i data.sql\n",
		"data.sql": "INSERT INTO kinds VALUES (1),(2);\nINSERT INTO things VALUES (1,1),(2,2),(3,1);\nBEGIN;\nINSERT INTO kinds VALUES (3);\nCOMMIT;\n",
		"pgdump.sql": "-- PostgreSQL database dump\nSET standard_conforming_strings = on;\nCREATE TABLE public.actor (id int);\n" +
			"COPY actor (id) FROM stdin;\n1\n2\n\\.\nINSERT INTO public.actor VALUES (3);\n",
	})
	admin := adminTarget(t, env.Target)
	main := filepath.Join(dir, "main.sql")
	if _, err := dump.OpenAs([]string{main}, ""); err != nil {
		t.Fatal(err)
	}
	var res *Result
	var err error
	// Named, and told by its \i.
	for _, format := range []string{"psql", "auto"} {
		res, err = Load(boundedCtx(t), env, Options{Files: []string{main}, Database: "psqlscript", Threads: 4, Admin: admin,
			Format: format, FollowIncludes: true, DropExisting: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, env.Target, "psqlscript", "things"); n != "3" {
			t.Errorf("things: %s", n)
		}
		if n := count(t, env.Target, "psqlscript", "kinds"); n != "3" {
			t.Errorf("kinds: %s", n)
		}
		if res.Threads != 1 || res.Format != "psql" {
			t.Errorf("format %s: threads %d, format %s", format, res.Threads, res.Format)
		}
	}
	// Told apart as PostgreSQL by its header, with inline foreign keys:
	// the data loads in order (in parallel, children could come first).
	var fk strings.Builder
	fk.WriteString("-- PostgreSQL database dump\nCREATE TABLE p (id int PRIMARY KEY);\nCREATE TABLE c (id int PRIMARY KEY, p int REFERENCES p);\n")
	for i := 1; i <= 40; i++ {
		fk.WriteString("INSERT INTO p VALUES (" + strconv.Itoa(i) + ");\nINSERT INTO c VALUES (" + strconv.Itoa(i) + ", " + strconv.Itoa(i) + ");\n")
	}
	fkFile := filepath.Join(dir, "fk.sql")
	if err := os.WriteFile(fkFile, []byte(fk.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Load(boundedCtx(t), env, Options{Files: []string{fkFile}, Database: "pgfk", Threads: 4, Admin: admin, DropExisting: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, env.Target, "pgfk", "c"); n != "40" || !strings.Contains(strings.Join(res.Notes, "\n"), "dump order on one connection") {
		t.Errorf("c: %s rows, notes %q", n, res.Notes)
	}
	res, err = Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "pgdump.sql")}, Database: "pgnames", Threads: 2, Admin: admin, DropExisting: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tables) != 1 || res.Tables[0].Name != "actor" || res.Tables[0].Sent != 3 || res.Tables[0].Rows != 3 {
		t.Errorf("tables %+v", res.Tables)
	}
}

// TestMariaDBDumpRollbackAndBegin: the dump's ROLLBACK undoes its
// transaction's rows (not counted as sent or loaded, not a loss), an
// explicit START TRANSACTION ... COMMIT runs in order and keeps its rows.
func TestMariaDBDumpRollbackAndBegin(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	body := "CREATE TABLE rb (id INT PRIMARY KEY, v VARCHAR(20));\nSET autocommit=0;\n" + values("rb", 1, 10) + "ROLLBACK;\n" +
		values("rb", 11, 5) + "COMMIT;\nSET autocommit=1;\nSTART TRANSACTION;\n" + values("rb", 21, 3) + "COMMIT;\n"
	dir := writeFiles(t, map[string]string{"rb.sql": body})
	res, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "rb.sql")}, Database: "rollback", Threads: 3,
		Admin: adminTarget(t, env.Target), DropExisting: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, env.Target, "rollback", "rb"); n != "8" {
		t.Errorf("rb: %s rows, want 8", n)
	}
	if len(res.Tables) != 1 || res.Tables[0].Sent != 8 || res.Tables[0].Loaded != 8 {
		t.Errorf("tables %+v", res.Tables)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "ROLLBACK undid 10 rows") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestMariaDBAdminStatementsSkipped: a dump's server administration
// statements (the employees sample's `flush /*!50503 binary */ logs`,
// which needs RELOAD) are skipped and counted, and the data loads.
func TestMariaDBAdminStatementsSkipped(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	body := "flush /*!50503 binary */ logs;\nCREATE TABLE flushed (id INT PRIMARY KEY, v VARCHAR(20));\n" + values("flushed", 1, 10) + "FLUSH TABLES;\n"
	dir := writeFiles(t, map[string]string{"d.sql": body})
	res, err := Load(boundedCtx(t), env, Options{Files: []string{filepath.Join(dir, "d.sql")}, Database: "flushed", Threads: 2,
		Admin: adminTarget(t, env.Target), DropExisting: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, env.Target, "flushed", "flushed"); n != "10" {
		t.Errorf("%s rows, want 10", n)
	}
	if res.AdminStatementsSkipped != 2 || !strings.Contains(strings.Join(res.Notes, "\n"), "d.sql:1 the first: FLUSH") {
		t.Errorf("skipped %d, notes %q", res.AdminStatementsSkipped, res.Notes)
	}
}
