package micro

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// testScale keeps every test tiny: micro_a 100 rows, most tests 1..100 ops.
const testScale = "0.01"

func setup(t *testing.T, args ...string) (*Workload, *pflag.FlagSet) {
	t.Helper()
	wl := New().(*Workload)
	fs := pflag.NewFlagSet("micro", pflag.ContinueOnError)
	fs.Int64("events", 0, "")
	fs.Int("threads", 1, "")
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	return wl, fs
}

type nopProgress struct{}

func (nopProgress) SetTotal(int64)   {}
func (nopProgress) Add(int64, int64) {}

func scalar(t *testing.T, env workload.Env, q string) int64 {
	t.Helper()
	var n int64
	if err := env.DB.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// status reads a MariaDB global status counter.
func status(t *testing.T, env workload.Env, name string) int64 {
	t.Helper()
	var k string
	var n int64
	if err := env.DB.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &n); err != nil {
		t.Fatalf("status %s: %v", name, err)
	}
	return n
}

// run runs the suite to its end through the runner, as `dbarena run` does.
func run(t *testing.T, wl *Workload, env workload.Env, threads int) *summary.Run {
	t.Helper()
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Duration = threads, 0
	cfg.Events = wl.Planned(threads) + int64(threads-1)
	wl.SetThreads(threads)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, cfg, env, wl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	s := &summary.Run{}
	res.Fill(s)
	wl.Summarize(s)
	if !s.HasSection(summary.SectionMicro) || len(s.Sections) != 1 {
		t.Errorf("sections %q, want the micro section", s.Sections)
	}
	return s
}

func TestSuite(t *testing.T) {
	for _, fl := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(fl), func(t *testing.T) {
			env := sandboxtest.Env(t, fl)
			ctx := context.Background()
			wl, fs := setup(t, "--scale", testScale)
			wl.keep = true
			if want := wl.Planned(1); fs.Lookup("events").Value.String() != strings.TrimSpace(itoa(want)) {
				t.Fatalf("--events default = %s, want the suite's %d operations", fs.Lookup("events").Value, want)
			}
			if err := wl.Ready(ctx, env); err == nil {
				t.Fatal("Ready before prepare: want a NotReadyError")
			}
			if err := wl.Prepare(ctx, env, 1, nopProgress{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = wl.Cleanup(context.Background(), env) })
			if err := wl.Ready(ctx, env); err != nil {
				t.Fatal(err)
			}
			mysql := fl == target.FlavorMariaDB
			var conns, creates, drops, rollbacks int64
			if mysql {
				conns, creates, drops, rollbacks = status(t, env, "Connections"), status(t, env, "Com_create_table"),
					status(t, env, "Com_drop_table"), status(t, env, "Com_rollback")
			}

			s := run(t, wl, env, 1)

			// Every operation ran exactly its count, none left over.
			for _, tt := range suite {
				n := int64(wl.count(tt))
				if got := s.PerType[tt.op].Count; got != n {
					t.Errorf("%s: %d events, want %d", tt.op, got, n)
				}
				if _, ok := s.Figures[SecondsPrefix+tt.op]; !ok {
					t.Errorf("%s: no seconds figure", tt.op)
				}
			}
			if _, ok := s.PerType[idleType]; ok {
				t.Error("pseudo events left in per_type")
			}
			if s.Totals.Events != wl.Planned(1) {
				t.Errorf("events = %d, want %d", s.Totals.Events, wl.Planned(1))
			}
			count := func(op string) int64 { return int64(wl.count(suite[indexOp(op)])) }
			// insert: single rows plus 100 per multi-row insert; duplicates ignored.
			if got, want := scalar(t, env, "SELECT COUNT(*) FROM micro_ins_0"), count("insert")+100*count("insert_multi_100"); got != want {
				t.Errorf("micro_ins_0 has %d rows, want %d", got, want)
			}
			// update: deletes took their rows, update_of_key_big moved every k.
			rows := int64(wl.rows())
			left := rows - count("delete_key") - deleteStep*count("delete_range")
			if got := scalar(t, env, "SELECT COUNT(*) FROM micro_u_0"); got != left {
				t.Errorf("micro_u_0 has %d rows, want %d", got, left)
			}
			if got := scalar(t, env, "SELECT COUNT(*) FROM micro_u_0 u JOIN micro_a a ON a.id = u.id WHERE u.k = a.k + "+itoa(count("update_of_key_big"))); got != left {
				t.Errorf("update_of_key_big: %d of %d rows moved", got, left)
			}
			// alter: every added column dropped again.
			cols := "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'micro_alt_0' AND table_schema = " + map[bool]string{true: "DATABASE()", false: "current_schema()"}[mysql]
			if got := scalar(t, env, cols); got != 4 {
				t.Errorf("micro_alt_0 has %d columns, want 4", got)
			}
			if got := scalar(t, env, "SELECT COUNT(*) FROM micro_wide_0"); got != count("insert_wide_row") {
				t.Errorf("micro_wide_0 has %d rows, want %d", got, count("insert_wide_row"))
			}
			// transactions: committed rows stay, rolled back ones do not.
			if got := scalar(t, env, "SELECT COUNT(*) FROM micro_tx_0"); got != count("commit") {
				t.Errorf("micro_tx_0 has %d rows, want %d", got, count("commit"))
			}
			// create: every table made was dropped.
			names, err := microTables(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if strings.HasPrefix(n, "micro_c_") {
					t.Errorf("table %s left by create/drop", n)
				}
			}
			if mysql {
				if d := status(t, env, "Connections") - conns; d < count("connect")+count("connect+select_1") {
					t.Errorf("Connections grew by %d, want >= %d", d, count("connect")+count("connect+select_1"))
				}
				if d := status(t, env, "Com_create_table") - creates; d < count("create_table") {
					t.Errorf("Com_create_table grew by %d, want >= %d", d, count("create_table"))
				}
				if d := status(t, env, "Com_drop_table") - drops; d < count("drop_table") {
					t.Errorf("Com_drop_table grew by %d, want >= %d", d, count("drop_table"))
				}
				if d := status(t, env, "Com_rollback") - rollbacks; d < count("rollback") {
					t.Errorf("Com_rollback grew by %d, want >= %d", d, count("rollback"))
				}
			}
			out := wl.FormatSummary(s)
			if !strings.Contains(out, "Time for select_join_10 (2): ") || !strings.Contains(out, "Time for update_of_key_big (1): ") {
				t.Errorf("summary lacks sql-bench lines:\n%s", out)
			}
			// Without keep, the tests drop their own tables.
			wl2, _ := setup(t, "--scale", testScale, "--tests", "insert,transactions")
			run(t, wl2, env, 1)
			names, _ = microTables(ctx, env)
			for _, n := range names {
				if n == "micro_tx_0" || n == "micro_ins_0" {
					t.Errorf("table %s not dropped after its test", n)
				}
			}
		})
	}
}

