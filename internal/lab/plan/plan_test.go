package plan

import (
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/steady"
	"github.com/dbarena/dbarena/internal/results/summary"
)

const goodPlan = `# a test plan
name: demo
servers:
  - name: a
    flavor: mariadb
    engines: [InnoDB, MyISAM]
  - name: b
    server: postgres-16
    settings:
      shared_buffers: 256MB
workloads:
  - name: oltp_read_write
    params:
      tables: 2
      table-size: 10000
axes:
  threads: [1, 4]
  table-size: [1000, 5000]
  server.sync_binlog: [0, 1]
rounds: 2
warmup: auto
warmup_max: 20s
duration: 30
between_rounds: [restart, drop-caches]
baseline:
  server: a
`

func TestParseGood(t *testing.T) {
	p, errs := Parse("good.yaml", []byte(goodPlan))
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if p.Name != "demo" || p.Rounds != 2 || !p.AutoWarmup || p.Warmup != 20*time.Second || p.Duration != 30*time.Second {
		t.Errorf("plan = %+v", p)
	}
	if len(p.Variants()) != 3 {
		t.Errorf("variants = %+v, want a-innodb, a-myisam, b", p.Variants())
	}
	if len(p.BetweenRounds) != 2 || p.Reload {
		t.Errorf("actions = %+v reload=%v", p.BetweenRounds, p.Reload)
	}
	// 3 variants x 2 threads x 2 sizes x 2 settings = 24 cells, 2 rounds.
	if n := len(p.Cells()); n != 24 {
		t.Errorf("%d cells, want 24", n)
	}
	if n := len(p.Schedule()); n != 48 {
		t.Errorf("%d steps, want 48", n)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		plan string
		want []string // each error, in order, as FILE:LINE: ...
	}{
		{"syntax", "name: x\nservers: [\n", []string{"p.yaml:2:10: "}},
		{"unknown key", "name: x\nservers:\n  - flavor: mariadb\nworkloads: [oltp_read_only]\nthread: [1]\n",
			[]string{`p.yaml:5: unknown key "thread"`}},
		{"bad values", `name: x
servers:
  - name: a
    flavor: oracle
  - name: a
    server: m1
    dsn: mysql://x@127.0.0.1/db
workloads: [oltp_read_only]
axes:
  threads: [1, zero]
rounds: 0
duration: soon
`, []string{
			`p.yaml:4: flavor "oracle"`,
			`p.yaml:5: a server needs exactly one of`,
			`p.yaml:5: server name "a" already used at line 3`,
			`p.yaml:10: threads "zero"`,
			`p.yaml:11: rounds "0": want a whole number`,
			`p.yaml:12: duration "soon": want a positive duration`,
		}},
		{"missing", "description: nothing\n", []string{"p.yaml:1: missing name", "p.yaml:1: missing servers", "p.yaml:1: missing workloads"}},
		{"baseline not a server", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nbaseline:\n  server: zz\n",
			[]string{`p.yaml:5: baseline server "zz"`}},
		{"warmup_max without auto", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nwarmup: 5s\nwarmup_max: 9s\n",
			[]string{"p.yaml:5: warmup_max applies only"}},
		{"allow_unsafe_settings not a boolean", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nallow_unsafe_settings: please\n",
			[]string{`p.yaml:4: allow_unsafe_settings "please": want true or false`}},
		{"dsn with settings", "name: x\nservers:\n  - name: r\n    dsn: mysql://u@127.0.0.1/d\n    settings: {a: 1}\nworkloads: [w]\n",
			[]string{`p.yaml:3: server "r": a dsn server`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Parse("p.yaml", []byte(tt.plan))
			sortErrors(errs)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors %q, want %d", len(errs), errs, len(tt.want))
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tt.want[i]) {
					t.Errorf("error %d = %q, want prefix %q", i, e, tt.want[i])
				}
			}
		})
	}
}

