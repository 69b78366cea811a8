package cli

// The fault suite: a run against a server that dies, freezes or restarts,
// a network that delays, resets or swallows packets (Shopify's toxiproxy,
// in-process), a dbarena killed with SIGKILL and a store on a full file
// system. Each case asserts the status, the exit code, what was stored and
// that nothing hangs: every case is bounded by its context.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// faultBound bounds every fault case: a case that takes longer hangs.
const faultBound = 3 * time.Minute

// faultSandbox starts a sandbox of the test's own (the test disturbs its
// server), loads a small oltp table set into it and returns its --target.
// The server is thawed and removed when the test ends.
func faultSandbox(t *testing.T, flavor target.Flavor) (string, *sandbox.Sandbox) {
	t.Helper()
	needServers(t)
	name := "f" + strings.ToLower(strings.NewReplacer("/", "", "_", "", "Test", "").Replace(t.Name()))
	if len(name) > 24 {
		name = name[:24]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := suite.mgr.Start(ctx, sandbox.Spec{Name: name, Flavor: flavor, Profile: "fast"})
	if err != nil {
		t.Fatalf("start sandbox %s: %v", name, err)
	}
	t.Cleanup(func() {
		if cur, err := suite.mgr.Get(name); err == nil && cur.PID > 0 {
			_ = signalTree(cur.PID, syscall.SIGCONT)
		}
		_ = suite.mgr.Remove(context.Background(), name)
	})
	tg := "--target=sandbox:" + name
	dbarena(t, "prepare", "oltp_read_write", tg, "--tables", "1", "--table-size", "2000", "--monitor", "none").mustSucceed(t)
	return tg, sb
}

// freshTables drops and loads a workload's tables on the shared default
// sandbox, whatever size an earlier test left them at.
func freshTables(t *testing.T, w string, args ...string) {
	t.Helper()
	dbarena(t, append([]string{"cleanup", w}, args...)...).mustSucceed(t)
	dbarena(t, append([]string{"prepare", w, "--monitor", "none"}, args...)...).mustSucceed(t)
}

// serverPID is the sandbox's current server process.
func serverPID(t *testing.T, name string) int {
	t.Helper()
	sb, err := suite.mgr.Get(name)
	if err != nil || sb.PID <= 0 {
		t.Fatalf("sandbox %s: no server process (%v)", name, err)
	}
	return sb.PID
}

// signalServer sends sig to the server's whole process group and to every
// process descended from it: PostgreSQL's backends are children of the
// postmaster but each leads a session of its own (setsid), so the group
// alone does not reach them (a SIGSTOP would freeze the postmaster while
// the backends go on serving).
func signalServer(t *testing.T, name string, sig syscall.Signal) {
	t.Helper()
	pid := serverPID(t, name)
	if err := signalTree(pid, sig); err != nil {
		t.Fatalf("signal %v to server %d: %v", sig, pid, err)
	}
}

// signalTree sends sig to pid's process group (or pid alone), then to each
// of pid's descendants, parents first: once the postmaster is stopped it
// starts no new backend.
func signalTree(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err != nil {
		if err := syscall.Kill(pid, sig); err != nil {
			return err
		}
	}
	for _, child := range descendants(pid) {
		_ = syscall.Kill(child, sig) // it may have exited since
	}
	return nil
}

// descendants lists pid's descendant processes from /proc, parents first.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscan(string(stat[i+1:]), &state, &ppid); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// asyncRun is a dbarena run in progress in this process.
type asyncRun struct {
	done      chan result
	interrupt chan struct{}
	started   time.Time
}

func startRun(t *testing.T, args ...string) *asyncRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultBound)
	t.Cleanup(cancel)
	ar := &asyncRun{done: make(chan result, 1), interrupt: make(chan struct{}), started: time.Now()}
	go func() { ar.done <- dbarenaCtx(t, ctx, ar.interrupt, args...) }()
	return ar
}

// wait waits for the run's end, failing the test when it outlives the bound.
func (ar *asyncRun) wait(t *testing.T) result {
	t.Helper()
	select {
	case r := <-ar.done:
		return r
	case <-time.After(faultBound + 30*time.Second):
		t.Fatalf("dbarena did not end within %v", faultBound)
		return result{}
	}
}

