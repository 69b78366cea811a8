package replay

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// builder writes a capture in memory.
type builder struct {
	flavor string
	evs    []capture.Event
}

func str(s string) *string { return &s }

func (b *builder) add(session string, ms int64, kind, sql string) *capture.Event {
	b.evs = append(b.evs, capture.Event{Session: session, TUS: ms * 1000, Kind: kind, SQL: sql})
	return &b.evs[len(b.evs)-1]
}

func (b *builder) file(t testing.TB) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.Header{Flavor: b.flavor, Source: "test", Start: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	// Events in start order, each session's in its own order (stable).
	evs := append([]capture.Event(nil), b.evs...)
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].TUS < evs[j-1].TUS; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	p := t.TempDir() + "/capture.jsonl"
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// traffic is a capture of four sessions on database db: session variables,
// a transaction, prepared statements, a temporary table a later statement
// reads, and per session an ordered sequence of inserts into seqlog.
func traffic(flavor target.Family, db string, spanMS int64) *builder {
	pg := flavor == target.Postgres
	b := &builder{flavor: string(flavor)}
	ph := "?"
	if pg {
		ph = "$1"
	}
	step := spanMS / 10
	for si := 1; si <= 4; si++ {
		s := fmt.Sprintf("s%d", si)
		at := int64(si-1) * step / 4
		c := b.add(s, at, capture.KindConnect, "")
		c.DB, c.User = db, "app"
		// A session variable the inserts read.
		if pg {
			b.add(s, at+1, capture.KindQuery, fmt.Sprintf("SET myapp.k = '%d'", si*100))
		} else {
			b.add(s, at+1, capture.KindQuery, fmt.Sprintf("SET @k = %d", si*100))
		}
		kv := "@k"
		if pg {
			kv = "current_setting('myapp.k')::int"
		}
		for k := 1; k <= 5; k++ {
			b.add(s, at+int64(k)*step, capture.KindQuery,
				fmt.Sprintf("INSERT INTO seqlog (sess, k, kv) VALUES ('%s', %d, %s)", s, k, kv))
		}
		// A transaction.
		b.add(s, at+6*step, capture.KindQuery, "BEGIN")
		b.add(s, at+6*step+1, capture.KindQuery, fmt.Sprintf("UPDATE items SET v = v + 1 WHERE id = %d", 10+si))
		b.add(s, at+6*step+2, capture.KindQuery, "COMMIT")
		// Prepared statements.
		p := b.add(s, at+7*step, capture.KindPrepare, "SELECT v FROM items WHERE id = "+ph)
		p.Name = "get"
		for _, id := range []string{"1", "2"} {
			e := b.add(s, at+7*step+1, capture.KindExecute, "SELECT v FROM items WHERE id = "+ph)
			e.Name, e.Params = "get", []*string{str(id)}
		}
		cl := b.add(s, at+7*step+2, capture.KindClose, "")
		cl.Name = "get"
		// A statement that depends on an earlier one of the session.
		b.add(s, at+8*step, capture.KindQuery, "CREATE TEMPORARY TABLE tmp AS SELECT id, v FROM items WHERE id <= 3")
		b.add(s, at+9*step, capture.KindQuery, "SELECT count(*) FROM tmp")
		b.add(s, at+9*step+1, capture.KindQuery, "SELECT id, v FROM items WHERE id IN (3, 4) ORDER BY id")
		b.add(s, at+spanMS-int64(4-si)*step/4, capture.KindQuit, "")
	}
	return b
}

