package script

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/rawsock"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// oneEvent runs one event of a fresh worker of wl (client id 0) and
// returns the worker (closed by the test's end) and the event's error.
func oneEvent(t *testing.T, wl *Workload, env workload.Env) (*worker, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := env.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w := newWorker(t, wl, env, conn, 0, 1)
	t.Cleanup(func() { w.Close() })
	var ev workload.Event
	return w, w.Event(ctx, &ev)
}

// stepOnce runs one event of a new stepping worker of wl (client 0).
func stepOnce(t *testing.T, wl *Workload, env workload.Env) (*worker, error) {
	t.Helper()
	waiting := rawsock.WithWaiter(context.Background(), soleWaiter{})
	w0, err := wl.DialWorker(waiting, env, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	w := w0.(*worker)
	t.Cleanup(func() { w.Close() })
	if !w.CanStep() {
		t.Fatal("CanStep: false")
	}
	var ev workload.Event
	return w, stepEvent(w, &ev)
}

func get(t *testing.T, w *worker, name string) string {
	t.Helper()
	v, ok := w.st.Get(name)
	if !ok {
		t.Fatalf(":%s undefined", name)
	}
	return v.Text()
}

// \gset after a compound query keeps the last result; \aset stores every
// result's last row, whatever their column counts (it used to panic).
func TestCompoundGsetAset(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	gset := writeFile(t, "gset.sql", "SELECT 1 AS a \\; SELECT 2 AS a, 3 AS b \\gset\n")
	aset := writeFile(t, "aset.sql", "SELECT 1 AS x, 2 AS y \\; SELECT 8 AS z \\; SELECT 9 AS e WHERE false \\; SELECT NULL AS n \\aset p_\n")
	gsetCount := writeFile(t, "gset0.sql", "SELECT 1 AS a \\; SELECT 1 WHERE false \\gset\n")
	gsetCmd := writeFile(t, "gset1.sql", "SELECT 1 AS a \\; SET search_path = public \\gset\n")
	for _, client := range clientsFor(target.FlavorPostgres) {
		t.Run(client, func(t *testing.T) {
			for _, step := range []bool{false, true} {
				if step && client == ClientSQL {
					continue
				}
				run := func(file string) (*worker, error) {
					wl := setup(t, "--file", file, "--client", client)
					if !step {
						return oneEvent(t, wl, env)
					}
					return stepOnce(t, wl, env)
				}
				w, err := run(gset)
				if err != nil {
					t.Fatalf("gset (step %v): %v", step, err)
				}
				if get(t, w, "a") != "2" || get(t, w, "b") != "3" {
					t.Errorf("gset (step %v): a=%s b=%s, want 2 and 3 (the last result)", step, get(t, w, "a"), get(t, w, "b"))
				}
				w, err = run(aset)
				if err != nil {
					t.Fatalf("aset (step %v): %v", step, err)
				}
				for name, want := range map[string]string{"p_x": "1", "p_y": "2", "p_z": "8", "p_n": ""} {
					if got := get(t, w, name); got != want {
						t.Errorf("aset (step %v): :%s = %q, want %q", step, name, got, want)
					}
				}
				if _, ok := w.st.Get("p_e"); ok {
					t.Errorf("aset (step %v): an empty result set :p_e", step)
				}
				for _, f := range []string{gsetCount, gsetCmd} {
					if _, err := run(f); err == nil || !strings.Contains(err.Error(), "expected one row, got 0") {
						t.Errorf("%s (step %v): %v, want expected one row, got 0", f, step, err)
					}
				}
			}
		})
	}
}

// pgbench refuses to store a column whose name is not a variable's.
func TestGsetBadName(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	file := writeFile(t, "bad.sql", "SELECT 1 \\gset\n")
	for _, client := range clientsFor(target.FlavorPostgres) {
		wl := setup(t, "--file", file, "--client", client)
		if _, err := oneEvent(t, wl, env); err == nil || !strings.Contains(err.Error(), "error storing into variable ?column?") {
			t.Errorf("%s: %v, want error storing into variable ?column?", client, err)
		}
	}
}

// COPY in a script gets pgbench's error, on every client and protocol.
func TestCopyRefused(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	for _, q := range []string{"COPY (SELECT 1) TO STDOUT;\n", "CREATE TEMP TABLE IF NOT EXISTS cp (a int);\nCOPY cp FROM STDIN;\n"} {
		file := writeFile(t, "copy.sql", q)
		for _, run := range protoClients(target.FlavorPostgres) {
			t.Run(run[0]+"/"+run[1], func(t *testing.T) {
				wl := setup(t, "--file", file, "--protocol", run[0], "--client", run[1])
				_, err := oneEvent(t, wl, env)
				if err == nil || !strings.Contains(err.Error(), "COPY is not supported in pgbench") {
					t.Errorf("%q: %v, want COPY is not supported in pgbench", q, err)
				}
			})
		}
	}
}

// A transaction left open at the script's end aborts the client.
func TestOpenTransactionAtEnd(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	file := writeFile(t, "open.sql", "BEGIN;SELECT 1;")
	for _, client := range clientsFor(target.FlavorPostgres) {
		wl := setup(t, "--file", file, "--client", client)
		_, err := oneEvent(t, wl, env)
		if err == nil || !strings.Contains(err.Error(), "end of script reached without completing the last transaction") {
			t.Errorf("%s: %v, want end of script reached without completing the last transaction", client, err)
		}
		if client == ClientAuto {
			if _, err := stepOnce(t, wl, env); err == nil || !strings.Contains(err.Error(), "without completing") {
				t.Errorf("in steps: %v, want end of script reached without completing the last transaction", err)
			}
		}
	}
}

// Values reach SQL as pgbench writes them: NULL, Infinity, -D booleans.
func TestValuesInSQL(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	file := writeFile(t, "v.sql", `\set n NULL
\set inf 1.0/0
\set r int(3.7)
\set b :of AND true
\if false
\set never 1/0
\endif
\sleep 2ms
\sleep :one ms
SELECT :n IS NULL AS isnull, ':inf'::float8 = 'Infinity' AS isinf, :r AS r, :b AS b \gset
`)
	// Under the extended and prepared protocols, pgbench sends a NULL
	// variable as the text NULL.
	ext := writeFile(t, "x.sql", "\\set n NULL\n\\set inf -1.0/0\nSELECT :n::text AS nt, :inf::float8::text AS it \\gset\n")
	for _, run := range protoClients(target.FlavorPostgres) {
		if run[0] == Simple {
			continue // substituted: SELECT NULL::text, -Infinity::float8 (an error, as pgbench)
		}
		wl := setup(t, "--file", ext, "--protocol", run[0], "--client", run[1])
		w, err := oneEvent(t, wl, env)
		if err != nil {
			t.Fatalf("%v: %v", run, err)
		}
		if get(t, w, "nt") != "NULL" || get(t, w, "it") != "-Infinity" {
			t.Errorf("%v: NULL sent as %q, -Infinity as %q", run, get(t, w, "nt"), get(t, w, "it"))
		}
	}
	for _, run := range protoClients(target.FlavorPostgres) {
		if run[0] != Simple {
			continue // :n IS NULL needs substituted text
		}
		wl := setup(t, "--file", file, "--client", run[1], "--define", "of=of", "--define", "one=1.5")
		w, err := oneEvent(t, wl, env)
		if err != nil {
			t.Fatalf("%v: %v", run, err)
		}
		for name, want := range map[string]string{"isnull": "t", "isinf": "t", "r": "4", "b": "f"} {
			if got := get(t, w, name); got != want {
				t.Errorf("%v: :%s = %q, want %q", run, name, got, want)
			}
		}
	}
}

// \shell and \setshell run commands as pgbench does, without the
// environment's passwords and never as root.
func TestShellCommands(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	t.Setenv("PGPASSWORD", "secret-of-the-test")
	t.Setenv("SUDO_UID", "")
	file := writeFile(t, "sh.sql", `\set x 20
\setshell v echo :x
\setshell pw echo ${PGPASSWORD:-7}
\setshell u id -u
\shell true ::literal
SELECT :v + 1 AS w \gset
`)
	wl := setup(t, "--file", file)
	w, err := oneEvent(t, wl, env)
	if err != nil {
		t.Fatal(err)
	}
	if get(t, w, "w") != "21" {
		t.Errorf(":w = %s, want 21", get(t, w, "w"))
	}
	// The password variable is not passed: the command sees no PGPASSWORD.
	if got := get(t, w, "pw"); got != "7" {
		t.Errorf("the command saw PGPASSWORD (%q)", got)
	}
	wantUID := strconv.Itoa(os.Geteuid())
	if os.Geteuid() == 0 {
		wantUID = "65534"
	}
	if got := get(t, w, "u"); got != wantUID {
		t.Errorf("the command ran as uid %s, want %s", got, wantUID)
	}
	for _, tc := range []struct{ script, want string }{
		{"\\shell false\n", "shell: could not launch shell command"},
		{"\\shell echo :nosuchvariable\n", `shell: undefined variable ":nosuchvariable"`},
		{"\\setshell v echo one\n", `setshell: shell command must return an integer (not "one\n")`},
		{"\\setshell v no-such-command-dbarena\n", "setshell: could not read result of shell command"},
		{"\\shell echo " + strings.Repeat("x", 300) + "\n", "shell: shell command is too long"},
	} {
		wl := setup(t, "--file", writeFile(t, "bad.sql", tc.script))
		if _, err := oneEvent(t, wl, env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.script, err, tc.want)
		}
	}
}