// TestAllowUnsafeSettings checks that the plan's allow_unsafe_settings
// reaches every server, catalogue expansions included (default false).
func TestAllowUnsafeSettings(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{{"", false}, {"allow_unsafe_settings: false\n", false}, {"allow_unsafe_settings: true\n", true}, {"allow_unsafe_settings: True\n", true}} {
		p, errs := Parse("p.yaml", []byte("name: x\nservers: [{flavor: mariadb}, {catalog: postgres}]\n"+tt.line+"workloads: [w]\n"))
		if len(errs) > 0 {
			t.Fatalf("%q: %v", tt.line, errs)
		}
		if p.AllowUnsafeSettings != tt.want {
			t.Errorf("%q: AllowUnsafeSettings = %v, want %v", tt.line, p.AllowUnsafeSettings, tt.want)
		}
		for _, s := range p.Servers {
			if s.AllowUnsafeSettings != tt.want {
				t.Errorf("%q: server %+v: AllowUnsafeSettings = %v, want %v", tt.line, s, s.AllowUnsafeSettings, tt.want)
			}
		}
	}
}

// sortErrors orders errors by line.
func sortErrors(errs []error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, _ := errs[i].(*Error)
		b, _ := errs[j].(*Error)
		return a != nil && b != nil && a.Line < b.Line
	})
}