// storedRun reads the only run of a results store.
func storedRun(t *testing.T, path string) *summary.Run {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.List(context.Background(), store.Filter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("store %s: %d runs (%v), want 1", path, len(rows), err)
	}
	run, err := st.Run(context.Background(), rows[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// runArgs are the arguments of a fault case's run.
func runArgs(tg, results, jsonFile string, extra ...string) []string {
	return append([]string{"run", "oltp_read_write", tg, "--tables", "1", "--table-size", "2000",
		"--threads", "4", "--report-interval", "1", "--results", results, "--json", jsonFile}, extra...)
}

func faultFlavors() []target.Flavor {
	return []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres}
}

// TestFaultServerKilledMidRun: the server is killed for good during a
// timed run. The run fails (exit 1) once reconnecting has timed out,
// stores the outage as unrecovered, and says so.
func TestFaultServerKilledMidRun(t *testing.T) {
	for _, fl := range faultFlavors() {
		t.Run(string(fl), func(t *testing.T) {
			tg, sb := faultSandbox(t, fl)
			results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
			ar := startRun(t, runArgs(tg, results, js, "--time", "20", "--reconnect-timeout", "2")...)
			time.Sleep(3 * time.Second)
			signalServer(t, sb.Name, syscall.SIGKILL)
			r := ar.wait(t)
			if r.code != ExitFailed {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), r.stderr)
			}
			run := readSummary(t, js)
			if run.Status != summary.StatusFailed || len(run.Outages) == 0 || run.Outages[len(run.Outages)-1].Recovered {
				t.Fatalf("status %s outages %+v, want failed with an unrecovered outage", run.Status, run.Outages)
			}
			if !strings.Contains(run.Error, "unreachable") {
				t.Errorf("error %q does not say the target was unreachable", run.Error)
			}
			if run.Totals.Reconnects != 0 {
				t.Errorf("%d reconnects counted, but no connection was re-made", run.Totals.Reconnects)
			}
			if got := storedRun(t, results); got.Status != summary.StatusFailed || len(got.Intervals) == 0 {
				t.Errorf("stored: status %s, %d intervals", got.Status, len(got.Intervals))
			}
		})
	}
}

// TestFaultServerKilledEventsRun: with --events the same fault used to
// hang for ever; the run must end and fail.
func TestFaultServerKilledEventsRun(t *testing.T) {
	tg, sb := faultSandbox(t, target.FlavorMariaDB)
	results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
	ar := startRun(t, runArgs(tg, results, js, "--events", "100000000", "--reconnect-timeout", "2")...)
	time.Sleep(3 * time.Second)
	signalServer(t, sb.Name, syscall.SIGKILL)
	r := ar.wait(t)
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if run := readSummary(t, js); run.Status != summary.StatusFailed {
		t.Fatalf("status %s, want failed", run.Status)
	}
}

// TestFaultServerRestartedMidRun: the server is restarted during the run.
// The run goes on (degraded, exit 1), the outage is recovered, and the
// server counters are not compared across the restart.
func TestFaultServerRestartedMidRun(t *testing.T) {
	for _, fl := range faultFlavors() {
		t.Run(string(fl), func(t *testing.T) {
			tg, sb := faultSandbox(t, fl)
			results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
			ar := startRun(t, runArgs(tg, results, js, "--time", "12", "--reconnect-timeout", "60")...)
			time.Sleep(3 * time.Second)
			signalServer(t, sb.Name, syscall.SIGKILL)
			time.Sleep(time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := suite.mgr.Start(ctx, sandbox.Spec{Name: sb.Name}); err != nil {
				t.Fatalf("restart: %v", err)
			}
			r := ar.wait(t)
			if r.code != ExitFailed {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), r.stderr)
			}
			run := readSummary(t, js)
			if run.Status != summary.StatusDegraded || len(run.Outages) == 0 || !run.Outages[0].Recovered {
				t.Fatalf("status %s outages %+v, want degraded with a recovered outage", run.Status, run.Outages)
			}
			if run.Totals.Reconnects == 0 || run.UptimeS >= run.DurationS || run.Throughput.UpTPS <= run.Throughput.TPS {
				t.Errorf("reconnects %d uptime %.1f/%.1f s up-TPS %.1f TPS %.1f", run.Totals.Reconnects,
					run.UptimeS, run.DurationS, run.Throughput.UpTPS, run.Throughput.TPS)
			}
			if len(run.ServerCounters) != 0 || !strings.Contains(strings.Join(run.Notes, " "), "restarted") {
				t.Errorf("counters %v compared across the restart; notes %q", run.ServerCounters, run.Notes)
			}
			if got := storedRun(t, results); got.Status != summary.StatusDegraded {
				t.Errorf("stored status %s", got.Status)
			}
		})
	}
}

