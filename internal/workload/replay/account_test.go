package replay

import "testing"

func TestAccountKind(t *testing.T) {
	for _, c := range []struct {
		q    string
		pg   bool
		want string
	}{
		{"SELECT 1", false, ""},
		{"SELECT user, password FROM users", false, ""},
		{"UPDATE users SET password = 'x' WHERE id = 1", false, ""},
		{"SET PASSWORD = PASSWORD('x')", false, "SET PASSWORD"},
		{"set password for 'a'@'%' = '***'", false, "SET PASSWORD"},
		{"/*!50000 SET PASSWORD = PASSWORD('y') */", false, "SET PASSWORD"},
		{"/*M!100000 GRANT ALL ON *.* TO x */", false, "GRANT"},
		{"/* SET PASSWORD = 'x' */ SELECT 1", false, ""},
		{"-- GRANT\nSELECT 1", false, ""},
		{"  GRANT SELECT ON t TO u", false, "GRANT"},
		{"REVOKE ALL ON *.* FROM u", false, "REVOKE"},
		{"CREATE USER u IDENTIFIED BY 'p'", false, "CREATE USER"},
		{"CREATE OR REPLACE USER u", false, "CREATE USER"},
		{"ALTER USER CURRENT_USER() IDENTIFIED BY 'z'", false, "ALTER USER"},
		{"DROP ROLE r", true, "DROP ROLE"},
		{"RENAME USER a TO b", false, "RENAME USER"},
		{"ALTER ROLE dbarena PASSWORD 'x'", true, "ALTER ROLE"},
		{"SELECT 1; ALTER ROLE CURRENT_USER PASSWORD '***'", true, "ALTER ROLE"},
		{"SET ROLE NONE", true, "SET ROLE"},
		{"SET DEFAULT ROLE ALL TO u", false, "SET ROLE"},
		{"SET SESSION AUTHORIZATION postgres", true, "SET SESSION AUTHORIZATION"},
		{"SET LOCAL ROLE postgres", true, "SET ROLE"},
		{"SET autocommit = 1, PASSWORD = 'x'", false, "SET PASSWORD"},
		{"SET search_path = public", true, ""},
		{"SET @q = 'ALTER USER u IDENTIFIED BY \"x\"'", false, "dynamic SQL"},
		{"PREPARE s FROM @q", false, "dynamic SQL"},
		{"PREPARE s FROM 'SELECT COUNT(*) FROM t WHERE a = ?'", false, ""},
		{"PREPARE s FROM 'SET PASSWORD = ''x'''", false, "dynamic SQL"},
		{"EXECUTE IMMEDIATE CONCAT('GR', 'ANT ALL ON *.* TO u')", false, "dynamic SQL"},
		{"DO $$ BEGIN EXECUTE 'ALTER ROLE ' || current_user || ' PASSWORD ''z'''; END $$", true, "dynamic SQL"},
		{"DO $x$ BEGIN PERFORM 1; END $x$", true, ""},
		{"CREATE DEFINER=root@localhost PROCEDURE p() SQL SECURITY DEFINER GRANT ALL PRIVILEGES ON *.* TO u", false, "dynamic SQL"},
		{"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql", true, ""},
		{"ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO u", true, "ALTER DEFAULT PRIVILEGES"},
		{"CREATE TABLE users (id int)", false, ""},
		{"ALTER TABLE t ADD COLUMN role int", true, ""},
	} {
		if got := accountKind(c.q, c.pg); got != c.want {
			t.Errorf("accountKind(%q, pg=%v) = %q, want %q", c.q, c.pg, got, c.want)
		}
	}
}

// FuzzAccountKind: the classifier never panics, and a text that is an
// account statement stays one behind a leading comment or statement.
func FuzzAccountKind(f *testing.F) {
	for _, s := range []string{"SET PASSWORD = 'x'", "/*!50000 GRANT ALL ON *.* TO u */", "DO $$ $$", "PREPARE s FROM 'a''b'",
		"SELECT 'unterminated", "/* open", "$a$ x", "\\'", "SET @q='x\\'", "/*M!"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, q string, pg bool) {
		k := accountKind(q, pg)
		if k != "" && accountKind("SELECT 1; "+q, pg) == "" {
			t.Fatalf("%q is %q alone but not after another statement", q, k)
		}
	})
}
