package monitor

import (
	"math"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/flavor/mysql"
	"github.com/dbarena/dbarena/internal/flavor/postgres"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// The flavors implement the wait sources the monitor looks for.
var (
	_ SessionWaitSource = postgres.Dialect{}
	_ WaitSummarySource = mysql.Dialect{}
)

func TestSessionTallyShares(t *testing.T) {
	tl := newSessionTally()
	tl.ticks = 2
	for _, r := range [][3]string{
		{"active", "", ""}, {"active", "IO", "WALSync"}, {"active", "Lock", "transactionid"},
		{"idle", "Client", "ClientRead"}, {"active", "LWLock", "WALWrite"}, {"active", "IPC", "SyncRep"},
		{"active", "Timeout", "PgSleep"}, {"idle", "", ""},
	} {
		tl.add(r[0], r[1], r[2])
	}
	out := map[string]float64{}
	tl.figures(out)
	want := map[string]float64{
		"wait.cpu": 12.5, "wait.io": 12.5, "wait.lock": 12.5, "wait.client": 12.5, "wait.lwlock": 12.5,
		"wait.ipc": 12.5, "wait.other": 12.5, "wait.idle": 12.5, "wait.wal": 25, "wait.sessions": 4, "wait.ticks": 2,
		"wait.event.IO:WALSync": 12.5, "wait.event.Lock:transactionid": 12.5,
	}
	for k, v := range want {
		if math.Abs(out[k]-v) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, out[k], v)
		}
	}
	empty := newSessionTally()
	out = map[string]float64{}
	empty.figures(out)
	if len(out) != 0 {
		t.Errorf("no readings gave %v", out)
	}
}

func TestSummaryFiguresDeltas(t *testing.T) {
	d := mysql.Dialect{}
	prev := map[string]float64{"wait/io/file/innodb/innodb_log_file": 1e12, "wait/synch/mutex/sql/LOCK_open": 5e11}
	cur := map[string]float64{
		"wait/io/file/innodb/innodb_log_file": 4e12, // +3 s of waiting
		"wait/synch/mutex/sql/LOCK_open":      4e11, // a session ended: counts nothing
		"wait/lock/table/sql/handler":         1e12, // new: +1 s
	}
	out := map[string]float64{}
	summaryFigures(d, prev, cur, 2, out)
	if out["wait.time_ms"] != 2000 || out["wait.class.io"] != 75 || out["wait.class.lock"] != 25 || out["wait.class.mutex"] != 0 {
		t.Errorf("figures %v", out)
	}
	if out["wait.event.wait/io/file/innodb/innodb_log_file"] != 1500 {
		t.Errorf("event ms/s %v", out["wait.event.wait/io/file/innodb/innodb_log_file"])
	}
	if _, ok := out["wait.event.wait/synch/mutex/sql/LOCK_open"]; ok {
		t.Error("a sum that went down counted")
	}
}

func TestWaitClassMySQL(t *testing.T) {
	d := mysql.Dialect{}
	for ev, want := range map[string]string{
		"wait/io/file/innodb/innodb_data_file":        "io",
		"wait/synch/sxlock/innodb/index_tree_rw_lock": "rwlock",
		"wait/lock/metadata/sql/mdl":                  "lock",
		"wait/io/socket/sql/client_connection":        "network",
		"wait/io/table/sql/handler":                   "table_io",
		"wait/synch/cond/mysys/COND_timer":            "cond",
		"wait/synch/mutex/innodb/trx_mutex":           "mutex",
		"stage/sql/starting":                          "other",
	} {
		if got := d.WaitClass(ev); got != want {
			t.Errorf("%s: %s, want %s", ev, got, want)
		}
	}
}

// run builds a run summary whose every interval has values.
func runOf(threads, cores int, perTxn, values map[string]float64) *summary.Run {
	samples := []summary.Sample{{TS: 1, Values: values}, {TS: 2, Values: values}}
	avg, mx := Aggregate(samples)
	return &summary.Run{Threads: threads, Host: summary.Host{Cores: cores},
		Monitor: &summary.Monitor{Samples: samples, Avg: avg, Max: mx, PerTxn: perTxn}}
}