// TestFaultServerFrozenAcrossEnd: the server is frozen (SIGSTOP) before the
// run's end. dbarena still ends; the stalled events are counted as
// unfinished with their latency so far, not discarded.
func TestFaultServerFrozenAcrossEnd(t *testing.T) {
	tg, sb := faultSandbox(t, target.FlavorMariaDB)
	results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
	ar := startRun(t, runArgs(tg, results, js, "--time", "4")...)
	time.Sleep(2 * time.Second)
	signalServer(t, sb.Name, syscall.SIGSTOP)
	r := ar.wait(t)
	signalServer(t, sb.Name, syscall.SIGCONT)
	t.Logf("frozen run ended %.1f s after it started", time.Since(ar.started).Seconds())
	run := readSummary(t, js)
	if run.Totals.Unfinished == 0 {
		t.Errorf("no unfinished events after a freeze\n%s", tail(r.stdout, 2000))
	}
	if run.LatencyMS.Max < 1000 {
		t.Errorf("max latency %.1f ms, want the stall (>= 1 s)", run.LatencyMS.Max)
	}
	if got := storedRun(t, results); got.Status != run.Status || got.Totals.Unfinished != run.Totals.Unfinished {
		t.Errorf("stored %s/%d, --json %s/%d", got.Status, got.Totals.Unfinished, run.Status, run.Totals.Unfinished)
	}
	if want := map[string]int{summary.StatusComplete: ExitOK, summary.StatusFailed: ExitFailed}[run.Status]; r.code != want {
		t.Errorf("status %s, exit %d", run.Status, r.code)
	}
}

// TestFaultInterruptWhileFrozen: Ctrl-C while the server is frozen ends
// dbarena promptly and stores what it has as interrupted.
func TestFaultInterruptWhileFrozen(t *testing.T) {
	tg, sb := faultSandbox(t, target.FlavorMariaDB)
	results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
	ar := startRun(t, runArgs(tg, results, js, "--time", "60")...)
	time.Sleep(3 * time.Second)
	signalServer(t, sb.Name, syscall.SIGSTOP)
	time.Sleep(time.Second)
	at := time.Now()
	close(ar.interrupt)
	r := ar.wait(t)
	took := time.Since(at)
	signalServer(t, sb.Name, syscall.SIGCONT)
	t.Logf("Ctrl-C to exit: %v", took)
	if took > 10*time.Second { // the contract is 2 s; this bound only catches a hang
		t.Errorf("Ctrl-C took %v to end dbarena", took)
	}
	if r.code != ExitFailed {
		t.Errorf("exit %d, want 1: %s", r.code, r.stderr)
	}
	if got := storedRun(t, results); got.Status != summary.StatusInterrupted || len(got.Intervals) < 2 {
		t.Errorf("stored: status %s, %d intervals", got.Status, len(got.Intervals))
	}
}

// TestFaultDbarenaKilled: dbarena killed with SIGKILL at random moments
// leaves an aborted run holding its intervals, and earlier runs intact.
func TestFaultDbarenaKilled(t *testing.T) {
	needServers(t)
	results := filepath.Join(t.TempDir(), "r.db")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		args := []string{"run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--time", "60",
			"--threads", "2", "--report-interval", "1", "--results", results, "--monitor", "off"}
		if i == 0 {
			freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "DBARENA_HOME="+suite.home, childEnv+"="+strings.Join(args, "\x1f"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3*time.Second + rand.N(3*time.Second))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.List(context.Background(), store.Filter{})
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d runs (%v), want 3", len(rows), err)
	}
	for _, row := range rows {
		run, err := st.Run(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != summary.StatusAborted || len(run.Intervals) == 0 {
			t.Errorf("run %d: status %s, %d intervals; want aborted with its intervals", row.ID, run.Status, len(run.Intervals))
		}
	}
	if r := dbarena(t, "results", "list", "--results", results).mustSucceed(t); !strings.Contains(r.stdout, "aborted") {
		t.Errorf("results list does not show the aborted runs:\n%s", r.stdout)
	}
}

// TestFaultStoreOnFullFileSystem: when the store cannot be written, the
// run still reaches --json and the error says where it is.
func TestFaultStoreOnFullFileSystem(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a small tmpfs (CI runs as root): %v", err)
		}
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	results := filepath.Join(dir, "r.db")
	args := func(secs string, extra ...string) []string {
		return append([]string{"run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--time", secs,
			"--threads", "2", "--report-interval", "1", "--results", results, "--monitor", "off"}, extra...)
	}
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	dbarena(t, args("2")...).mustSucceed(t)
	// Fill the file system while the next run goes on.
	js := jsonPath(t)
	ar := startRun(t, args("6", "--json", js)...)
	time.Sleep(2 * time.Second)
	fillFileSystem(t, dir)
	r := ar.wait(t)
	if r.code != ExitFailed || !strings.Contains(r.stderr, js) {
		t.Fatalf("exit %d, stderr %q: want 1 and the --json path", r.code, r.stderr)
	}
	if run := readSummary(t, js); run.Totals.Events == 0 {
		t.Errorf("--json holds no events")
	}
	// The earlier run is intact once there is room again.
	_ = os.Remove(filepath.Join(dir, "filler"))
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.List(context.Background(), store.Filter{})
	if err != nil || !containsID(rows, 1) {
		t.Fatalf("earlier run gone: %+v %v", rows, err)
	}
	if run, err := st.Run(context.Background(), 1); err != nil || run.Status != summary.StatusComplete || len(run.Intervals) == 0 {
		t.Fatalf("earlier run: %v", err)
	}
}