// pgbenchConn is the environment and arguments pgbench needs to reach
// the sandbox of env (the password only in the child's environment).
func pgbenchConn(t *testing.T, env workload.Env) ([]string, []string) {
	t.Helper()
	tg := env.Target
	host := tg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	args := []string{"-h", host, "-p", strconv.Itoa(tg.Port), "-U", tg.User, tg.Database}
	return args, append(os.Environ(), "PGPASSWORD="+tg.Password)
}

// The same --random-seed draws pgbench's numbers: every random function,
// hash() with :default_seed, permute() and the weighted choice of
// scripts. The reference is real pgbench 15, run by the test on the same
// server.
func TestPgbenchSeed(t *testing.T) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed (apt-get install postgresql-client-15): no reference to compare with")
	}
	env := sandboxtest.Env(t, target.FlavorPostgres)
	ctx := context.Background()
	for _, q := range []string{"DROP TABLE IF EXISTS seed_cmp", "CREATE TABLE seed_cmp (id bigserial, tool text, script text, ur bigint, er bigint, gr bigint, zr bigint, h bigint, f bigint, p bigint, ds bigint, rs bigint)"} {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	body := `\set ur random(1, 1000000)
\set er random_exponential(1, 1000, 2.5)
\set gr random_gaussian(1, 1000, 2.5)
\set zr random_zipfian(1, 1000, 1.07)
\set h hash(:ur)
\set f hash_fnv1a(:ur)
\set p permute(:ur, 1000)
INSERT INTO seed_cmp (tool, script, ur, er, gr, zr, h, f, p, ds, rs) VALUES (':tool', '%s', :ur, :er, :gr, :zr, :h, :f, :p, :default_seed, :random_seed);
`
	a := writeFile(t, "a.sql", fmt.Sprintf(body, "a"))
	b := writeFile(t, "b.sql", fmt.Sprintf(body, "b"))
	const events = 40
	for _, seed := range []string{"5432", "368968707"} {
		args, penv := pgbenchConn(t, env)
		cmd := exec.Command(pgbench, append([]string{"-n", "-c", "1", "-t", strconv.Itoa(events), "--random-seed=" + seed,
			"-D", "tool=pgbench", "-f", a + "@3", "-f", b + "@1"}, args...)...)
		cmd.Env = penv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pgbench: %v\n%s", err, out)
		}
		for _, client := range clientsFor(target.FlavorPostgres) {
			wl := setup(t, "--file", a+"@3", "--file", b+"@1", "--random-seed", seed, "--define", "tool=dbarena-"+client, "--client", client)
			wl.SetThreads(1)
			conn, err := env.DB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			runEvents(t, wl, env, conn, events)
			conn.Close()
		}
		rows, err := env.DB.QueryContext(ctx, "SELECT tool, string_agg(concat_ws(',', script, ur, er, gr, zr, h, f, p, ds, rs), ';' ORDER BY id) FROM seed_cmp GROUP BY tool")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for rows.Next() {
			var tool, seq string
			if err := rows.Scan(&tool, &seq); err != nil {
				t.Fatal(err)
			}
			got[tool] = seq
		}
		rows.Close()
		ref := got["pgbench"]
		if strings.Count(ref, ";") != events-1 || !strings.Contains(ref, "a,") || !strings.Contains(ref, "b,") {
			t.Fatalf("seed %s: pgbench recorded %q", seed, ref)
		}
		for _, client := range clientsFor(target.FlavorPostgres) {
			if d := got["dbarena-"+client]; d != ref {
				t.Errorf("seed %s, --client %s: dbarena drew\n%s\npgbench drew\n%s", seed, client, d, ref)
			}
		}
		if _, err := env.DB.ExecContext(ctx, "TRUNCATE seed_cmp"); err != nil {
			t.Fatal(err)
		}
	}
}

