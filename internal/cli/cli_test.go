package cli

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

func TestBadInputIsOneLineExit2(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"no workload", []string{"run", "--threads", "4"}, "name a workload"},
		{"unknown workload", []string{"run", "oltp_nothing"}, "unknown workload"},
		{"unknown flag", []string{"run", "oltp_read_write", "--bogus=1"}, "--bogus"},
		{"bad threads", []string{"run", "oltp_read_write", "--threads", "0"}, "--threads"},
		{"bad time", []string{"run", "oltp_read_write", "--time", "soon"}, "--time"},
		{"bad rand type", []string{"run", "oltp_read_write", "--rand-type", "sideways"}, "rand-type"},
		{"bad dsn scheme", []string{"run", "oltp_read_write", "--target", "oracle://u:topsecret@h/db"}, "--target"},
		{"bad dsn", []string{"prepare", "oltp_read_write", "--target", "nonsense"}, "--target"},
		{"bad dsn port", []string{"cleanup", "oltp_read_write", "--target", "mysql://u:topsecret@h:99999/db"}, "--target"},
		{"no sandbox", []string{"run", "oltp_read_write", "--target", "sandbox:nosuch", "--time", "1"}, "no such sandbox"},
		{"bad server flavor", []string{"server", "start", "x", "--flavor", "oracle"}, "--flavor"},
		{"bad profile", []string{"server", "start", "x", "--profile", "turbo"}, "profile"},
		{"bad results id", []string{"results", "show", "abc"}, "not a run ID"},
		{"bad tag", []string{"run", "oltp_read_write", "--tag", "novalue"}, "--tag"},
		{"bad tpcc schema", []string{"prepare", "tpcc", "--schema", "wide"}, "--schema"},
		{"bad tpcc weights", []string{"run", "tpcc", "--weights", "1,2"}, "--weights"},
		{"bad tpcc range", []string{"prepare", "tpcc", "--warehouses", "2", "--warehouse-range", "3-4"}, "--warehouse-range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dbarena(t, tt.args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
			}
			if lines := strings.Count(strings.TrimRight(r.stderr, "\n"), "\n"); lines != 0 || r.stderr == "" {
				t.Fatalf("want one line of error, got %q", r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("stderr %q does not mention %q", r.stderr, tt.want)
			}
			if strings.Contains(r.stderr+r.stdout, "topsecret") {
				t.Fatalf("output leaks the password: %q", r.stderr)
			}
		})
	}
}