// proxy puts an in-process toxiproxy between dbarena and the default
// MariaDB sandbox and returns it with the --target that goes through it.
func proxy(t *testing.T) (*toxiproxy.Proxy, string) {
	t.Helper()
	needServers(t)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	up := suite.mariadb.Target()
	p := toxiproxy.NewProxy(srv, "db", "127.0.0.1:0", fmt.Sprintf("%s:%d", up.Host, up.Port))
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	via := up
	host, port, _ := strings.Cut(p.Listen, ":")
	via.Host = host
	fmt.Sscanf(port, "%d", &via.Port)
	return p, "--target=" + via.DSN()
}

func addToxic(t *testing.T, p *toxiproxy.Proxy, json string) {
	t.Helper()
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(json)); err != nil {
		t.Fatal(err)
	}
}

// TestFaultNetwork: latency, connection resets and a black hole between
// dbarena and the server.
func TestFaultNetwork(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_read_write", "--tables", "1", "--table-size", "2000")

	t.Run("latency", func(t *testing.T) {
		p, tg := proxy(t)
		addToxic(t, p, `{"name":"lat","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":20}}`)
		results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
		r := startRun(t, runArgs(tg, results, js, "--time", "3")...).wait(t)
		r.mustSucceed(t)
		run := readSummary(t, js)
		// A transaction of oltp_read_write is 18 round trips: at least 18 x 20 ms.
		if run.Status != summary.StatusComplete || run.LatencyMS.Min < 18*20 {
			t.Errorf("status %s min latency %.1f ms, want complete and >= 360 ms", run.Status, run.LatencyMS.Min)
		}
	})

	t.Run("resets", func(t *testing.T) {
		p, tg := proxy(t)
		results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
		ar := startRun(t, runArgs(tg, results, js, "--time", "8", "--reconnect-timeout", "30")...)
		time.Sleep(2 * time.Second)
		addToxic(t, p, `{"name":"rst","type":"reset_peer","stream":"upstream","toxicity":1,"attributes":{"timeout":0}}`)
		time.Sleep(1500 * time.Millisecond)
		if err := p.Toxics.RemoveToxic(context.Background(), "rst"); err != nil {
			t.Fatal(err)
		}
		r := ar.wait(t)
		run := readSummary(t, js)
		if run.Status != summary.StatusDegraded || r.code != ExitFailed || run.Totals.Reconnects == 0 {
			t.Fatalf("status %s exit %d reconnects %d: want degraded, 1, > 0\n%s", run.Status, r.code,
				run.Totals.Reconnects, r.stderr)
		}
	})

	t.Run("black hole", func(t *testing.T) {
		p, tg := proxy(t)
		results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
		ar := startRun(t, runArgs(tg, results, js, "--time", "4", "--reconnect-timeout", "3")...)
		time.Sleep(2 * time.Second)
		addToxic(t, p, `{"name":"hole","type":"timeout","stream":"downstream","toxicity":1,"attributes":{"timeout":0}}`)
		r := ar.wait(t)
		t.Logf("black-holed run ended %.1f s after it started", time.Since(ar.started).Seconds())
		run := readSummary(t, js)
		if run.Totals.Unfinished == 0 || run.LatencyMS.Max < 1000 {
			t.Errorf("unfinished %d max %.0f ms: the stalled events are missing", run.Totals.Unfinished, run.LatencyMS.Max)
		}
		if got := storedRun(t, results); got.Status != run.Status {
			t.Errorf("stored %s, --json %s", got.Status, run.Status)
		}
		if (run.Status == summary.StatusComplete) != (r.code == ExitOK) {
			t.Errorf("status %s, exit %d", run.Status, r.code)
		}
	})
}

// fillFileSystem writes a file into dir until its file system is full.
func fillFileSystem(t *testing.T, dir string) {
	t.Helper()
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer filler.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := filler.Write(chunk); err != nil {
			return
		}
	}
}