// TestTimeLimit: a capped test is marked extrapolated, with a note; the
// run still ends by itself at the planned event count.
func TestTimeLimit(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	wl, _ := setup(t, "--scale", "0.1", "--tests", "connect", "--time-limit", "1ns")
	s := run(t, wl, env, 1)
	for _, op := range []string{"connect", "connect+select_1", "select_1"} {
		if s.PerType[op].Count != 1 || s.Figures[ExtrapolatedPrefix+op] != 1 {
			t.Errorf("%s: %d events, extrapolated %v; want 1 and marked", op, s.PerType[op].Count, s.Figures[ExtrapolatedPrefix+op])
		}
	}
	if len(s.Notes) != 3 || !strings.Contains(s.Notes[0], "extrapolated") {
		t.Errorf("notes = %q", s.Notes)
	}
	if !strings.Contains(wl.FormatSummary(s), "(estimated: --time-limit)") {
		t.Error("summary does not mark the estimate")
	}
}

// TestThreads: two workers each run the suite on their own tables and the
// run ends by itself.
func TestThreads(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	wl, _ := setup(t, "--scale", testScale, "--tests", "transactions")
	s := run(t, wl, env, 2)
	if got := s.PerType["commit"].Count; got != 2*int64(wl.countBase(1000)) {
		t.Errorf("commit: %d events over 2 workers, want %d", got, 2*wl.countBase(1000))
	}
}

func TestValidate(t *testing.T) {
	for _, args := range [][]string{{"--tests", "nope"}, {"--scale", "0"}, {"--tests", "select,select"}, {"--time-limit", "-1s"}} {
		wl := New()
		fs := pflag.NewFlagSet("micro", pflag.ContinueOnError)
		wl.Flags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if errs := wl.Validate(); len(errs) == 0 {
			t.Errorf("%v: no error", args)
		}
	}
	wl, _ := setup(t, "--tests", "wisconsin,connect")
	if got := wl.Params()["tests"]; got != "connect,wisconsin" {
		t.Errorf("tests = %v, want suite order", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDemand(t *testing.T) {
	wl, _ := setup(t, "--scale", "2")
	if d := wl.Demand(3); d.Connections != 6 || d.Tables != 11+5*3+3*200 {
		t.Errorf("demand %+v", d)
	}
	wl, _ = setup(t, "--tests", "select")
	if d := wl.Demand(1); d.Tables != 16 {
		t.Errorf("demand without create %+v", d)
	}
}

// TestCutShort: a run that ends before the suite (here --events short of
// it) says so in a note and extrapolates the operation it cut.
func TestCutShort(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	wl, _ := setup(t, "--scale", testScale, "--tests", "transactions")
	wl.SetThreads(1)
	cfg := runner.DefaultConfig()
	cfg.Duration, cfg.Events = 0, 5 // of 20
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, cfg, env, wl, nil)
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	s := &summary.Run{}
	res.Fill(s)
	wl.Summarize(s)
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "commit stopped after 5 of 10 operations") || !strings.Contains(s.Notes[0], "1 test(s) after it did not run") {
		t.Errorf("notes %q", s.Notes)
	}
	if s.Figures[ExtrapolatedPrefix+"commit"] != 1 {
		t.Error("cut operation not marked extrapolated")
	}
	_ = wl.Cleanup(ctx, env)
}