func TestVerdictRules(t *testing.T) {
	pg := func(extra map[string]float64) map[string]float64 {
		v := map[string]float64{"server.cpu": 40, "client.cpu": 10, "host.cpu.idle": 50, "wait.ticks": 10, "wait.sessions": 4}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	cases := []struct {
		name    string
		run     *summary.Run
		verdict string
		reason  string
	}{
		{"lock", runOf(4, 2, nil, pg(map[string]float64{"wait.lock": 60, "wait.event.Lock:transactionid": 50, "wait.event.Lock:tuple": 10})), "lock", "Lock:transactionid 50%"},
		{"fsync", runOf(4, 2, map[string]float64{"fsyncs": 1}, pg(map[string]float64{"wait.io": 20, "wait.lwlock": 30, "wait.event.IO:WALSync": 20, "wait.event.LWLock:WALWrite": 30})), "fsync", "50% of backend time"},
		{"not fsync: buffer mapping", runOf(4, 2, nil, pg(map[string]float64{"wait.lwlock": 60, "wait.event.LWLock:BufferMapping": 60})), "none", ""},
		{"server cpu", runOf(4, 2, nil, pg(map[string]float64{"server.cpu": 180, "wait.cpu": 90})), "server-cpu", "server 1.80 of 2 cores"},
		{"client", runOf(4, 2, nil, pg(map[string]float64{"client.cpu": 170})), "client", "client-bound"},
		{"client wait", runOf(4, 2, nil, pg(map[string]float64{"wait.client": 80})), "client-wait", "80%"},
		{"host busy", runOf(4, 2, nil, pg(map[string]float64{"host.cpu.idle": 2})), "host-busy", "idle 2%"},
		{"mysql row locks", runOf(4, 2, map[string]float64{"fsyncs": 0.01}, map[string]float64{"server.cpu": 40, "client.cpu": 10, "wait.row_lock_ms": 2000}), "lock", "50% of backend time in InnoDB row-lock waits"},
		{"mysql fsyncs", runOf(4, 2, map[string]float64{"fsyncs": 1.1}, map[string]float64{"server.cpu": 40, "client.cpu": 10, "wait.row_lock_ms": 0}), "fsync", "1.10 fsyncs per transaction"},
	}
	for _, c := range cases {
		b := Verdict(c.run)
		if b == nil || b.Verdict != c.verdict || !strings.Contains(b.Reason, c.reason) {
			t.Errorf("%s: %+v, want %s (%q)", c.name, b, c.verdict, c.reason)
		}
	}
	if Verdict(&summary.Run{}) != nil {
		t.Error("a run without a monitor has a verdict")
	}
}

func TestWhyOrderAndReading(t *testing.T) {
	mk := func(cpu, fsyncs, lock float64) *summary.Run {
		return &summary.Run{
			Monitor:    &summary.Monitor{PerTxn: map[string]float64{"server_cpu_us": cpu, "fsyncs": fsyncs}},
			Bottleneck: &summary.Bottleneck{Figures: map[string]float64{"wait_lock_pct": lock, "wait_cpu_pct": 50}},
		}
	}
	a := []*summary.Run{mk(100, 1, 5), mk(120, 1, 7)}
	a[0].Monitor.PerTxn["disk_write_kb"] = 1 // host-wide: after the costs, out of the reading
	a[1].Monitor.PerTxn["disk_write_kb"] = 1
	b := []*summary.Run{mk(230, 1, 40), mk(210, 1, 50)}
	b[0].Monitor.PerTxn["disk_write_kb"] = 100
	b[1].Monitor.PerTxn["disk_write_kb"] = 100
	rows := Why(a, b)
	if len(rows) != 5 || rows[2].Key != "per_txn.disk_write_kb" {
		t.Fatalf("rows %+v", rows)
	}
	rows = append(rows[:2], rows[3:]...)
	if len(rows) != 4 || rows[0].Key != "per_txn.server_cpu_us" || rows[0].A != 110 || rows[0].B != 220 || rows[0].Ratio != 2 {
		t.Fatalf("rows %+v", rows)
	}
	if rows[2].Key != "bottleneck.figures.wait_lock_pct" || rows[2].B-rows[2].A != 39 {
		t.Errorf("shares not sorted by points: %+v", rows[2:])
	}
	got := WhyReading(rows)
	want := "B spends 2.0x more server CPU per transaction; B's sessions spend 39 points more of their time in lock waits (45% vs 6%; within the noise of the rounds)"
	if got != want {
		t.Errorf("reading %q\nwant    %q", got, want)
	}
	same := WhyReading(Why(a, a))
	if same != "the costs per transaction are within 20%; their waits are the same (within 10 points)" {
		t.Errorf("same runs: %q", same)
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]int{"0-1": 2, "0": 1, "0-3,6,8-9": 7, "": 0, "x": 0, "3-1": 0} {
		if got := parseCPUList(in); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}

func TestVerdictPinnedClient(t *testing.T) {
	r := runOf(32, 1, nil, map[string]float64{"server.cpu": 98, "client.cpu": 37, "host.cpu.idle": 0,
		"wait.ticks": 10, "wait.sessions": 32, "wait.client": 100})
	if b := Verdict(r); b.Verdict != "server-cpu" {
		t.Errorf("1 core known: %s (%s)", b.Verdict, b.Reason)
	}
	b := VerdictCPUs(r, CPUs{Host: 2, Client: 1})
	if b.Verdict != "client" || !strings.Contains(b.Reason, "1 of the host's 2 CPUs") || b.Figures["client_cpus"] != 1 {
		t.Errorf("pinned: %+v", b)
	}
}

// TestWhyReadingPrefersServerShare: a hot row moves time from waiting for
// the client to lock waits; the reading names the lock waits even when the
// client share moved further, and names the client share when it alone moved.
func TestWhyReadingPrefersServerShare(t *testing.T) {
	mk := func(client, lock float64) []*summary.Run {
		return []*summary.Run{{Bottleneck: &summary.Bottleneck{Figures: map[string]float64{
			"wait_client_pct": client, "wait_lock_pct": lock, "wait_cpu_pct": 8}}}}
	}
	got := WhyReading(Why(mk(91, 1), mk(21, 66)))
	if want := "B's sessions spend 65 points more of their time in lock waits (66% vs 1%)"; got != want {
		t.Errorf("hot row: %q\nwant      %q", got, want)
	}
	got = WhyReading(Why(mk(40, 5), mk(90, 5)))
	if want := "B's sessions spend 50 points more of their time waiting for the client (90% vs 40%)"; got != want {
		t.Errorf("client only: %q\nwant         %q", got, want)
	}
}
