package checksum

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func exec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctxT(t), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// sums returns the checksums of the named tables, by name.
func sums(t *testing.T, db *sql.DB, flavor string, names ...string) map[string]Table {
	t.Helper()
	list, err := Run(ctxT(t), db, flavor, "", Options{Tables: names})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Table{}
	for _, tb := range list {
		out[tb.Name] = tb
	}
	if len(out) != len(names) {
		t.Fatalf("got %d tables, want %d", len(out), len(names))
	}
	return out
}

// simpleRows are the rows of the simple-typed table, in the columns
// id, n, name, note, born, at, price, flag, data.
var simpleRows = []string{
	"(1, -5, 'MyISAM ENGINE=x', 'multi\nline', '2024-02-29', '2024-02-29 13:14:15.123456', 12.50, 1, X'00ff10')",
	"(2, 9000000000, '', NULL, NULL, NULL, 0.00, 0, X'')",
	"(3, 0, 'emoji 😀 ünïcode', 'a,b', '1999-12-31', '1999-12-31 23:59:59', -3.25, NULL, NULL)",
	"(4, NULL, 'N', '', '2000-01-01', '2000-01-01 00:00:00', NULL, 1, X'4e')",
}

func insertAll(t *testing.T, db *sql.DB, table string, rows []string) {
	t.Helper()
	for _, r := range rows {
		exec(t, db, "INSERT INTO "+table+" VALUES "+r)
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestEnginesEqualOrderFreeAndOneCellDiffers(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	db := env.DB
	cols := "(id INT PRIMARY KEY, n BIGINT, name VARCHAR(100), note TEXT, born DATE, at DATETIME(6), price DECIMAL(10,2), flag BOOL, data BLOB)"
	for _, e := range []string{"InnoDB", "MyISAM", "Aria"} {
		tb := "eng_" + strings.ToLower(e)
		exec(t, db, "DROP TABLE IF EXISTS "+tb, "CREATE TABLE "+tb+" "+cols+" ENGINE="+e)
	}
	insertAll(t, db, "eng_innodb", simpleRows)
	insertAll(t, db, "eng_myisam", reversed(simpleRows))
	insertAll(t, db, "eng_aria", []string{simpleRows[2], simpleRows[0], simpleRows[3], simpleRows[1]})
	got := sums(t, db, "mariadb", "eng_innodb", "eng_myisam", "eng_aria")
	ref := got["eng_innodb"]
	if ref.Rows != 4 || ref.Sum == "" || ref.Sum == "0" || ref.Columns != 9 || !ref.Portable || ref.Engine != "InnoDB" {
		t.Fatalf("innodb: %+v", ref)
	}
	for _, n := range []string{"eng_myisam", "eng_aria"} {
		if got[n].Sum != ref.Sum || got[n].Rows != ref.Rows {
			t.Errorf("%s: %+v, want the sum of InnoDB %+v", n, got[n], ref)
		}
	}
	if got["eng_aria"].Engine != "Aria" || got["eng_myisam"].Engine != "MyISAM" {
		t.Errorf("engines: %+v", got)
	}

	// One cell changed, or NULL turned into '', changes the sum.
	for _, change := range []string{
		"UPDATE eng_myisam SET note = 'multi\nline.' WHERE id = 1",
		"UPDATE eng_myisam SET note = '' WHERE id = 2",
		"UPDATE eng_myisam SET data = X'00ff11' WHERE id = 1",
		"UPDATE eng_myisam SET at = '2024-02-29 13:14:15.123457' WHERE id = 1",
	} {
		t.Run(change, func(t *testing.T) {
			exec(t, db, "DROP TABLE IF EXISTS eng_copy", "CREATE TABLE eng_copy "+cols+" ENGINE=MyISAM")
			insertAll(t, db, "eng_copy", simpleRows)
			if s := sums(t, db, "mariadb", "eng_copy")["eng_copy"]; s.Sum != ref.Sum {
				t.Fatalf("copy before the change: %s, want %s", s.Sum, ref.Sum)
			}
			exec(t, db, strings.Replace(change, "eng_myisam", "eng_copy", 1))
			if s := sums(t, db, "mariadb", "eng_copy")["eng_copy"]; s.Sum == ref.Sum {
				t.Fatalf("sum unchanged after %q", change)
			}
		})
	}
	// Values moved between adjacent columns do not collide.
	exec(t, db, "DROP TABLE IF EXISTS sep_a", "DROP TABLE IF EXISTS sep_b",
		"CREATE TABLE sep_a (a VARCHAR(10), b VARCHAR(10))", "CREATE TABLE sep_b (a VARCHAR(10), b VARCHAR(10))",
		"INSERT INTO sep_a VALUES ('x,', 'y')", "INSERT INTO sep_b VALUES ('x', ',y')")
	if s := sums(t, db, "mariadb", "sep_a", "sep_b"); s["sep_a"].Sum == s["sep_b"].Sum {
		t.Error("('x,','y') and ('x',',y') have the same sum")
	}
}

func TestMariaDBAndPostgresCompareSimpleTypes(t *testing.T) {
	my := sandboxtest.Env(t, target.FlavorMariaDB).DB
	pg := sandboxtest.Env(t, target.FlavorPostgres).DB
	exec(t, my, "DROP TABLE IF EXISTS cross_simple",
		"CREATE TABLE cross_simple (id INT PRIMARY KEY, n BIGINT, name VARCHAR(100), note TEXT, born DATE, at DATETIME(6), price DECIMAL(10,2), flag BOOL, data BLOB)")
	exec(t, pg, "DROP TABLE IF EXISTS cross_simple",
		"CREATE TABLE cross_simple (id int PRIMARY KEY, n bigint, name varchar(100), note text, born date, at timestamp(6), price numeric(10,2), flag boolean, data bytea)")
	insertAll(t, my, "cross_simple", simpleRows)
	pgRows := []string{ // the same rows in PostgreSQL's spelling
		"(1, -5, 'MyISAM ENGINE=x', E'multi\\nline', '2024-02-29', '2024-02-29 13:14:15.123456', 12.50, true, '\\x00ff10')",
		"(2, 9000000000, '', NULL, NULL, NULL, 0.00, false, '\\x')",
		"(3, 0, 'emoji 😀 ünïcode', 'a,b', '1999-12-31', '1999-12-31 23:59:59', -3.25, NULL, NULL)",
		"(4, NULL, 'N', '', '2000-01-01', '2000-01-01 00:00:00', NULL, true, '\\x4e')",
	}
	insertAll(t, pg, "cross_simple", pgRows)
	a := sums(t, my, "mariadb", "cross_simple")["cross_simple"]
	b := sums(t, pg, "postgres", "cross_simple")["cross_simple"]
	if a.Rows != 4 || a.Sum != b.Sum || a.Rows != b.Rows || !a.Portable || !b.Portable {
		t.Fatalf("MariaDB %+v, PostgreSQL %+v: want equal portable sums", a, b)
	}
	if b.Engine != "heap" || b.DataBytes <= 0 {
		t.Errorf("postgres sizes/engine: %+v", b)
	}
	if d := Diff([]Table{a}, []Table{b}); d != nil {
		t.Errorf("Diff: %v", d)
	}

	// A float column makes the table non-portable.
	exec(t, pg, "DROP TABLE IF EXISTS cross_float", "CREATE TABLE cross_float (x double precision)")
	if f := sums(t, pg, "postgres", "cross_float")["cross_float"]; f.Portable || f.Rows != 0 || f.Sum != "0" {
		t.Errorf("float table: %+v", f)
	}
}

func TestWideTables(t *testing.T) {
	const n = 250
	my := sandboxtest.Env(t, target.FlavorMariaDB).DB
	pg := sandboxtest.Env(t, target.FlavorPostgres).DB
	var defs, vals []string
	for i := range n {
		switch i % 3 {
		case 0:
			defs = append(defs, fmt.Sprintf("c%d INT", i))
			vals = append(vals, fmt.Sprint(i*7))
		case 1:
			defs = append(defs, fmt.Sprintf("c%d VARCHAR(20)", i))
			vals = append(vals, fmt.Sprintf("'v%d'", i))
		default:
			defs = append(defs, fmt.Sprintf("c%d DATE", i))
			vals = append(vals, "'2020-01-02'")
		}
	}
	for _, db := range []*sql.DB{my, pg} {
		exec(t, db, "DROP TABLE IF EXISTS wide", "CREATE TABLE wide ("+strings.Join(defs, ", ")+")")
		for r := range 50 {
			vals[0] = fmt.Sprint(r)
			exec(t, db, "INSERT INTO wide VALUES ("+strings.Join(vals, ", ")+")")
		}
	}
	a := sums(t, my, "mariadb", "wide")["wide"]
	b := sums(t, pg, "postgres", "wide")["wide"]
	if a.Columns != n || a.Rows != 50 || a.Sum != b.Sum {
		t.Fatalf("wide: MariaDB %+v, PostgreSQL %+v", a, b)
	}
}

func TestErrors(t *testing.T) {
	my := sandboxtest.Env(t, target.FlavorMariaDB).DB
	if _, err := Run(ctxT(t), my, "mariadb", "", Options{Tables: []string{"no_such_table"}}); err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := Tables(ctxT(t), my, "oracle", ""); err == nil {
		t.Error("unknown flavor accepted")
	}
	pg := sandboxtest.Env(t, target.FlavorPostgres).DB
	if _, err := Tables(ctxT(t), pg, "postgres", "other_db"); err == nil || !strings.Contains(err.Error(), "other_db") {
		t.Errorf("other database on PostgreSQL: %v", err)
	}
}

func TestDiff(t *testing.T) {
	a := []Table{{Name: "x", Rows: 1, Sum: "a"}, {Name: "y", Rows: 2, Sum: "b"}, {Name: "z", Rows: 1, Sum: "c"}}
	b := []Table{{Name: "x", Rows: 1, Sum: "a"}, {Name: "y", Rows: 3, Sum: "b"}, {Name: "w", Rows: 1, Sum: "c"}}
	got := strings.Join(Diff(a, b), "; ")
	want := "y: 2 rows vs 3; z: only on the first side; w: only on the second side"
	if got != want {
		t.Errorf("Diff = %q, want %q", got, want)
	}
	if Diff(a, a) != nil {
		t.Error("Diff of equal lists not nil")
	}
}

// TestMariaDBAndPostgresCompareZonedAndOthers: TIMESTAMP with timestamptz
// (the same instant), TIME with time, ENUM with an enum type, CHAR with
// character (trailing blanks) give equal sums.
func TestMariaDBAndPostgresCompareZonedAndOthers(t *testing.T) {
	my := sandboxtest.Env(t, target.FlavorMariaDB).DB
	pg := sandboxtest.Env(t, target.FlavorPostgres).DB
	exec(t, my, "DROP TABLE IF EXISTS cross_more",
		"CREATE TABLE cross_more (id INT, ts TIMESTAMP(6) NULL, tm TIME(6), e ENUM('small','large'), c CHAR(5))",
		"INSERT INTO cross_more VALUES (1, FROM_UNIXTIME(1704164645.123456), '10:11:12.5', 'large', 'ab '), (2, NULL, '00:00:00', NULL, '')")
	exec(t, pg, "DROP TABLE IF EXISTS cross_more", "DROP TYPE IF EXISTS size_t", "CREATE TYPE size_t AS ENUM ('small', 'large')",
		"CREATE TABLE cross_more (id int, ts timestamptz(6), tm time(6), e size_t, c character(5))",
		"INSERT INTO cross_more VALUES (1, to_timestamp(1704164645) + interval '123456 microseconds', '10:11:12.5', 'large', 'ab '), (2, NULL, '00:00:00', NULL, '')")
	a := sums(t, my, "mariadb", "cross_more")["cross_more"]
	b := sums(t, pg, "postgres", "cross_more")["cross_more"]
	if a.Rows != 2 || a.Sum != b.Sum || !a.Portable || !b.Portable {
		t.Fatalf("MariaDB %+v, PostgreSQL %+v: want equal portable sums", a, b)
	}
}
