package cli

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// writeCaptureFile writes evs (in time order) as a capture of flavor to
// a new file name in a temporary directory and returns its path.
func writeCaptureFile(t *testing.T, name, flavor string, evs []capture.Event) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewWriter(f, capture.Header{Flavor: flavor, Source: "test", Start: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return p
}

// openTarget opens a one-connection pool on tgt; the caller closes it.
func openTarget(t *testing.T, tgt target.Target) *sql.DB {
	t.Helper()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// writeCapture writes a capture of three sessions, two of them open at
// once, one statement failing.
func writeCapture(t *testing.T, flavor string) string {
	return writeCaptureFile(t, "app.capture", flavor, []capture.Event{
		{Session: "1", TUS: 0, Kind: capture.KindConnect},
		{Session: "2", TUS: 10, Kind: capture.KindConnect},
		{Session: "1", TUS: 20, Kind: capture.KindQuery, SQL: "SELECT 1"},
		{Session: "2", TUS: 30, Kind: capture.KindQuery, SQL: "SELECT 2"},
		{Session: "2", TUS: 40, Kind: capture.KindQuery, SQL: "SELECT * FROM replay_no_such_table"},
		{Session: "1", TUS: 50, Kind: capture.KindQuit},
		{Session: "2", TUS: 60, Kind: capture.KindQuit},
		{Session: "3", TUS: 70, Kind: capture.KindConnect},
		{Session: "3", TUS: 80, Kind: capture.KindQuery, SQL: "SELECT 3 ORDER BY 1"},
		{Session: "3", TUS: 90, Kind: capture.KindQuit},
	})
}

// `run replay` without --threads or --time: one thread per session open
// at once, until the capture is done, errors counted; `compare` of two
// replays shows the per-fingerprint table.
func TestReplayRun(t *testing.T) {
	needServers(t)
	for _, f := range flavors() {
		t.Run(f.name, func(t *testing.T) {
			flavor := "mysql"
			if f.target != "" {
				flavor = "postgres"
			}
			file := writeCapture(t, flavor)
			var ids []string
			for range 2 {
				js := jsonPath(t)
				r := dbarena(t, withTarget(f.target, "run", "replay", "--capture", file, "--speed", "max", "--record-results", "--json", js)...).mustSucceed(t)
				if !strings.Contains(r.stdout, "Fingerprints by total time") {
					t.Errorf("no fingerprint table:\n%s", r.stdout)
				}
				run := readSummary(t, js)
				if run.Threads != 2 || run.Status != "complete" || run.Totals.Errors != 1 || run.Totals.Events != 3 {
					t.Errorf("threads %d status %s errors %d events %d", run.Threads, run.Status, run.Totals.Errors, run.Totals.Events)
				}
				if run.Replay == nil || run.Replay.Sessions != 3 || run.Replay.Statements != 4 || len(run.PerType) != 3 {
					t.Errorf("replay %+v, %d fingerprints", run.Replay, len(run.PerType))
				}
				m := regexp.MustCompile(`Stored as run (\d+)`).FindStringSubmatch(r.stdout)
				if m == nil {
					t.Fatalf("no run id in:\n%s", r.stdout)
				}
				ids = append(ids, m[1])
			}
			r := dbarena(t, "compare", ids[0], ids[1], "--threshold", "50").mustSucceed(t)
			if !strings.Contains(r.stdout, "Replay by fingerprint (3 fingerprints") || !strings.Contains(r.stdout, "beyond 50%") {
				t.Errorf("compare output:\n%s", r.stdout)
			}
		})
	}
}

func TestReplayBadInputExit2(t *testing.T) {
	file := writeCapture(t, "mysql")
	bad := filepath.Join(t.TempDir(), "bad.capture")
	if err := os.WriteFile(bad, []byte(`{"schema":"dbarena.capture/v1","flavor":"mysql"}`+"\n"+`{"session":"1","t_us":0,"kind":"explode"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "replay"}, "--capture FILE is required"},
		{[]string{"run", "replay", "--capture", bad}, bad + ":2: unknown kind"},
		{[]string{"run", "replay", "--capture", file, "--speed", "0"}, "--speed"},
		{[]string{"compare", "1", "2", "--threshold", "0"}, "--threshold"},
	} {
		r := dbarena(t, tc.args...)
		if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, r.code, r.stderr, ExitUsage, tc.want)
		}
	}
}

// A plan replays a capture (looping for the plan's duration); its server
// errors are counted, not fatal.
func TestReplayPlan(t *testing.T) {
	needServers(t)
	file := writeCapture(t, "mysql")
	good := suite.mariadb.Target()
	plan := writePlan(t, fmt.Sprintf(`name: replayplan
servers:
  - name: good
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
workloads:
  - name: replay
    params: {capture: %q, speed: max, loop: "true"}
axes:
  threads: [2]
rounds: 1
warmup: 0
duration: 1s
`, good.User, good.Password, good.Port, good.Database, file))
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "plan", "run", plan, "--results", results)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rows := planRuns(t, results, "replayplan")
	if len(rows) != 1 || rows[0].Status != "complete" {
		t.Fatalf("runs %+v", rows)
	}
}
