package dialect_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
	. "github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestRegistry: every flavor a registered dialect serves is known to
// package target (names, DSN schemes, family) and found by the registry;
// a family's dialect is the first listed.
func TestRegistry(t *testing.T) {
	seen := map[target.Family]Dialect{}
	for _, d := range All() {
		if _, ok := seen[d.Family()]; !ok {
			seen[d.Family()] = d
		}
		if len(d.Flavors()) == 0 {
			t.Errorf("%T serves no flavor", d)
		}
		for _, f := range d.Flavors() {
			if g, err := target.ParseFlavor(strings.ToUpper(string(f))); err != nil || g != f {
				t.Errorf("ParseFlavor(%s) = %q, %v", f, g, err)
			}
			if f.Family() != d.Family() {
				t.Errorf("%s is of family %s, its dialect's is %s", f, f.Family(), d.Family())
			}
			if got, err := ForFlavor(f); err != nil || got != d {
				t.Errorf("ForFlavor(%s) = %T, %v; want %T", f, got, err, d)
			}
			tg, err := target.ParseDSN(string(f) + "://u@127.0.0.1/db")
			if err != nil || tg.Flavor != f {
				t.Errorf("ParseDSN(%s://) = %+v, %v", f, tg, err)
			}
		}
	}
	for fam, d := range seen {
		if got, err := For(fam); err != nil || got != d {
			t.Errorf("For(%s) = %T, %v; want %T", fam, got, err, d)
		}
	}
	if _, err := target.ParseFlavor("oracle"); err == nil {
		t.Error("ParseFlavor(oracle) succeeded")
	}
}

// TestSQL runs every flavor's DDL and catalogue SQL on its own server:
// the texts the workloads, the loader and the tools build from
// flavor.SQL and flavor.Server are statements the server takes and
// answers as documented.
func TestSQL(t *testing.T) {
	for _, f := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(f), func(t *testing.T) {
			env := sandboxtest.Env(t, f)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			testSQL(ctx, t, env.Dialect, env.DB, env.Target)
		})
	}
}

func testSQL(ctx context.Context, t *testing.T, d flavor.Dialect, db *sql.DB, tg target.Target) {
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	const tbl = "flavor_sql_t"
	exec(d.DropTable(tbl))
	exec("CREATE TABLE " + tbl + " (id " + d.AutoIncrement("BIGINT") + ", k " + d.ColumnType("tinyint") +
		" NOT NULL, at " + d.ColumnType("datetime") + " NULL, PRIMARY KEY (id)) " + d.TableOptions("InnoDB"))
	t.Cleanup(func() { _, _ = db.Exec(d.DropTable(tbl)) })
	exec("CREATE INDEX flavor_sql_k ON " + tbl + " (k)")

	if n := count(d.Rebind("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "+d.CurrentDatabase()+" AND table_name = ?"), tbl); n != 1 {
		t.Errorf("CurrentDatabase: %d tables named %s", n, tbl)
	}
	if n := count(d.IndexExists(), tbl, "flavor_sql_k"); n != 1 {
		t.Errorf("IndexExists(flavor_sql_k) = %d", n)
	}
	if n := count(d.IndexExists(), tbl, "nope"); n != 0 {
		t.Errorf("IndexExists(nope) = %d", n)
	}
	if n := count(d.UserTables()); n < 1 {
		t.Errorf("UserTables = %d", n)
	}

	tables, columns, indexes := d.Catalog("flavor_sql%")
	rows := func(q string) map[string]string {
		t.Helper()
		rs, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rs.Close()
		out := map[string]string{}
		cols, _ := rs.Columns()
		for rs.Next() {
			v := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range v {
				ptrs[i] = &v[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			key := v[0].String
			if len(v) == 3 {
				key += "." + v[1].String
			}
			out[key] = strings.ToLower(v[len(v)-1].String)
		}
		return out
	}
	if got := rows(tables); len(got) != 1 || (d.StorageEngines() && got[tbl] != "innodb") {
		t.Errorf("Catalog tables: %v", got)
	}
	got := rows(columns)
	if !truthy(got[tbl+".id"]) || truthy(got[tbl+".k"]) {
		t.Errorf("Catalog columns (numbered): %v", got)
	}
	got = rows(indexes)
	primary := 0
	for k, v := range got {
		if truthy(v) {
			primary++
		} else if k != tbl+".flavor_sql_k" {
			t.Errorf("Catalog indexes: unexpected %s", k)
		}
	}
	if primary != 1 || len(got) != 2 {
		t.Errorf("Catalog indexes: %v", got)
	}

	// Explicit ids, then the sequence moved past them.
	exec("INSERT INTO " + tbl + " (id, k) VALUES (5, 1)")
	if q := d.SyncSerial(tbl, "id"); q != "" {
		exec(q)
	}
	exec("INSERT INTO " + tbl + " (k) VALUES (2)")
	if n := count("SELECT MAX(id) FROM " + tbl); n != 6 {
		t.Errorf("after SyncSerial the next id is %d, want 6", n)
	}
	if d.AutoValueOnZero() {
		exec("INSERT INTO " + tbl + " (id, k) VALUES (0, 3)")
		if n := count("SELECT MAX(id) FROM " + tbl); n != 7 {
			t.Errorf("AutoValueOnZero: 0 became %d, want 7", n)
		}
	}
	verb, tail := d.InsertIgnore()
	exec(verb + " INTO " + tbl + " (id, k) VALUES (5, 9)" + tail)
	if n := count("SELECT k FROM " + tbl + " WHERE id = 5"); n != 1 {
		t.Errorf("InsertIgnore replaced the row: k = %d", n)
	}
	if n := count("SELECT 7" + d.IntDiv() + "2"); n != 3 {
		t.Errorf("7%s2 = %d", d.IntDiv(), n)
	}
	for _, q := range d.AnalyzeAll(tbl) {
		exec(q)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, d.LoadSession()); err != nil {
		t.Errorf("LoadSession: %v", err)
	}
	conn.Close()

	settings, err := db.QueryContext(ctx, d.ShowSettings())
	if err != nil {
		t.Fatalf("ShowSettings: %v", err)
	}
	n := 0
	for settings.Next() {
		n++
	}
	settings.Close()
	if n < 50 {
		t.Errorf("ShowSettings: %d rows", n)
	}
	if on, _, _, err := d.SessionTLS(ctx, db); err != nil || on {
		t.Errorf("SessionTLS on a plain sandbox connection = %v, %v", on, err)
	}
	if m := d.TLSMode(tg); m != "tls=false" && m != "sslmode=disable" {
		t.Errorf("TLSMode = %q", m)
	}
	if !d.Probe(ctx, tg) {
		t.Error("Probe: the server did not answer")
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	limits, err := d.Limits(ctx, c, flavor.Demand{Connections: 10, Tables: 2}, func(n int64) int64 { return n })
	if err != nil || len(limits) == 0 || limits[0].Setting != "max_connections" || limits[0].Have < 10 || limits[0].Need < 10 {
		t.Errorf("Limits = %+v, %v", limits, err)
	}
	if !strings.Contains(d.RaiseLimit("max_connections", 500), "max_connections = 500") {
		t.Errorf("RaiseLimit = %q", d.RaiseLimit("max_connections", 500))
	}
	exec(d.DropTable(tbl))
	if n := count(d.Rebind("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "+d.CurrentDatabase()+" AND table_name = ?"), tbl); n != 0 {
		t.Errorf("DropTable left %s", tbl)
	}
}

// truthy reads a boolean column as the drivers return it as text.
func truthy(s string) bool { return s == "1" || s == "true" || s == "t" }
