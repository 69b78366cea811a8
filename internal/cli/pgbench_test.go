package cli

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/dbarena/dbarena/internal/server/target"
)

// TestPgbenchListAndShow: -b list and --show-script print to stderr and
// exit 0, as pgbench.
func TestPgbenchListAndShow(t *testing.T) {
	r := dbarena(t, "pgbench", "-b", "list")
	if r.code != 0 || !strings.Contains(r.stderr, "Available builtin scripts:") || !strings.Contains(r.stderr, "select-only") {
		t.Fatalf("-b list: %d %q", r.code, r.stderr)
	}
	if r := dbarena(t, "help", "pgbench"); r.code != 0 || !strings.Contains(r.stdout, "Initialization options:") || !strings.Contains(r.stdout, "Common options:") {
		t.Errorf("help pgbench: %d %q", r.code, r.stdout)
	}
	r = dbarena(t, "pgbench", "--show-script", "se")
	if r.code != 0 || !strings.Contains(r.stderr, "select-only: ") || strings.Contains(r.stderr, "UPDATE") ||
		!strings.Contains(r.stderr, "SELECT abalance FROM pgbench_accounts WHERE") {
		t.Fatalf("--show-script se: %d %q", r.code, r.stderr)
	}
}

// pgbenchEnv returns the -h/-p/-U/dbname arguments and password of the
// PostgreSQL sandbox, for real pgbench and `dbarena pgbench` alike.
func pgbenchConn(t *testing.T) (args []string, tg target.Target) {
	t.Helper()
	needServers(t)
	tg = suite.postgres.Target()
	return []string{"-h", tg.Host, "-p", strconv.Itoa(tg.Port), "-U", tg.User, tg.Database}, tg
}

// runPgbench runs `dbarena pgbench` with PGPASSWORD set, in dir.
func runPgbench(t *testing.T, tg target.Target, dir string, args ...string) result {
	t.Helper()
	var out, errb strings.Builder
	env := map[string]string{"DBARENA_HOME": suite.home, "HOME": suite.home, "PGPASSWORD": tg.Password}
	app := NewApp(&out, &errb, append([]string{"dbarena", "pgbench"}, args...), func(k string) string { return env[k] },
		func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) })
	wd, _ := os.Getwd()
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
	}
	code := app.Main(context.Background())
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// tableSizes returns pg_total_relation_size and reloptions of pgbench's
// tables and indexes in the database db of the sandbox.
func tableSizes(t *testing.T, tg target.Target, schema string) map[string]string {
	t.Helper()
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://%s:%s@%s:%d/%s", tg.User, tg.Password, tg.Host, tg.Port, tg.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT c.relname, pg_total_relation_size(c.oid), coalesce(array_to_string(c.reloptions, ','), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname LIKE 'pgbench%' ORDER BY 1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, opts string
		var size int64
		if err := rows.Scan(&name, &size, &opts); err != nil {
			t.Fatal(err)
		}
		out[name] = fmt.Sprintf("%d %s", size, opts)
	}
	return out
}

