package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/results/store"
)

// TestPlanWithData: a plan whose data is gen-eshop's dumps loads them
// with package load into MariaDB as MyISAM and as Aria and into
// PostgreSQL, stores each load as a run of workload load (per server and
// engine, every table with its rows), runs the shop script on each, and
// leaves the same lookup tables on both servers (dbarena checksum).
func TestPlanWithData(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	gen := exec.Command("go", "run", "../../scripts/gen-eshop", "--products", "60", "--dir", dir)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gen-eshop: %v\n%s", err, out)
	}
	my, pg := suite.mariadb.Target(), suite.postgres.Target()
	path := writePlan(t, fmt.Sprintf(`name: shopdata
servers:
  - name: maria
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
  - name: pg
    dsn: postgres://%s:%s@127.0.0.1:%d/%s
data:
  dump: {mysql: %s/eshop-mysql.sql, postgres: %s/eshop-postgres.sql}
  engine: [MyISAM, Aria]
workloads:
  - name: script
    params: {file: %s/shop.sql, define: products=60}
axes:
  threads: [2]
rounds: 1
warmup: 0
duration: 1s
`, my.User, my.Password, my.Port, my.Database, pg.User, pg.Password, pg.Port, pg.Database, dir, dir, dir))
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	if strings.Contains(r.stdout+r.stderr, my.Password) || strings.Contains(r.stdout+r.stderr, pg.Password) {
		t.Error("a password in the output")
	}
	rows := planRuns(t, results, "shopdata")
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var loads, runs []string
	for _, row := range rows {
		run, err := st.Run(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != "complete" {
			t.Errorf("run %d (%s %s): %s %s", row.ID, run.Workload, row.Tags["plan.cell"], run.Status, run.Error)
		}
		switch run.Workload {
		case "load":
			loads = append(loads, row.Tags["plan.cell"]+" "+row.Tags["engine"])
			rows := func(table string) int64 { // PostgreSQL's tables are schema-qualified
				return run.PerType[table].Count + run.PerType["public."+table].Count
			}
			if len(run.PerType) != 14 || rows("product") != 60 || rows("stock") != 300 {
				t.Errorf("load %s: tables %+v", row.Tags["plan.cell"], run.PerType)
			}
		case "script":
			runs = append(runs, row.Tags["plan.cell"])
			if run.Totals.Events == 0 {
				t.Errorf("run %s: no events", row.Tags["plan.cell"])
			}
		}
	}
	if len(loads) != 3 || len(runs) != 3 {
		t.Fatalf("loads %q runs %q", loads, runs)
	}
	for _, want := range []string{"workload=load,server=maria,engine=MyISAM MyISAM", "workload=load,server=maria,engine=Aria Aria", "workload=load,server=pg as-dumped"} {
		if !strings.Contains(strings.Join(loads, "\n"), want) {
			t.Errorf("loads %q lack %q", loads, want)
		}
	}

	// reload: never keeps what the latest load at each place left: the
	// PostgreSQL data, not MariaDB's (Aria came last, so MyISAM loads again,
	// and then Aria again).
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, strings.Replace(string(text), "  engine: [MyISAM, Aria]\n", "  engine: [MyISAM, Aria]\n  reload: never\n", 1), 0o600)
	r = dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	if !strings.Contains(r.stdout, "server pg: data kept (reload: never)") {
		t.Errorf("reload: never: no note of the kept data:\n%s", r.stdout)
	}
	if n := len(planRuns(t, results, "shopdata")); n != len(rows)+2+3 {
		t.Errorf("reload: never: %d runs after the second plan run, want %d (2 loads, 3 runs)", n, len(rows)+5)
	}

	// The lookups (not written by the script) match across the servers.
	tables := "brand,category,currency,product_attribute,product_image,product_price,stock,supplier,warehouse"
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	dbarena(t, "checksum", "--tables", tables, "--json", a).mustSucceed(t)
	dbarena(t, "checksum", "--sandbox", "pg", "--tables", tables, "--json", b).mustSucceed(t)
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	ma, mb := readSums(t, x), readSums(t, y)
	for name, sum := range ma {
		if mb[name] != sum {
			t.Errorf("%s: MariaDB %s, PostgreSQL %s", name, sum, mb[name])
		}
	}
}

// read returns a checksum --json file's sums by table.
func readSums(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var c checksum.Document
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tb := range c.Tables {
		out[tb.Name] = fmt.Sprintf("%d rows, sum %s", tb.Rows, tb.Sum)
	}
	return out
}

// TestPlanDataUnknownEngine: an engine the server lacks fails the cell
// with the engines it has, before anything is loaded.
func TestPlanDataUnknownEngine(t *testing.T) {
	needServers(t)
	dump := writeFile(t, filepath.Join(t.TempDir(), "d.sql"), "CREATE TABLE never_loaded (id INT) ENGINE=MyISAM;\n", 0o600)
	my := suite.mariadb.Target()
	path := writePlan(t, fmt.Sprintf(`name: badengine
servers:
  - name: maria
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
data: {dump: %s, engine: NoSuchEngine}
workloads:
  - name: oltp_point_select
    params: {tables: 1, table-size: 100}
rounds: 1
warmup: 0
duration: 1s
`, my.User, my.Password, my.Port, my.Database, dump))
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "plan", "run", path, "--results", results)
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", r.code, ExitFailed, r.stdout, r.stderr)
	}
	rows := planRuns(t, results, "badengine")
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.Run(context.Background(), rows[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.Contains(run.Error, "engine NoSuchEngine is not available") || !strings.Contains(run.Error, "InnoDB") {
		t.Errorf("%d runs; error %q", len(rows), run.Error)
	}
	if r := dbarena(t, "checksum", "--tables", "never_loaded"); r.code != ExitUsage {
		t.Errorf("table never_loaded exists after the failed load (checksum exit %d)", r.code)
	}
}