func TestScheduleInterleavesServers(t *testing.T) {
	p, errs := Parse("p.yaml", []byte(`name: x
servers: [{name: A, flavor: mariadb}, {name: B, flavor: postgres}, {name: C, flavor: mysql}]
workloads: [oltp_read_only]
axes:
  table-size: [100, 200]
  threads: [1, 2]
rounds: 2
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, s := range p.Schedule() {
		m := s.CoordMap()
		got = append(got, m["table-size"]+m["server"]+m["threads"]+"r"+string(rune('0'+s.Round)))
	}
	want := "100A1r1 100A2r1 100B1r1 100B2r1 100C1r1 100C2r1 100A1r2 100A2r2 100B1r2 100B2r2 100C1r2 100C2r2 " +
		"200A1r1 200A2r1 200B1r1 200B2r1 200C1r1 200C2r1 200A1r2 200A2r2 200B1r2 200B2r2 200C1r2 200C2r2"
	if strings.Join(got, " ") != want {
		t.Errorf("schedule\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	c := p.Schedule()[0].Cell
	if c.ID != "workload=oltp_read_only,server=A,table-size=100,threads=1" || c.Threads != 1 {
		t.Errorf("first cell = %+v", c)
	}
	if c.DataKey != "workload=oltp_read_only,table-size=100" {
		t.Errorf("data key = %q", c.DataKey)
	}
}

func TestEngineAndSettingsReachCells(t *testing.T) {
	p, errs := Parse("p.yaml", []byte(goodPlan))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := p.Schedule()[1].Cell // a/MyISAM? no: variant a-innodb, threads 4
	if c.CoordMap()["engine"] != "InnoDB" {
		t.Fatalf("cell %s: want engine InnoDB", c.ID)
	}
	params := map[string]string{}
	for _, kv := range c.Params {
		params[kv.Key] = kv.Value
	}
	if params["mysql-storage-engine"] != "InnoDB" || params["table-size"] != "1000" || params["tables"] != "2" {
		t.Errorf("params = %v", params)
	}
	if len(c.Settings) != 1 || c.Settings[0].Key != "sync_binlog" || c.Settings[0].Value != "0" {
		t.Errorf("settings = %+v", c.Settings)
	}
}

func TestScale(t *testing.T) {
	p, errs := Parse("p.yaml", []byte(goodPlan))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p.Scale(0.05)
	// warmup_max 20s would scale to 1s, shorter than the steady-state
	// detector's window of intervals: the cap keeps room for the window.
	if p.Duration != 2*time.Second || p.Warmup != time.Duration(steady.DefaultWindow+1)*time.Second {
		t.Errorf("durations %v %v", p.Duration, p.Warmup)
	}
	if v := p.Workloads[0].Params[1].Value; v != "500" {
		t.Errorf("table-size param = %s, want 500", v)
	}
	// 1000 and 5000 become 100 (floor) and 250.
	if vals := p.Axes[1].Values; len(vals) != 2 || vals[0].Value != "100" || vals[1].Value != "250" {
		t.Errorf("table-size axis = %+v", vals)
	}
	fixed, errs := Parse("p.yaml", []byte(goodPlan))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	fixed.AutoWarmup, fixed.Warmup = false, 20*time.Second
	fixed.Scale(0.05)
	if fixed.Warmup != time.Second {
		t.Errorf("fixed warm-up scaled to %v, want 1s", fixed.Warmup)
	}
	p.Scale(0.01) // 100 and 250 both floor to 100: one value left
	if vals := p.Axes[1].Values; len(vals) != 1 {
		t.Errorf("table-size axis = %+v, want one value", vals)
	}
}

func run(cell, server string, round int, tps, p95 float64) *summary.Run {
	return &summary.Run{Status: summary.StatusComplete, Throughput: summary.Throughput{TPS: tps},
		LatencyMS: summary.Latency{P95: p95, P99: 2 * p95},
		Plan:      &summary.PlanRef{Name: "x", Cell: cell, Coords: map[string]string{"server": server, "threads": "1"}, Round: round}}
}

func TestSummarise(t *testing.T) {
	var runs []*summary.Run
	for i, v := range []float64{100, 110, 90} {
		runs = append(runs, run("A", "a", i+1, v, 10+float64(i)))
	}
	for i := range 3 {
		runs = append(runs, run("B", "base", i+1, 200, 5))
	}
	for i, v := range []float64{190, 210, 200} {
		runs = append(runs, run("C", "c", i+1, v, 5))
	}
	failed := run("C", "c", 4, 0, 0)
	failed.Status, failed.Error = summary.StatusFailed, "boom"
	runs = append(runs, failed)

	got := Summarise(runs, []Param{{Key: "server", Value: "base"}}, 0.05)
	if len(got) != 3 {
		t.Fatalf("%d cells", len(got))
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("%s = %.5f, want %.5f", name, got, want)
		}
	}
	a, b, c := got[0], got[1], got[2]
	// A: mean 100, sd 10, cv 0.1, 95% CI 100 ± 4.303·10/√3.
	near("A mean", a.TPS.Mean, 100)
	near("A sd", a.TPS.SD, 10)
	near("A cv", a.TPS.CV, 0.1)
	near("A ci low", a.TPS.CILow, 100-24.8434)
	near("A p95 mean", a.P95.Mean, 11)
	near("A p99 mean", a.P99.Mean, 22)
	if !a.Noisy {
		t.Error("A (cv 10%) should be noisy at 5%")
	}
	// A vs B: ratio 0.5, se of ln(ratio) √(100/3)/100, df 2 -> the interval
	// is 0.5·e^(±4.303·se).
	if a.Relative == nil || a.Baseline != "B" {
		t.Fatalf("A relative = %+v baseline %q", a.Relative, a.Baseline)
	}
	se := math.Sqrt(100.0/3) / 100
	near("A ratio", a.Relative.Value, 0.5)
	near("A ratio low", a.Relative.Low, 0.5*math.Exp(-4.303*se))
	if !a.Relative.Significant {
		t.Error("A vs B should be significant")
	}
	if b.Relative != nil || b.Noisy || b.TPS.SD != 0 {
		t.Errorf("B (baseline) = %+v", b)
	}
	// C: mean 200 = baseline, CI contains 1: no significant difference.
	near("C ratio", c.Relative.Value, 1)
	if c.Relative.Significant || c.Noisy {
		t.Errorf("C = %+v: want not significant, not noisy (cv exactly 5%%)", c)
	}
	if c.Runs != 3 || c.Failed != 1 || c.Error != "boom" {
		t.Errorf("C runs %d failed %d error %q", c.Runs, c.Failed, c.Error)
	}
}