func TestUnreachableTargetExit3(t *testing.T) {
	r := dbarena(t, "run", "oltp_point_select", "--time", "1", "--target", "mysql://u:topsecret@127.0.0.1:1/db")
	if r.code != ExitUnreachable {
		t.Fatalf("exit %d, want 3; stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "topsecret") || !strings.Contains(r.stderr, "u:***@") {
		t.Fatalf("stderr should name the masked DSN: %q", r.stderr)
	}
}

// prepareSmall loads two small tables on a target.
func prepareSmall(t *testing.T, tg string, extra ...string) {
	t.Helper()
	dbarena(t, withTarget(tg, "cleanup", "oltp_read_write", "--tables", "2")...).mustSucceed(t)
	args := append([]string{"prepare", "oltp_read_write", "--tables", "2", "--table-size", "2000", "--threads", "2"}, extra...)
	r := dbarena(t, withTarget(tg, args...)...).mustSucceed(t)
	if !strings.Contains(r.stdout, "Loaded 4000 rows") {
		t.Fatalf("prepare output lacks the loaded rows:\n%s", r.stdout)
	}
}

// TestRunAgreesWithServerCounters runs oltp_read_write on both flavors and
// checks the summary, the store, and the server's own counters (within 2%).
func TestRunAgreesWithServerCounters(t *testing.T) {
	needServers(t)
	const events = 3000
	for _, f := range flavors() {
		t.Run(f.name, func(t *testing.T) {
			prepareSmall(t, f.target)
			js := jsonPath(t)
			// PostgreSQL counts each statement a worker prepares as a
			// transaction: 9 per table and thread, a fixed cost the events
			// must outweigh for a 2% comparison.
			r := dbarena(t, withTarget(f.target, "run", "oltp_read_write", "--tables", "2", "--table-size", "2000",
				"--threads", "2", "--events", strconv.Itoa(events), "--report-interval", "1s", "--json", js, "--tag", "suite=cli")...).mustSucceed(t)
			assertNoPassword(t, "stdout", r.stdout)
			run := readSummary(t, js)
			if run.Schema != summary.Schema || run.Status != summary.StatusComplete || run.Workload != "oltp_read_write" {
				t.Fatalf("summary header: %+v", run)
			}
			if run.Totals.Events != events {
				t.Fatalf("events = %d, want %d", run.Totals.Events, events)
			}
			// oltp_read_write: 14 reads, 4 writes, 2 other per event (like
			// sysbench, a write that changed no row counts as other), plus
			// the statements of attempts that were retried.
			q := run.Totals.Queries
			again := 20 * (run.Totals.Retries + run.Totals.Errors)
			if q.Read < 14*events || q.Write < 4*(events-100) || q.Total < 20*events || q.Total > 20*events+again ||
				q.Total != q.Read+q.Write+q.Other {
				t.Fatalf("queries = %+v with %d retries", q, run.Totals.Retries)
			}
			if run.Throughput.TPS <= 0 || run.LatencyMS.P95 <= 0 || run.LatencyMS.Max < run.LatencyMS.P99 {
				t.Fatalf("throughput/latency: %+v %+v", run.Throughput, run.LatencyMS)
			}
			if run.Target.Version == "" || !strings.Contains(run.Target.DSN, ":***@") {
				t.Fatalf("target: %+v", run.Target)
			}
			// The interval series adds up to the totals.
			var sum float64
			prev := 0.0
			for _, iv := range run.Intervals {
				sum += iv.TPS * (iv.TS - prev)
				prev = iv.TS
			}
			if len(run.Intervals) == 0 || math.Abs(sum-events) > 2 {
				t.Fatalf("%d intervals add up to %.1f events, want %d", len(run.Intervals), sum, events)
			}
			sc := run.ServerCounters
			// Every event re-inserts the row it deleted.
			if sc["rows_inserted"] < run.Totals.Events {
				t.Fatalf("server rows inserted %d < events %d", sc["rows_inserted"], run.Totals.Events)
			}
			switch f.name {
			case "mariadb":
				within(t, "Questions vs queries", sc["queries"], q.Total, 0.02)
				within(t, "Com_commit vs events", sc["commits"], run.Totals.Events, 0.02)
			case "postgres":
				within(t, "xact_commit vs events", sc["commits"], run.Totals.Events, 0.02)
			}
			if run.Settings == nil || run.Host.Cores == 0 || run.Dbarena.Version == "" {
				t.Fatalf("metadata missing: settings %v host %+v", run.Settings, run.Host)
			}
			// The stored run reads back equal.
			st, err := store.Open(context.Background(), store.DefaultPath(func(k string) string {
				return map[string]string{"DBARENA_HOME": suite.home, "HOME": suite.home}[k]
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			stored, err := st.Run(context.Background(), run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Totals.Events != events || stored.Histogram == "" || len(stored.Intervals) != len(run.Intervals) {
				t.Fatalf("stored run differs: events %d, histogram %d bytes, %d intervals",
					stored.Totals.Events, len(stored.Histogram), len(stored.Intervals))
			}
			show := dbarena(t, "results", "show", strconv.FormatInt(run.ID, 10), "--json").mustSucceed(t)
			if !strings.Contains(show.stdout, `"schema": "dbarena.run/v1"`) {
				t.Fatalf("results show --json:\n%s", show.stdout)
			}
			assertNoPassword(t, "results show", show.stdout)
			list := dbarena(t, "results", "list", "--tag", "suite=cli").mustSucceed(t)
			if !strings.Contains(list.stdout, strconv.FormatInt(run.ID, 10)) {
				t.Fatalf("results list lacks run %d:\n%s", run.ID, list.stdout)
			}
		})
	}
}

// within fails unless got is within frac of want.
func within(t testing.TB, what string, got, want int64, frac float64) {
	t.Helper()
	if want == 0 || math.Abs(float64(got-want)) > frac*float64(want) {
		t.Fatalf("%s: server %d, dbarena %d: differ by more than %.0f%%", what, got, want, frac*100)
	}
}

func TestWarmupIsExcluded(t *testing.T) {
	needServers(t)
	prepareSmall(t, "")
	js := jsonPath(t)
	dbarena(t, "run", "oltp_point_select", "--tables", "2", "--table-size", "2000", "--threads", "2",
		"--warmup", "2s", "--time", "2s", "--report-interval", "1s", "--json", js).mustSucceed(t)
	run := readSummary(t, js)
	if run.WarmupS < 1.9 || run.DurationS < 1.9 || run.DurationS > 3 {
		t.Fatalf("warmup_s %.2f duration_s %.2f", run.WarmupS, run.DurationS)
	}
	// MariaDB's Questions, read as measuring began, agree with the measured
	// queries: had the warm-up been counted, dbarena would report about
	// twice what the server saw. (PostgreSQL publishes its statistics up to
	// a second late, so it cannot draw this line sharply.)
	within(t, "Questions vs measured queries", run.ServerCounters["queries"], run.Totals.Queries.Total, 0.03)
	if run.Intervals[0].TS > 1.5 {
		t.Fatalf("first measured interval ends at %.2fs: warm-up intervals leaked into the series", run.Intervals[0].TS)
	}
}

// TestFixedRateSeesServerStall stops the server process for a second in the
// middle of a fixed-rate run: latency counted from the intended start must
// show the stall.
func TestFixedRateSeesServerStall(t *testing.T) {
	needServers(t)
	prepareSmall(t, "")
	sb, err := suite.mgr.Get("default")
	if err != nil {
		t.Fatal(err)
	}
	js := jsonPath(t)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		if err := syscall.Kill(sb.PID, syscall.SIGSTOP); err != nil {
			t.Errorf("SIGSTOP: %v", err)
			return
		}
		time.Sleep(time.Second)
		syscall.Kill(sb.PID, syscall.SIGCONT)
	}()
	r := dbarena(t, "run", "oltp_point_select", "--tables", "2", "--table-size", "2000", "--threads", "2",
		"--rate", "200", "--time", "4s", "--report-interval", "1s", "--json", js).mustSucceed(t)
	run := readSummary(t, js)
	if run.LatencyMS.Max < 800 || run.LatencyMS.P99 < 300 {
		t.Fatalf("a 1 s stall should show: p99 %.1f ms, max %.1f ms\n%s", run.LatencyMS.P99, run.LatencyMS.Max, r.stdout)
	}
	if run.Totals.Late == 0 {
		t.Fatalf("events delayed by the stall should be counted late: %+v", run.Totals)
	}
	// The rate is kept: about 200/s over the 4 s despite the stall.
	if run.Throughput.TPS < 150 || run.Throughput.TPS > 230 {
		t.Fatalf("tps %.1f, want about 200", run.Throughput.TPS)
	}
}

// TestReconnectAfterRestart restarts the server in the middle of a run.
func TestReconnectAfterRestart(t *testing.T) {
	needServers(t)
	for _, f := range flavors() {
		t.Run(f.name, func(t *testing.T) {
			prepareSmall(t, f.target)
			name := "default"
			if f.target != "" {
				name = "pg"
			}
			js := jsonPath(t)
			done := make(chan result, 1)
			out := &liveBuffer{}
			go func() {
				done <- dbarenaLive(t, context.Background(), nil, out, withTarget(f.target, "run", "oltp_point_select", "--tables", "2", "--table-size", "2000",
					"--threads", "2", "--time", "8s", "--report-interval", "1s", "--json", js)...)
			}()
			// Restart once the run is under way (its first interval), not
			// while it still sets up, however slow the machine.
			out.waitFor(t, "[ 1s ]", time.Minute)
			if _, err := suite.mgr.Restart(context.Background(), name); err != nil {
				t.Fatalf("restart: %v", err)
			}
			// A restart is an outage: the run goes on, degraded (exit 1).
			r := <-done
			run := readSummary(t, js)
			if r.code != ExitFailed || run.Status != summary.StatusDegraded || len(run.Outages) == 0 || !run.Outages[0].Recovered {
				t.Fatalf("exit %d status %s outages %+v: want 1, degraded, recovered\n%s", r.code, run.Status, run.Outages, r.stderr)
			}
			if run.Totals.Reconnects < 1 {
				t.Fatalf("no reconnect counted:\n%s", r.stdout)
			}
			last := run.Intervals[len(run.Intervals)-1]
			if last.TPS <= 0 {
				t.Fatalf("no events after the restart:\n%s", r.stdout)
			}
		})
	}
}

// TestInterruptedRunIsStored cancels a run as Ctrl-C would.
func TestInterruptedRunIsStored(t *testing.T) {
	needServers(t)
	prepareSmall(t, pgTarget)
	js := jsonPath(t)
	interrupt := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(interrupt) })
	r := dbarenaCtx(t, context.Background(), interrupt, "run", "oltp_point_select", "--tables", "2",
		"--table-size", "2000", "--threads", "2", "--time", "60s", "--report-interval", "1s", "--json", js, pgTarget)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "interrupted") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	run := readSummary(t, js)
	if run.Status != summary.StatusInterrupted || run.Totals.Events == 0 || run.DurationS > 10 {
		t.Fatalf("status %s events %d duration %.1f", run.Status, run.Totals.Events, run.DurationS)
	}
	show := dbarena(t, "results", "show", strconv.FormatInt(run.ID, 10), "--json").mustSucceed(t)
	if !strings.Contains(show.stdout, `"status": "interrupted"`) {
		t.Fatalf("stored status:\n%s", show.stdout)
	}
}

// TestSysbenchInterop runs sysbench 1.0 on tables dbarena prepared and
// dbarena on tables sysbench prepared, on both flavors.
func TestSysbenchInterop(t *testing.T) {
	needServers(t)
	if _, err := exec.LookPath("sysbench"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sysbench is not installed (scripts/install-deps installs it)")
		}
		t.Skip("sysbench not installed")
	}
	for _, f := range flavors() {
		t.Run(f.name, func(t *testing.T) {
			sb := suite.mariadb
			driver := "mysql"
			if f.target != "" {
				sb, driver = suite.postgres, "pgsql"
			}
			tg := sb.Target()
			conn := []string{"--db-driver=" + driver, "--" + driver + "-host=127.0.0.1",
				"--" + driver + "-port=" + strconv.Itoa(tg.Port), "--" + driver + "-user=" + tg.User,
				"--" + driver + "-password=" + tg.Password, "--" + driver + "-db=" + tg.Database,
				"--tables=2", "--table-size=2000"}
			sysbench := func(args ...string) string {
				t.Helper()
				out, err := exec.Command("sysbench", append(args, conn...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("sysbench %v: %v\n%s", args, err, out)
				}
				return string(out)
			}
			// dbarena prepares, sysbench runs.
			prepareSmall(t, f.target)
			out := sysbench("oltp_read_write", "--events=200", "--threads=2", "run")
			if !strings.Contains(out, "transactions:                        200") {
				t.Fatalf("sysbench run on dbarena tables:\n%s", out)
			}
			dbarena(t, withTarget(f.target, "cleanup", "oltp_read_write", "--tables", "2")...).mustSucceed(t)
			// sysbench prepares, dbarena runs.
			sysbench("oltp_read_write", "prepare")
			js := jsonPath(t)
			dbarena(t, withTarget(f.target, "run", "oltp_read_write", "--tables", "2", "--table-size", "2000",
				"--threads", "2", "--events", "200", "--json", js)...).mustSucceed(t)
			if run := readSummary(t, js); run.Totals.Events != 200 || run.Totals.Errors != 0 {
				t.Fatalf("dbarena run on sysbench tables: %+v", run.Totals)
			}
			sysbench("oltp_read_write", "cleanup")
		})
	}
}

func TestServerCommands(t *testing.T) {
	needServers(t)
	r := dbarena(t, "server", "start", "cli-pg", "--flavor", "postgres", "--profile", "durable", "--password", "verysecretpw").mustSucceed(t)
	defer dbarena(t, "server", "rm", "cli-pg")
	if !strings.Contains(r.stdout, "sandbox:cli-pg") || strings.Contains(r.stdout, "verysecretpw") {
		t.Fatalf("start output:\n%s", r.stdout)
	}
	show := dbarena(t, "server", "show", "cli-pg", "--json").mustSucceed(t)
	for _, field := range []string{`"name"`, `"flavor": "postgres"`, `"version"`, `"host": "127.0.0.1"`, `"port"`,
		`"socket"`, `"user"`, `"database"`, `"pid"`, `"datadir"`, `"state": "running"`} {
		if !strings.Contains(show.stdout, field) {
			t.Fatalf("server show --json lacks %s:\n%s", field, show.stdout)
		}
	}
	if strings.Contains(show.stdout, "verysecretpw") {
		t.Fatal("server show leaks the password")
	}
	list := dbarena(t, "server", "list").mustSucceed(t)
	if !strings.Contains(list.stdout, "cli-pg") || !strings.Contains(list.stdout, "default") {
		t.Fatalf("server list:\n%s", list.stdout)
	}
	dbarena(t, "server", "stop", "cli-pg").mustSucceed(t)
	if s := dbarena(t, "server", "show", "cli-pg", "--json").mustSucceed(t); !strings.Contains(s.stdout, `"state": "stopped"`) {
		t.Fatalf("after stop:\n%s", s.stdout)
	}
	dbarena(t, "server", "rm", "cli-pg").mustSucceed(t)
	if r := dbarena(t, "server", "show", "cli-pg"); r.code != ExitUsage {
		t.Fatalf("show after rm: exit %d", r.code)
	}
}

// TestTPCC prepares one warehouse on MariaDB, checks it, runs the mix and
// reads tpcc-mysql's report and the summary's TPC-C fields.
func TestTPCC(t *testing.T) {
	needServers(t)
	dbarena(t, "cleanup", "tpcc").mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "cleanup", "tpcc") })
	dbarena(t, "prepare", "tpcc", "--warehouses", "1", "--threads", "4").mustSucceed(t)
	if r := dbarena(t, "check", "tpcc"); r.code != ExitOK || strings.Contains(r.stdout, "[NG]") {
		t.Fatalf("check after the load: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	js := jsonPath(t)
	r := dbarena(t, "run", "tpcc", "--threads", "2", "--time", "2s", "--report-interval", "1s", "--json", js)
	r.mustSucceed(t)
	for _, want := range []string{"sc:", "TpmC", "[transaction percentage]", "New-Order:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run output lacks %q:\n%s", want, r.stdout)
		}
	}
	run := readSummary(t, js)
	if run.TpmC == nil || *run.TpmC <= 0 || len(run.Checks) != 10 || len(run.PerType) != 5 {
		t.Fatalf("summary: tpmc %v, %d checks, %d types", run.TpmC, len(run.Checks), len(run.PerType))
	}
	if len(run.Intervals) == 0 || len(run.Intervals[0].PerType) == 0 {
		t.Error("intervals carry no per-type figures")
	}
	if r := dbarena(t, "check", "tpcc"); r.code != ExitOK {
		t.Fatalf("check after the run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