// Without --random-seed, runs are seeded from the clock, and the seed is
// noted so that a run can be repeated.
func TestSeedFromClock(t *testing.T) {
	t.Setenv("PGBENCH_RANDOM_SEED", "")
	os.Unsetenv("PGBENCH_RANDOM_SEED")
	file := writeFile(t, "s.sql", "SELECT 1;\n")
	a, b := setup(t, "--file", file), setup(t, "--file", file)
	sa, ea := a.runSeed()
	time.Sleep(2 * time.Microsecond)
	sb, _ := b.runSeed()
	if ea || sa == sb {
		t.Errorf("two runs seeded %d and %d (explicit %v), want different seeds from the clock", sa, sb, ea)
	}
	if n := a.Notes(1); len(n) != 1 || !strings.Contains(n[0], "--random-seed="+strconv.FormatUint(sa, 10)) {
		t.Errorf("notes %q, want the seed to repeat", n)
	}
	c := setup(t, "--file", file, "--random-seed", "77")
	if n := c.Notes(1); len(n) != 1 || n[0] != "setting random seed to 77" {
		t.Errorf("notes %q, want pgbench's setting random seed to 77", n)
	}
	if p := c.Params()["random_seed"]; p != "77" {
		t.Errorf("params random_seed %v, want 77", p)
	}
	wl := New().(*Workload)
	if err := wl.rseed.Set("one"); err == nil || !strings.Contains(err.Error(), `unrecognized random seed option "one"`) {
		t.Errorf("--random-seed one: %v", err)
	}
	_ = pgscript.MaxParams
}

