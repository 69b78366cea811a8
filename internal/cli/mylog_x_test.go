package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
)

// A MariaDB general log of SQL-level prepared statements logs each
// execution twice: the client's `Query EXECUTE s USING ...` and the
// server's `Execute INSERT ...` (PREPARE and EXECUTE IMMEDIATE likewise).
// The general log is switched on for a real session that runs PREPARE /
// EXECUTE / EXECUTE IMMEDIATE into a table without a key; `capture convert`
// and `run replay` into a fresh database must leave the table with the
// rows the session wrote, each once (before: every row twice).
func TestMariaDBGeneralLogSQLPrepareReplay(t *testing.T) {
	needServers(t)
	sb := suite.mariadb
	tgt, admin := sb.Target(), sb.AdminTarget()
	adm := openTarget(t, admin)
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var prevFile, prevOutput, prevOn string
	if err := adm.QueryRowContext(ctx, "SELECT @@global.general_log_file, @@global.log_output, @@global.general_log").Scan(&prevFile, &prevOutput, &prevOn); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(sb.Datadir, "mylog-sql-prepare.log")
	restore := func() {
		for _, q := range []string{"SET GLOBAL general_log = " + prevOn, "SET GLOBAL log_output = '" + prevOutput + "'",
			"SET GLOBAL general_log_file = '" + strings.ReplaceAll(prevFile, "'", "''") + "'"} {
			if _, err := adm.ExecContext(context.Background(), q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	}
	defer restore()
	pgExec(t, admin, "SET GLOBAL general_log_file = '"+logFile+"'", "SET GLOBAL log_output = 'FILE'", "SET GLOBAL general_log = ON")

	// The application's session: statements as text (COM_QUERY).
	app := openTarget(t, tgt)
	defer app.Close()
	for _, q := range []string{
		"DROP TABLE IF EXISTS mylog_pe",
		"CREATE TABLE mylog_pe (id INT, v VARCHAR(10))",
		"SET @a = 1, @b = 'x'",
		"PREPARE s FROM 'INSERT INTO mylog_pe VALUES (?, ?)'",
		"EXECUTE s USING @a, @b",
		"SET @a = 2",
		"EXECUTE s USING @a, @b",
		"EXECUTE s USING 3, 'lit'",
		"DEALLOCATE PREPARE s",
		"EXECUTE IMMEDIATE 'INSERT INTO mylog_pe VALUES (?, ?)' USING 10, 'imm'",
	} {
		if _, err := app.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	app.Close()
	pgExec(t, admin, "SET GLOBAL general_log = OFF")
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	// The server did log both lines (what makes the case).
	if !strings.Contains(string(raw), "Query\tEXECUTE s USING @a, @b") || !strings.Contains(string(raw), "Execute\tINSERT INTO mylog_pe VALUES (1, 'x')") {
		t.Fatalf("the general log lacks the Query EXECUTE or the Execute line:\n%s", raw)
	}

	capFile := filepath.Join(t.TempDir(), "prepare.capture")
	dbarena(t, "capture", "convert", logFile, "--from", "mysql-general", "--users", tgt.User, "-o", capFile).mustSucceed(t)
	f, err := os.Open(capFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f, capFile)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for {
		var e capture.Event
		if rd.Next(&e) != nil {
			break
		}
		if strings.Contains(e.SQL, "mylog_pe") || strings.Contains(e.SQL, "EXECUTE") {
			kinds[e.Kind]++
		}
	}
	// DROP, CREATE and PREPARE queries; the 3 EXECUTEs and the EXECUTE
	// IMMEDIATE as the server's Execute lines, once each.
	if kinds[capture.KindQuery] != 3 || kinds[capture.KindExecute] != 4 || kinds[capture.KindPrepare] != 0 {
		t.Errorf("capture events on mylog_pe by kind: %v", kinds)
	}

	var host string
	if err := adm.QueryRowContext(ctx, "SELECT Host FROM mysql.user WHERE User = ? ORDER BY Host = '%' LIMIT 1", tgt.User).Scan(&host); err != nil {
		t.Fatal(err)
	}
	pgExec(t, admin, "DROP DATABASE IF EXISTS mylog_replay", "CREATE DATABASE mylog_replay",
		"GRANT ALL ON mylog_replay.* TO '"+tgt.User+"'@'"+host+"'")
	defer pgExec(t, admin, "DROP DATABASE IF EXISTS mylog_replay")
	js := jsonPath(t)
	dbarena(t, "run", "replay", "--target", "sandbox:default", "--capture", capFile, "--speed", "max", "--db", "mylog_replay", "--json", js).mustSucceed(t)
	if run := readSummary(t, js); run.Totals.Errors != 0 {
		t.Fatalf("replay errors: %v", run.Totals.ErrorsByCode)
	}
	var n int
	var ids string
	if err := adm.QueryRowContext(ctx, "SELECT COUNT(*), GROUP_CONCAT(id ORDER BY id) FROM mylog_replay.mylog_pe").Scan(&n, &ids); err != nil {
		t.Fatal(err)
	}
	if n != 4 || ids != "1,2,3,10" {
		t.Fatalf("replayed table holds %d rows (ids %s), want 4 (1,2,3,10), each execution once", n, ids)
	}
}
