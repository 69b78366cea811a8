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
	"time"

	"github.com/dbarena/dbarena/internal/capture/capturetest"
	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// startVersion starts a sandbox called name in the suite's home on the
// catalogued server (scripts/fetch-servers test registers postgres-10 and
// postgres-18), removed when the test ends.
func startVersion(t *testing.T, server, name string, settings []sandbox.Setting) *sandbox.Sandbox {
	t.Helper()
	e := sandboxtest.Catalogued(t, server)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Cleanup(func() { _ = suite.mgr.Remove(context.Background(), name) })
	sb, err := suite.mgr.Start(ctx, sandbox.Spec{Name: name, Flavor: e.Flavor, Basedir: e.Basedir, Profile: "fast", Settings: settings})
	if err != nil {
		t.Fatalf("start %s on %s: %v", name, server, err)
	}
	return sb
}

// TestPostgresVersions runs the smoke subset of the PostgreSQL flavor tests
// on the oldest and newest majors of the catalogue (the system PostgreSQL
// runs them all): oltp_read_write with its counts against the server's,
// TPC-C at 1 warehouse, a pgbench-language script, a checksum equal to the
// system server's, and a csvlog capture replayed into the same version
// with the same end state.
func TestPostgresVersions(t *testing.T) {
	needServers(t)
	for _, server := range sandboxtest.PostgresVersions {
		t.Run(server, func(t *testing.T) {
			name := "v" + strings.TrimPrefix(server, "postgres-")
			sb := startVersion(t, server, name, nil)
			tg := "--target=sandbox:" + name
			major := strings.TrimPrefix(server, "postgres-")
			if v := sb.Target().Version; !strings.HasPrefix(v, major+".") {
				t.Fatalf("sandbox %s runs PostgreSQL %q, want %s.x", name, v, major)
			}

			t.Run("oltp_read_write", func(t *testing.T) {
				const events = 3000
				prepareSmall(t, tg)
				js := jsonPath(t)
				dbarena(t, "run", "oltp_read_write", tg, "--tables", "2", "--table-size", "2000", "--threads", "2",
					"--events", "3000", "--json", js).mustSucceed(t)
				run := readSummary(t, js)
				if run.Totals.Events != events || run.Totals.Errors != 0 || !strings.HasPrefix(run.Target.Version, major+".") {
					t.Fatalf("events %d, errors %d (%v), version %q", run.Totals.Events, run.Totals.Errors, run.Totals.ErrorsByCode, run.Target.Version)
				}
				within(t, "xact_commit vs events", run.ServerCounters["commits"], events, 0.02)
				if run.ServerCounters["rows_inserted"] < events {
					t.Fatalf("server rows inserted %d < events %d", run.ServerCounters["rows_inserted"], events)
				}
			})

			t.Run("tpcc", func(t *testing.T) {
				dbarena(t, "prepare", "tpcc", tg, "--warehouses", "1", "--threads", "2").mustSucceed(t)
				js := jsonPath(t)
				r := dbarena(t, "run", "tpcc", tg, "--threads", "2", "--time", "3s", "--monitor", "off", "--json", js).mustSucceed(t)
				if !strings.Contains(r.stdout, "<TpmC>") || !strings.Contains(r.stdout, "<Constraint Check> (all must be [OK])") {
					t.Errorf("output:\n%s", tail(r.stdout, 3000))
				}
				if run := readSummary(t, js); run.Totals.Events == 0 || run.Totals.Errors != 0 {
					t.Errorf("tpcc: events %d, errors %d (%v)", run.Totals.Events, run.Totals.Errors, run.Totals.ErrorsByCode)
				}
				if r := dbarena(t, "check", "tpcc", tg); r.code != ExitOK {
					t.Fatalf("check tpcc: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
			})

			t.Run("script", func(t *testing.T) {
				const events = 400
				dbarena(t, "prepare", "script", tg, "--scale", "1", "--threads", "2").mustSucceed(t)
				js := jsonPath(t)
				dbarena(t, "run", "script", tg, "--builtin", "tpcb-like", "--protocol", "prepared", "--threads", "2",
					"--events", "400", "--json", js).mustSucceed(t)
				run := readSummary(t, js)
				q := run.Totals.Queries
				if n := run.PerType["tpcb-like"].Count; n != events || q.Write != 4*n || q.Read != n || run.Totals.Errors != 0 {
					t.Fatalf("tpcb-like %d (want %d), queries %+v, errors %d", n, events, q, run.Totals.Errors)
				}
			})

			t.Run("checksum", func(t *testing.T) {
				rows := []string{"DROP TABLE IF EXISTS ck_ver",
					"CREATE TABLE ck_ver (id int PRIMARY KEY, name varchar(40), added date, amount numeric(10,2))",
					"INSERT INTO ck_ver VALUES (3,'three','2021-12-31',3.50),(1,'one','2020-01-01',-1.25),(2,NULL,NULL,NULL)"}
				sqlOn(t, sb, rows...)
				sqlOn(t, suite.postgres, rows...)
				dir := t.TempDir()
				sum := func(sandboxName string) checksum.Table {
					p := filepath.Join(dir, sandboxName+".json")
					dbarena(t, "checksum", "--sandbox", sandboxName, "--tables", "ck_ver", "--json", p).mustSucceed(t)
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					var d checksum.Document
					if err := json.Unmarshal(b, &d); err != nil || len(d.Tables) != 1 {
						t.Fatalf("%s: %v %s", p, err, b)
					}
					return d.Tables[0]
				}
				a, b := sum(name), sum("pg")
				if a.Rows != 3 || a.Sum != b.Sum {
					t.Errorf("PostgreSQL %s %+v vs the system's %+v", major, a, b)
				}
			})

			t.Run("capture-csvlog-replay", func(t *testing.T) {
				const sessions = 2
				logged := startVersion(t, server, name+"log", capturetest.PostgresSettings)
				capturetest.Traffic(t, logged.Target(), sessions)
				csv := filepath.Join(logged.Datadir, "log", "pg.csv")
				capturetest.WaitFor(t, csv, capturetest.Marker(sessions, 9))
				capturetest.WaitCount(t, csv, "user="+logged.Target().User+" database="+logged.Target().Database+" host=", sessions+1)
				capf := filepath.Join(t.TempDir(), "v.capture")
				r := dbarena(t, "capture", "convert", "--from", "pg-csv", "--users", logged.Target().User, csv, "-o", capf).mustSucceed(t)
				if strings.Contains(r.stderr, "bad") {
					t.Errorf("convert: %s", r.stderr)
				}
				tgt := sb.Target()
				pgExec(t, sb.AdminTarget(), "DROP DATABASE IF EXISTS cli_verreplay", "CREATE DATABASE cli_verreplay OWNER "+tgt.User)
				js := jsonPath(t)
				dbarena(t, "run", "replay", tg, "--capture", capf, "--db", "cli_verreplay", "--speed", "max", "--json", js).mustSucceed(t)
				run := readSummary(t, js)
				if run.Totals.Errors != 0 || run.Replay == nil || run.Replay.Sessions != sessions+1 {
					if b, err := os.ReadFile(capf); err == nil {
						t.Logf("capture:\n%s", b)
					}
					t.Fatalf("errors %d (%v), replay %+v", run.Totals.Errors, run.Totals.ErrorsByCode, run.Replay)
				}
				count := func(tg target.Target) string {
					db := openTarget(t, tg)
					defer db.Close()
					var s string
					if err := db.QueryRow("SELECT string_agg(v::text, ',' ORDER BY id) FROM cap_t").Scan(&s); err != nil {
						t.Fatal(err)
					}
					return s
				}
				replayed := tgt
				replayed.Database = "cli_verreplay"
				if got, want := count(replayed), count(logged.Target()); got != want {
					t.Errorf("replayed cap_t %q, captured server's %q", got, want)
				}
			})
		})
	}
}

// TestPgbenchOnPathIsNewest: the pgbench-compatibility tests compare with
// the pgbench first on PATH; make test puts pgbench 18 there
// (scripts/fetch-servers pgbench-18), so under CI it must be 18 or newer.
// Elsewhere an older one (Debian's 15) is named in one skip line.
func TestPgbenchOnPathIsNewest(t *testing.T) {
	path, err := exec.LookPath("pgbench")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no pgbench on PATH: %v (make test puts pgbench 18 first on PATH)", err)
		}
		t.Skipf("no pgbench on PATH: %v", err)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", path, err)
	}
	f := strings.Fields(string(out)) // pgbench (PostgreSQL) 18.6
	major := 0
	if len(f) >= 3 {
		fmt.Sscanf(f[2], "%d", &major)
	}
	if major >= 18 {
		return
	}
	msg := fmt.Sprintf("%s is %q, not pgbench 18 (scripts/fetch-servers pgbench-18; make test puts it first on PATH)", path, strings.TrimSpace(string(out)))
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