// What pgbench accepts but refuses when it runs fails at run time here
// too, naming the file and line: an undefined variable (noted before the
// run), \set of an invalid name, pipeline commands out of place.
func TestRunTimeScriptErrors(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	for _, tc := range []struct{ script, want string }{
		{"SELECT 1;\n\n\\set x :nope + 1\n", `:3: undefined variable "nope"`},
		{"\\sleep :nope\n", `:1: sleep: undefined variable "nope"`},
		{"\\set . 1\n", `:1: set: invalid variable name: "."`},
		{"\\startpipeline\nSELECT 1;\n\\startpipeline\n\\endpipeline\n", ":3: \\startpipeline: already in pipeline mode"},
		{"SELECT 1;\n\\endpipeline\n", ":2: \\endpipeline: not in pipeline mode"},
		{"SELECT 1;\n\\syncpipeline\n", ":2: \\syncpipeline: not in pipeline mode"},
		{"\\startpipeline\nSELECT 1 \\gset\n\\endpipeline\n", ":2: \\gset is not allowed in pipeline mode"},
		{"\\startpipeline\nSELECT 1;\n", ":2: end of script reached with pipeline open"},
	} {
		file := writeFile(t, "rt.sql", tc.script)
		for _, client := range clientsFor(target.FlavorPostgres) {
			t.Run(client, func(t *testing.T) {
				wl := setup(t, "--file", file, "--protocol", Extended, "--client", client)
				_, err := oneEvent(t, wl, env)
				if err == nil || !strings.Contains(err.Error(), file+tc.want) {
					t.Errorf("%q: %v, want %s%s", tc.script, err, file, tc.want)
				}
				wl.Summarize(&summary.Run{}) // the failure's figures (it used to panic)
			})
		}
	}
	wl := setup(t, "--file", writeFile(t, "nope.sql", "\\set x :nope\n"))
	if n := wl.Notes(1); len(n) != 2 || !strings.Contains(n[0], "undefined variable :nope") {
		t.Errorf("notes %q, want the undefined variable noted", n)
	}
}