// setupDB creates database name holding items and an empty seqlog.
func setupDB(t testing.TB, env workload.Env, name string, v2 int) {
	t.Helper()
	ctx := context.Background()
	pg := env.Dialect.Family() == target.Postgres
	exec := func(db *sql.DB, q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The workload account may not create databases: the sandbox's
	// superuser makes it and gives it to the account.
	admin, err := sandboxtest.Manager(t).Admin(env.Target.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	adb, err := env.Dialect.Open(admin, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer adb.Close()
	exec(adb, "DROP DATABASE IF EXISTS "+name)
	if pg {
		exec(adb, "CREATE DATABASE "+name+" OWNER "+env.Target.User)
	} else {
		exec(adb, "CREATE DATABASE "+name)
		exec(adb, "GRANT ALL ON "+name+".* TO '"+env.Target.User+"'@'127.0.0.1'")
	}
	tg := env.Target
	tg.Database = name
	db, err := env.Dialect.Open(tg, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	auto := "INT AUTO_INCREMENT PRIMARY KEY"
	if pg {
		auto = "SERIAL PRIMARY KEY"
	}
	exec(db, "CREATE TABLE items (id INT PRIMARY KEY, v INT NOT NULL)")
	exec(db, fmt.Sprintf("INSERT INTO items VALUES (1, 10), (2, %d), (3, 30), (4, 40), (11, 0), (12, 0), (13, 0), (14, 0)", v2))
	exec(db, "CREATE TABLE seqlog (n "+auto+", sess VARCHAR(10), k INT, kv INT)")
}

// replayRun replays file on env with flags through the runner, as `dbarena
// run replay` does.
func replayRun(t testing.TB, env workload.Env, file string, flags ...string) (*summary.Run, *runner.Result) {
	t.Helper()
	return replayRunCfg(t, env, file, nil, flags...)
}

// replayRunCfg is replayRun with a change to the runner's configuration.
func replayRunCfg(t testing.TB, env workload.Env, file string, change func(*runner.Config), flags ...string) (*summary.Run, *runner.Result) {
	t.Helper()
	wl := New().(*Workload)
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(append([]string{"--capture", file}, flags...)); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	d := wl.RunDefaults()
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Duration, cfg.IgnoreErrors = d.Threads, time.Hour, []string{"all"}
	cfg.OnMeasure = wl.BeginMeasure
	if change != nil {
		change(&cfg)
	}
	wl.SetThreads(cfg.Threads)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := runner.Run(ctx, cfg, env, wl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || res.Err != nil {
		t.Fatalf("replay interrupted %v, err %v", res.Interrupted, res.Err)
	}
	run := &summary.Run{}
	res.Fill(run)
	wl.Summarize(run)
	return run, res
}

func fpByText(t testing.TB, run *summary.Run, prefix string) summary.Type {
	t.Helper()
	for _, ty := range run.PerType {
		if strings.HasPrefix(ty.Text, prefix) {
			return ty
		}
	}
	t.Fatalf("no fingerprint %q in %v", prefix, run.PerType)
	return summary.Type{}
}

func TestReplayMariaDB(t *testing.T)  { testReplay(t, target.FlavorMariaDB) }
func TestReplayPostgres(t *testing.T) { testReplay(t, target.FlavorPostgres) }

func testReplay(t *testing.T, flavor target.Flavor) {
	env := sandboxtest.Env(t, flavor)
	fam := flavor.Family()
	ctx := context.Background()
	setupDB(t, env, "rp_a", 20)
	setupDB(t, env, "rp_b", 21) // a planted difference: items 2
	file := traffic(fam, "rp_a", 400).file(t)

	before := serverCounters(t, env)
	run, res := replayRun(t, env, file, "--speed", "max", "--record-results")
	after := serverCounters(t, env)

	const sessions, inserts, updates, executes = 4, 20, 4, 8
	if res.Errors != 0 {
		t.Fatalf("errors: %v", res.ErrorsByCode)
	}
	if want := int64(sessions * (1 + 5 + 3 + 2 + 3)); res.Queries.Total() != want {
		t.Errorf("statements %d, want %d", res.Queries.Total(), want)
	}
	if run.Threads != 0 && run.Threads != sessions {
		t.Errorf("threads %d", run.Threads)
	}
	// The server's own counters saw the statements.
	d := func(k string) int64 { return after[k] - before[k] }
	if fam == target.MySQL {
		for k, want := range map[string]int64{"Com_insert": inserts, "Com_update": updates, "Com_stmt_execute": executes,
			"Com_stmt_prepare": sessions, "Com_stmt_close": sessions, "Com_begin": sessions, "Com_commit": sessions,
			"Com_create_temporary_table": sessions, "Com_set_option": sessions, "Com_select": 2*sessions + executes} {
			if d(k) != want {
				t.Errorf("%s grew by %d, want %d", k, d(k), want)
				for k := range after {
					if d(k) != 0 {
						t.Log(k, d(k))
					}
				}
			}
		}
	} else {
		waitPG(t, env, "rp_a", inserts, updates)
	}
	// Per-session order holds, and each session's variable was carried.
	checkOrder(t, env, "rp_a", sessions)
	if ty := fpByText(t, run, "select count (*) from tmp"); ty.Count != sessions || ty.Errors != 0 {
		t.Errorf("statement on the session's temporary table: %+v", ty)
	}
	if ty := fpByText(t, run, "select v from items where id = ?"); ty.Count != executes || ty.Rows != executes {
		t.Errorf("prepared: %+v", ty)
	}
	ins := fpByText(t, run, "insert into seqlog")
	if ins.Count != inserts || len(ins.Examples) != 3 || !strings.Contains(ins.Examples[0], "INSERT INTO seqlog") {
		t.Errorf("inserts: %+v", ins)
	}
	if run.Replay == nil || run.Replay.Statements != sessions*14 || run.Replay.Results == "" {
		t.Fatalf("replay figures: %+v", run.Replay)
	}

	// The same capture into the database with the planted difference:
	// exactly the fingerprints that read items 2 differ.
	runB, _ := replayRun(t, env, file, "--speed", "max", "--record-results", "--db", "rp_b")
	var differ []string
	for id, a := range run.PerType {
		if b := runB.PerType[id]; a.ResultDigest != b.ResultDigest {
			differ = append(differ, a.Text)
		}
	}
	if len(differ) != 1 || !strings.HasPrefix(differ[0], "select v from items where id = ?") {
		t.Errorf("fingerprints with different results: %q", differ)
	}
	_ = ctx
}

// checkOrder checks that each session's inserts landed in order, with the
// session's variable.
func checkOrder(t *testing.T, env workload.Env, db string, sessions int) {
	t.Helper()
	tg := env.Target
	tg.Database = db
	c, err := env.Dialect.Open(tg, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query("SELECT sess, k, kv FROM seqlog ORDER BY n")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	last := map[string]int{}
	n := 0
	for rows.Next() {
		var s string
		var k, kv int
		if err := rows.Scan(&s, &k, &kv); err != nil {
			t.Fatal(err)
		}
		n++
		if k != last[s]+1 {
			t.Errorf("session %s: insert %d after %d", s, k, last[s])
		}
		last[s] = k
		if want := int(s[1]-'0') * 100; kv != want {
			t.Errorf("session %s: variable %d, want %d", s, kv, want)
		}
	}
	if n != sessions*5 {
		t.Errorf("%d inserts, want %d", n, sessions*5)
	}
}

// TestPaced replays a capture spanning 4 s at --speed 2: it takes about
// 2 s (never less: nothing runs before it is due), errors are counted per
// fingerprint without stopping it, and the lag behind schedule is measured.
func TestPaced(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	b := &builder{flavor: "postgres"}
	for _, s := range []string{"a", "b"} {
		b.add(s, 0, capture.KindConnect, "")
		for ms := int64(0); ms <= 4000; ms += 500 {
			b.add(s, ms, capture.KindQuery, fmt.Sprintf("SELECT %d", ms))
		}
		b.add(s, 2000, capture.KindQuery, "SELECT * FROM no_such_table")
		b.add(s, 4000, capture.KindQuit, "")
	}
	file := b.file(t)
	run, res := replayRun(t, env, file, "--speed", "2")
	if res.Elapsed < 1950*time.Millisecond || res.Elapsed > 3900*time.Millisecond {
		t.Errorf("a 4 s capture at --speed 2 took %v", res.Elapsed)
	}
	if res.Events != 18 || res.Errors != 2 || res.ErrorsByCode["42P01"] != 2 {
		t.Errorf("events %d errors %d %v", res.Events, res.Errors, res.ErrorsByCode)
	}
	bad := fpByText(t, run, "select * from no_such_table")
	if bad.Errors != 2 || bad.ErrorsByCode["42P01"] != 2 {
		t.Errorf("per-fingerprint errors: %+v", bad)
	}
	if ok := fpByText(t, run, "select ?"); ok.Count != 18 {
		t.Errorf("select ?: %+v", ok)
	}
	r := run.Replay
	if r.LagMS == nil || r.ExpectedS != 2 || len(r.LagSeries) == 0 || r.KeptUpLimitMS != 10 {
		t.Errorf("replay figures: %+v", r)
	}

	// --sessions 1 folds both sessions onto one connection; --loop with a
	// time limit repeats the capture.
	_, res = replayRunCfg(t, env, file, func(c *runner.Config) { c.Threads = 1 }, "--speed", "max", "--sessions", "1")
	if res.Events != 18 || res.Errors != 2 {
		t.Errorf("folded: events %d errors %d", res.Events, res.Errors)
	}
	_, res = replayRunCfg(t, env, file, func(c *runner.Config) { c.Duration = time.Second }, "--speed", "max", "--loop")
	if res.Events+res.Errors <= 20 {
		t.Errorf("--loop: %d statements in %v, want more than one pass (20)", res.Events+res.Errors, res.Elapsed)
	}
}

// TestStopOnError: with --stop-on-error the first server error stops the
// replay (the run's errors are not ignored).
func TestStopOnError(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	b := &builder{flavor: "postgres"}
	b.add("a", 0, capture.KindConnect, "")
	b.add("a", 1, capture.KindQuery, "SELECT 1")
	b.add("a", 2, capture.KindQuery, "SELECT * FROM no_such_table")
	for ms := int64(3); ms < 50; ms++ {
		b.add("a", ms, capture.KindQuery, "SELECT 2")
	}
	wl := New().(*Workload)
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse([]string{"--capture", b.file(t), "--speed", "max", "--stop-on-error"}); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	d := wl.RunDefaults()
	if d.IgnoreErrors || !d.UntilDone || d.Threads != 1 {
		t.Fatalf("run defaults %+v", d)
	}
	cfg := runner.DefaultConfig()
	cfg.Duration, cfg.StopGrace = time.Hour, time.Second
	cfg.OnMeasure = wl.BeginMeasure
	wl.SetThreads(1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := runner.Run(ctx, cfg, env, wl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil || !strings.Contains(res.Err.Error(), "42P01") || res.Events != 1 {
		t.Errorf("err %v, events %d: want the run stopped at the error after 1 statement", res.Err, res.Events)
	}
}