// TestPgbenchPrepareSizes: `dbarena prepare script --scale 1` builds
// tables of the same sizes as real `pgbench -i -s 1` (filler of 84 blanks,
// fillfactor=100); today's code left filler NULL (4.3 MB against 13 MB).
// Real pgbench writes its tables into a schema of its own (search_path),
// dbarena into the database's public schema, on the same sandbox.
func TestPgbenchPrepareSizes(t *testing.T) {
	conn, tg := pgbenchConn(t)
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Fatalf("real pgbench is needed to compare table sizes: %v", err)
	}
	admin := suite.postgres.AdminTarget()
	adb, err := sql.Open("pgx", fmt.Sprintf("postgres://%s:%s@%s:%d/%s", admin.User, admin.Password, tg.Host, tg.Port, tg.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer adb.Close()
	for _, q := range []string{"DROP SCHEMA IF EXISTS pgbref CASCADE", "CREATE SCHEMA pgbref AUTHORIZATION " + tg.User} {
		if _, err := adb.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(pgbench, append([]string{"-i", "-q", "-s", "1"}, conn...)...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+tg.Password, "PGOPTIONS=-c search_path=pgbref")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	dbarena(t, "prepare", "script", pgTarget, "--scale", "1", "--monitor", "none").mustSucceed(t)
	want, got := tableSizes(t, tg, "pgbref"), tableSizes(t, tg, "public")
	if len(want) != 7 {
		t.Fatalf("pgbench -i made %v", want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: dbarena %q, pgbench %q", name, got[name], w)
		}
	}
	if !strings.Contains(got["pgbench_accounts"], "fillfactor=100") {
		t.Errorf("pgbench_accounts: %q, want fillfactor=100", got["pgbench_accounts"])
	}
}

// TestPgbenchInitSteps: -I with G (server-side), f, partitions, unlogged
// and -F as pgbench, its progress lines on stderr.
func TestPgbenchInitSteps(t *testing.T) {
	conn, tg := pgbenchConn(t)
	r := runPgbench(t, tg, "", append([]string{"-i", "-I", "dtGvpf", "--unlogged-tables", "-F", "90", "--partitions", "2", "--partition-method", "hash"}, conn...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, re := range []string{"dropping old tables", "creating tables", "creating 2 partitions", "generating data \\(server-side\\)",
		"vacuuming", "creating primary keys", "creating foreign keys", `done in \d+\.\d\d s `} {
		if !regexp.MustCompile(re).MatchString(r.stderr) {
			t.Errorf("stderr lacks /%s/: %s", re, r.stderr)
		}
	}
	sizes := tableSizes(t, tg, "public")
	if !strings.Contains(sizes["pgbench_accounts_1"], "fillfactor=90") || !strings.Contains(sizes["pgbench_tellers"], "fillfactor=90") {
		t.Errorf("fillfactor: %v", sizes)
	}
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://%s:%s@%s:%d/%s", tg.User, tg.Password, tg.Host, tg.Port, tg.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var persistence string
	var fks, n int
	var filler string
	if err := db.QueryRow("SELECT relpersistence FROM pg_class WHERE relname = 'pgbench_branches'").Scan(&persistence); err != nil || persistence != "u" {
		t.Errorf("pgbench_branches persistence %q (%v), want unlogged", persistence, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND conname LIKE 'pgbench%'").Scan(&fks); err != nil || fks != 5 {
		t.Errorf("%d foreign keys (%v), want 5", fks, err)
	}
	if err := db.QueryRow("SELECT count(*), min(filler) FROM pgbench_accounts").Scan(&n, &filler); err != nil || n != 100000 || filler != strings.Repeat(" ", 84) {
		t.Errorf("accounts: %d rows, filler %q (%v)", n, filler, err)
	}
	r = runPgbench(t, tg, "", append([]string{"-i", "-I", "dtz"}, conn...)...)
	if r.code != 1 || !strings.Contains(r.stderr, `Allowed step characters are: "dtgGvpf".`) {
		t.Errorf("-I dtz: %d %s", r.code, r.stderr)
	}
}

// TestPgbenchRunAndLogs: a run prints pgbench's summary lines (-t per
// client), writes -l logs in pgbench's per-transaction format, and
// --aggregate-interval in its aggregate format, line by line; --max-tries
// shows in the summary (default 1, as pgbench).
func TestPgbenchRunAndLogs(t *testing.T) {
	conn, tg := pgbenchConn(t)
	runPgbench(t, tg, "", append([]string{"-i", "-q"}, conn...)...)
	dir := t.TempDir()
	r := runPgbench(t, tg, dir, append([]string{"-n", "-S", "-t", "7", "-c", "3", "-l", "--log-prefix=tx"}, conn...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, re := range []string{`builtin: select only`, `clients: 3\b`, `processed: 21/21`, `mode: simple`,
		`maximum number of tries: 1\n`, `number of transactions per client: 7`, `tps = \d+\.\d+ \(without initial connection time\)`} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("stdout lacks /%s/:\n%s", re, r.stdout)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "tx.*"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// client_id transaction_no time script_no time_epoch time_us
	line := regexp.MustCompile(`^[012] [1-7] \d+ 0 \d{10} \d{1,6}$`)
	if len(lines) != 21 {
		t.Errorf("%d log lines, want 21", len(lines))
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("log line %q is not pgbench's format", l)
		}
	}
	r = runPgbench(t, tg, dir, append([]string{"-n", "-S", "-T", "2", "-c", "2", "-l", "--aggregate-interval=1", "--log-prefix=agg", "--max-tries=3", "--failures-detailed",
		"-P", "1", "--progress-timestamp"}, conn...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "maximum number of tries: 3") || !strings.Contains(r.stdout, "number of transactions retried: 0") {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// pgbench 15's -P line, with --progress-timestamp and --max-tries.
	progress := regexp.MustCompile(`(?m)^progress: \d{10}\.\d{3} s, \d+\.\d tps, lat \d+\.\d{3} ms stddev \d+\.\d{3}, 0 failed, 0 retried, 0 retries$`)
	if !progress.MatchString(r.stderr) {
		t.Errorf("no pgbench -P line in stderr:\n%s", r.stderr)
	}
	logs, _ = filepath.Glob(filepath.Join(dir, "agg.*"))
	b, _ = os.ReadFile(logs[0])
	// interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
	// serialization_failures deadlock_failures retried retries
	agg := regexp.MustCompile(`^\d{10} \d+ \d+ \d+ \d+ \d+ 0 0 0 0$`)
	lines = strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || len(lines) > 4 {
		t.Errorf("%d aggregate lines for 2 s: %q", len(lines), lines)
	}
	for _, l := range lines {
		if !agg.MatchString(l) {
			t.Errorf("aggregate line %q is not pgbench's format", l)
		}
	}
}

// TestPgbenchAbortStatus: a client that fails is aborted and the run
// exits 2 with pgbench's summary; a transaction left open is an abort.
func TestPgbenchAbortStatus(t *testing.T) {
	conn, tg := pgbenchConn(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sql")
	open := filepath.Join(dir, "open.sql")
	os.WriteFile(bad, []byte("SELECT 1/0;\n"), 0o600)
	os.WriteFile(open, []byte("BEGIN;\nSELECT 1;\n"), 0o600)
	r := runPgbench(t, tg, dir, append([]string{"-n", "-t", "1", "-f", bad}, conn...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "ERROR:  division by zero") || !strings.Contains(r.stdout, "processed: 0/1") {
		t.Errorf("1/0: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runPgbench(t, tg, dir, append([]string{"-n", "-t", "10", "-f", open}, conn...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "end of script reached without completing the last transaction") {
		t.Errorf("open transaction: exit %d\n%s", r.code, r.stderr)
	}
	start := time.Now()
	r = runPgbench(t, tg, dir, append([]string{"-n", "-t", "1", "-c", "2", "--exit-on-abort", "-f", bad}, conn...)...)
	if r.code != 2 || time.Since(start) > time.Minute {
		t.Errorf("--exit-on-abort: exit %d", r.code)
	}
}

// TestRunMaxRetries: `dbarena run --max-retries N` makes the runner's
// retries of serialization failures explicit (they were a silent 100):
// 0 never reruns an event, N reruns each failed event N times.
func TestRunMaxRetries(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "serialization.sql")
	os.WriteFile(file, []byte("DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$;\n"), 0o600)
	for _, n := range []int64{0, 2} {
		js := filepath.Join(dir, fmt.Sprintf("r%d.json", n))
		dbarena(t, "run", "script", pgTarget, "--file", file, "--time", "1", "--max-retries", strconv.FormatInt(n, 10),
			"--ignore-errors", "all", "--monitor", "none", "--json", js).mustSucceed(t)
		tot := readSummary(t, js).Totals
		// The event running at the run's end may have been retried
		// without failing for good.
		if tot.Errors == 0 || tot.Retries < n*tot.Errors || tot.Retries > n*(tot.Errors+1) {
			t.Errorf("--max-retries %d: %d errors, %d retries; want %d retries per error", n, tot.Errors, tot.Retries, n)
		}
	}
	if r := dbarena(t, "run", "script", pgTarget, "--file", file, "--max-retries", "-1"); r.code != 2 {
		t.Errorf("--max-retries -1: exit %d, want 2: %s", r.code, r.stderr)
	}
}

// TestPrepareScriptInitFlags: `prepare script`'s pgbench -i flags on
// PostgreSQL (server-side generation, range partitions, unlogged tables,
// fillfactor), and a bad one refused with exit 2 naming the flag.
func TestPrepareScriptInitFlags(t *testing.T) {
	_, tg := pgbenchConn(t)
	dbarena(t, "prepare", "script", pgTarget, "--scale", "1", "--init-steps", "dtGvp", "--partitions", "3",
		"--unlogged-tables", "--fillfactor", "95", "--monitor", "none").mustSucceed(t)
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://%s:%s@%s:%d/%s", tg.User, tg.Password, tg.Host, tg.Port, tg.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var parts, unlogged, rows int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE c.relpersistence = 'u')
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'pgbench_accounts'::regclass`).Scan(&parts, &unlogged); err != nil || parts != 3 || unlogged != 3 {
		t.Errorf("%d partitions, %d unlogged (%v); want 3 unlogged range partitions", parts, unlogged, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM pgbench_accounts_3").Scan(&rows); err != nil || rows != 33332 {
		t.Errorf("pgbench_accounts_3 holds %d rows (%v), want 33332 as pgbench's ranges", rows, err)
	}
	sizes := tableSizes(t, tg, "public")
	if !strings.Contains(sizes["pgbench_accounts_2"], "fillfactor=95") {
		t.Errorf("pgbench_accounts_2: %q", sizes["pgbench_accounts_2"])
	}
	r := dbarena(t, "prepare", "script", pgTarget, "--fillfactor", "5")
	if r.code != 2 || !strings.Contains(r.stderr, "--fillfactor 5: must be in range 10..100") {
		t.Errorf("--fillfactor 5: exit %d: %s", r.code, r.stderr)
	}
	r = dbarena(t, "prepare", "script", pgTarget, "--init-steps", "dtq")
	if r.code != 2 || !strings.Contains(r.stderr, `unrecognized initialization step "q"`) {
		t.Errorf("--init-steps dtq: exit %d: %s", r.code, r.stderr)
	}
	dbarena(t, "cleanup", "script", pgTarget).mustSucceed(t)
}