// At most 128 scripts, as pgbench.
func TestTooManyScripts(t *testing.T) {
	file := writeFile(t, "one.sql", "SELECT 1;\n")
	var args []string
	for range 129 {
		args = append(args, "--file", file)
	}
	wl := New().(*Workload)
	fs := pflag.NewFlagSet("script", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	errs := wl.Validate()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "at most 128 SQL scripts are allowed") {
		t.Errorf("129 scripts: %v", errs)
	}
	if errs := setupErrs(args[:256]); len(errs) != 0 {
		t.Errorf("128 scripts: %v", errs)
	}
}

func setupErrs(args []string) []error {
	wl := New().(*Workload)
	fs := pflag.NewFlagSet("script", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return []error{err}
	}
	return wl.Validate()
}

// A client's streams go on across its connections (--connect per-event,
// a reconnection): a new worker of the same client does not draw the same
// numbers again, and the numbers are those one pgbench client draws.
func TestStreamsAcrossReconnects(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	file := writeFile(t, "r.sql", "\\set r random(1, 1000000)\nSELECT :r AS v \\gset\n")
	wl := setup(t, "--file", file, "--random-seed", "5432")
	wl.SetThreads(1)
	var got []string
	for range 2 {
		w, err := oneEvent(t, wl, env)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, get(t, w, "v"))
	}
	// pgbench 15.18 -t 2 --random-seed=5432 draws 856256 then 471314 (-d).
	if got[0] != "856256" || got[1] != "471314" {
		t.Errorf("two connections of client 0 drew %v, want pgbench's [856256 471314]", got)
	}
}

// With several clients, each dbarena thread draws what the pgbench client
// of the same number draws under -c N -j N (a thread per client): the
// same sequence of scripts and numbers, as far as both ran.
func TestPgbenchSeedClients(t *testing.T) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed (apt-get install postgresql-client-15): no reference to compare with")
	}
	env := sandboxtest.Env(t, target.FlavorPostgres)
	ctx := context.Background()
	for _, q := range []string{"DROP TABLE IF EXISTS seed_mc", "CREATE TABLE seed_mc (id bigserial, tool text, cid int, script text, ur bigint, g bigint)"} {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	body := "\\set ur random(1, 1000000)\n\\set g random_gaussian(1, 100, 2.5)\nINSERT INTO seed_mc (tool, cid, script, ur, g) VALUES (':tool', :client_id, '%s', :ur, :g);\n"
	a := writeFile(t, "a.sql", fmt.Sprintf(body, "a"))
	b := writeFile(t, "b.sql", fmt.Sprintf(body, "b"))
	const clients, perClient = 3, 12
	args, penv := pgbenchConn(t, env)
	cmd := exec.Command(pgbench, append([]string{"-n", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(clients), "-t", strconv.Itoa(perClient),
		"--random-seed=99", "-D", "tool=pgbench", "-f", a + "@2", "-f", b + "@1"}, args...)...)
	cmd.Env = penv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgbench: %v\n%s", err, out)
	}
	wl := setup(t, "--file", a+"@2", "--file", b+"@1", "--random-seed", "99", "--define", "tool=dbarena")
	wl.SetThreads(clients)
	for id := 0; id < clients; id++ {
		w := newWorker(t, wl, env, nil, id, 1)
		for range perClient {
			var ev workload.Event
			if err := w.Event(ctx, &ev); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	rows, err := env.DB.QueryContext(ctx, "SELECT tool, cid, string_agg(concat_ws(',', script, ur, g), ';' ORDER BY id) FROM seed_mc GROUP BY tool, cid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var tool, seq string
		var cid int
		if err := rows.Scan(&tool, &cid, &seq); err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprintf("%s/%d", tool, cid)] = seq
	}
	for id := 0; id < clients; id++ {
		p, d := got[fmt.Sprintf("pgbench/%d", id)], got[fmt.Sprintf("dbarena/%d", id)]
		if p == "" || p != d {
			t.Errorf("client %d: dbarena drew\n%s\npgbench drew\n%s", id, d, p)
		}
	}
}
