package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statementLog is a PostgreSQL stderr log as servers are set up for
// pgBadger (log_min_duration_statement=0, log_connections off, its
// recommended prefix, times in MSK), with a memory-context dump and a COPY
// FROM STDIN whose rows a log never holds: issue 34 items 9 and 10.
const statementLog = `2019-10-21 12:03:30 MSK [5133]: [1-1] user=,db=,app=,client= LOG:  database system is ready to accept connections
2019-10-21 12:03:31 MSK [5134]: [1-1] user=app,db=DB,app=psql,client=[local] LOG:  duration: 3.000 ms  statement: CREATE TABLE stlog (sess text, k int)
2019-10-21 12:03:31 MSK [5134]: [2-1] user=app,db=DB,app=psql,client=[local] LOG:  duration: 0.100 ms  statement: INSERT INTO stlog VALUES ('a', 1)
2019-10-21 12:03:32 MSK [5135]: [1-1] user=app,db=DB,app=psql,client=[local] LOG:  duration: 0.100 ms  statement: BEGIN
2019-10-21 12:03:32 MSK [5135]: [2-1] user=app,db=DB,app=psql,client=[local] LOG:  duration: 0.100 ms  statement: COPY stlog FROM STDIN
2019-10-21 12:03:32 MSK [5135]: [3-1] user=app,db=DB,app=psql,client=[local] LOG:  duration: 0.200 ms  statement: INSERT INTO stlog VALUES ('b', 1),
	('b', 2)
TopMemoryContext: 101672 total in 12 blocks; 5232 free (18 chunks); 96440 used
  TopTransactionContext: 8192 total in 1 blocks; 7840 free (1 chunks); 352 used
2019-10-21 12:03:32 MSK [5135]: [4-1] user=app,db=DB,app=psql,client=[local] LOG:  duration: 0.100 ms  statement: COMMIT
2019-10-21 12:03:33 MSK [5134]: [3-1] user=app,db=DB,app=psql,client=[local] LOG:  duration: 0.100 ms  statement: INSERT INTO stlog SELECT 'a', count(*) + 1 FROM stlog WHERE sess = 'a'
`

// TestConvertReplayStatementLog: a statement log without connection
// lines converts (sessions from %p, zone MSK, the dump and the COPY
// skipped and counted) and replays on a PostgreSQL sandbox: each
// session's statements run in order, on the database its lines name.
func TestConvertReplayStatementLog(t *testing.T) {
	needServers(t)
	tgt := suite.postgres.Target()
	dir := t.TempDir()
	logf, capf := filepath.Join(dir, "postgresql.log"), filepath.Join(dir, "st.capture")
	if err := os.WriteFile(logf, []byte(strings.ReplaceAll(statementLog, "db=DB", "db=cli_stlog")), 0o644); err != nil {
		t.Fatal(err)
	}
	r := dbarena(t, "capture", "convert", "--from", "pg-stderr", logf, "-o", capf).mustSucceed(t)
	for _, want := range []string{"6 events", "no connection lines", "process ids", "pg COPY FROM STDIN (its rows are not in the log): 1",
		"pg memory-context dump line: 2", `log_line_prefix "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h "`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	b, err := os.ReadFile(capf)
	if err != nil {
		t.Fatal(err)
	}
	// 12:03:31 MSK is 09:03:31 UTC (the CREATE started 3 ms before).
	if !strings.Contains(string(b), `"start":"2019-10-21T09:03:30.997Z"`) || strings.Contains(string(b), "STDIN") {
		t.Errorf("capture:\n%s", b)
	}
	// --pg-sessions connections still insists on connection lines.
	if r := dbarena(t, "capture", "convert", "--from", "pg-stderr", "--pg-sessions", "connections", logf, "-o", capf); r.code != 2 || !strings.Contains(r.stderr, "log_connections=on") {
		t.Errorf("connections mode: exit %d: %s", r.code, r.stderr)
	}

	if r := dbarena(t, "capture", "convert", "--from", "pg-stderr", "--pg-sessions", "bogus", logf); r.code != 2 || !strings.Contains(r.stderr, "--pg-sessions") {
		t.Errorf("bad --pg-sessions: exit %d: %s", r.code, r.stderr)
	}

	pgExec(t, suite.postgres.AdminTarget(), "DROP DATABASE IF EXISTS cli_stlog", "CREATE DATABASE cli_stlog OWNER "+tgt.User)
	js := jsonPath(t)
	dbarena(t, "run", "replay", pgTarget, "--capture", capf, "--speed", "10", "--json", js).mustSucceed(t)
	run := readSummary(t, js)
	if run.Totals.Errors != 0 || run.Replay == nil || run.Replay.Statements != 6 || run.Replay.Sessions != 2 {
		t.Fatalf("errors %d (%v), replay %+v", run.Totals.Errors, run.Totals.ErrorsByCode, run.Replay)
	}
	tg := tgt
	tg.Database = "cli_stlog"
	db := openTarget(t, tg)
	defer db.Close()
	var got string
	if err := db.QueryRow("SELECT string_agg(sess || k, ',' ORDER BY sess, k) FROM stlog").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "a1,a2,b1,b2" {
		t.Errorf("rows %q, want a1,a2,b1,b2", got)
	}
}
