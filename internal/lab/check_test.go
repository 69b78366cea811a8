package lab

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// toy is the smallest workload: two parameters and a check.
type toy struct {
	rows   int
	engine string
}

var _ workload.Workload = (*toy)(nil)

func (*toy) Name() string        { return "toy" }
func (*toy) Description() string { return "a toy" }
func (w *toy) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&w.rows, "table-size", 10, "rows")
	fs.StringVar(&w.engine, "mysql-storage-engine", "", "engine")
}
func (w *toy) Validate() []error {
	if w.rows < 1 {
		return []error{errors.New("--table-size must be at least 1")}
	}
	return nil
}
func (w *toy) Params() map[string]any {
	return map[string]any{"table-size": w.rows, "engine": w.engine}
}

var toys = workload.NewRegistry(func() workload.Workload { return &toy{} })

func TestCheck(t *testing.T) {
	tests := []struct {
		name, plan string
		want       []string
	}{
		{"good, spelled with _ or -", "workloads:\n  - name: toy\n    params: {table_size: 5}\naxes:\n  table-size: [1, 2]\n  threads: [1]\n  server.x: [a]\n", nil},
		{"unknown workload", "workloads: [nope]\n", []string{"p.yaml:4: unknown workload \"nope\""}},
		{"unknown parameter and bad value", "workloads:\n  - name: toy\n    params:\n      colour: red\n      table-size: many\n",
			[]string{"p.yaml:7: workload toy has no parameter \"colour\"", "p.yaml:8: table-size: \"many\"",
				"p.yaml:5: workload toy: --table-size must be at least 1"}}, // a bad value leaves 0
		{"bad axis value", "workloads: [toy]\naxes:\n  table-size:\n    - 2\n    - lots\n", []string{"p.yaml:8: table-size: \"lots\"", "p.yaml:4: workload toy: --table-size"}},
		{"invalid", "workloads:\n  - name: toy\n    params: {table-size: 0}\n", []string{"p.yaml:5: workload toy: --table-size must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, "name: c\nservers:\n  - {name: a, flavor: mariadb}\n"+tt.plan)
			var got []string
			for _, e := range Check(p, toys) {
				got = append(got, e.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("errors %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("error %q, want %q...", got[i], tt.want[i])
				}
			}
		})
	}
}

func TestJobWorkload(t *testing.T) {
	p := mustParse(t, `name: j
servers:
  - {name: m, flavor: mariadb, engines: [MyISAM]}
workloads:
  - name: toy
    params: {table_size: 7}
`)
	step := p.Schedule()[0]
	for _, tt := range []struct {
		flavor     target.Flavor
		wantEngine string
	}{{target.FlavorMariaDB, "MyISAM"}, {target.FlavorPostgres, ""}} {
		w, err := Job{Plan: p, Step: step, Target: target.Target{Flavor: tt.flavor}}.Workload(toys)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.(*toy); got.rows != 7 || got.engine != tt.wantEngine {
			t.Errorf("%s: workload %+v, want 7 rows, engine %q", tt.flavor, got, tt.wantEngine)
		}
	}
	step.Params = append(step.Params, plan.Param{Key: "table-size", Value: "0"})
	if _, err := (Job{Plan: p, Step: step}).Workload(toys); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("invalid parameters: %v", err)
	}
	step.Workload = "nope"
	if _, err := (Job{Plan: p, Step: step}).Workload(toys); err == nil {
		t.Error("unknown workload: no error")
	}
}

func TestJobConfig(t *testing.T) {
	p := mustParse(t, "name: c\nservers: [{name: a, flavor: mariadb}]\nworkloads: [toy]\naxes:\n  threads: [4]\nwarmup: 7s\nduration: 9s\nreport_interval: 2s\n")
	cfg := Job{Plan: p, Step: p.Schedule()[0]}.Config()
	if cfg.Threads != 4 || cfg.Warmup != 7*time.Second || cfg.Duration != 9*time.Second ||
		cfg.ReportInterval != 2*time.Second || cfg.WarmupUntil != nil {
		t.Errorf("config %+v", cfg)
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		t.Errorf("invalid: %v", errs)
	}
	p = mustParse(t, "name: c\nservers: [{name: a, flavor: mariadb}]\nworkloads: [toy]\nwarmup: auto\n")
	cfg = Job{Plan: p, Step: p.Schedule()[0]}.Config()
	if cfg.Threads != 1 || cfg.WarmupUntil == nil || cfg.Warmup != time.Minute {
		t.Fatalf("auto warm-up config %+v", cfg)
	}
	series := func(rates ...int64) []runner.Interval {
		var out []runner.Interval
		for i, r := range rates {
			out = append(out, runner.Interval{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Events: r})
		}
		return out
	}
	if !cfg.WarmupUntil(series(100, 100, 100, 100, 100, 100)) {
		t.Error("a flat series is not steady")
	}
	if cfg.WarmupUntil(series(10, 20, 40, 80, 160, 320)) {
		t.Error("a rising series is steady")
	}
}

func TestExpand(t *testing.T) {
	cat := []catalog.Entry{
		{Name: "mariadb 11.4", Flavor: target.FlavorMariaDB, Basedir: "/opt/m114"},
		{Name: "mysql 8.0", Flavor: target.FlavorMySQL},
		{Name: "pg17", Flavor: target.FlavorPostgres},
	}
	bins := []sandbox.Binary{{Flavor: target.FlavorMariaDB}, {Flavor: target.FlavorPostgres}}
	calls := 0
	discover := func() ([]sandbox.Binary, error) { calls++; return bins, nil }
	p := mustParse(t, `name: e
servers:
  - {catalog: mariadb}
  - {catalog: postgres, profile: fast}
  - {catalog: percona}
  - {name: gone, server: nope}
  - {name: dsn, dsn: "mysql://u:p@h/db"}
workloads: [toy]
`)
	warnings := Expand(p, cat, discover)
	var names []string
	for _, s := range p.Servers {
		names = append(names, s.Name+":"+s.Server+s.Flavor+s.DSN)
	}
	want := []string{"mariadb-11.4:mariadb 11.4", "system-mariadb:mariadb", "pg17:pg17", "system-postgres:postgres",
		"gone:nope", "dsn:mysql://u:p@h/db"}
	equal(t, "servers", names, want)
	if p.Servers[2].Profile != "fast" || calls != 1 {
		t.Errorf("pg17 %+v, discover called %d times", p.Servers[2], calls)
	}
	equal(t, "warnings", warnings, []string{
		"p.yaml:5: no percona server in the catalogue or on the system",
		"p.yaml:6: server \"nope\" is not in the catalogue: its cells will fail (scripts/fetch-servers, dbarena server import)",
	})
	if len(p.Baseline) != 1 || p.Baseline[0].Value != "mariadb-11.4" {
		t.Errorf("baseline %v", p.Baseline)
	}

	calls = 0
	p = mustParse(t, "name: e\nservers: [{name: a, flavor: mariadb}]\nworkloads: [toy]\nbaseline: {server: a}\n")
	if w := Expand(p, nil, discover); len(w) != 0 || calls != 0 || len(p.Servers) != 1 {
		t.Errorf("plain plan: warnings %q, discover called %d times, servers %v", w, calls, p.Servers)
	}
}

func TestSpec(t *testing.T) {
	got := Spec("lab-a", plan.Server{Name: "a", Flavor: "mariadb"}, []plan.Param{{Key: "x", Value: "1"}})
	if got.Name != "lab-a" || got.Profile != sandbox.ProfileDefault || got.Allocator != "system" ||
		len(got.Settings) != 1 || got.Settings[0] != (sandbox.Setting{Key: "x", Value: "1"}) || got.Flavor != "" {
		t.Errorf("spec %+v", got)
	}
	got = Spec("lab-b", plan.Server{Profile: "fast", BufferPool: "1G", Allocator: "jemalloc"}, nil)
	if got.Profile != "fast" || got.BufferPool != "1G" || got.Allocator != "jemalloc" || got.Settings != nil {
		t.Errorf("spec %+v", got)
	}
}

// TestCheckSettings checks that unsafe settings in servers' settings and
// in server axes are refused at check time, naming the line, unless the
// plan allows them; managed and malformed ones are refused either way.
func TestCheckSettings(t *testing.T) {
	const servers = "name: c\nservers:\n  - name: m\n    flavor: mariadb\n    settings:\n      init_file: /tmp/x.sql\n      sync_binlog: 1\n" +
		"  - name: p\n    flavor: postgres\n    settings:\n      archive_command: sh -c id\n      work_mem: 4MB\n      port: 1\n" +
		"  - name: r\n    dsn: mysql://u@127.0.0.1/d\nworkloads: [toy]\naxes:\n  server.plugin_load_add:\n    - ha_connect.so\n  server.max_connections: [10]\n  server.shared_preload_libraries: [x]\n  server.log_directory: [log, /var/log]\n"
	tests := []struct {
		name, allow string
		want        []string
	}{
		{"refused", "", []string{
			`p.yaml:6: server m: setting "init_file" runs commands or SQL as the server (SQL as root at start-up): refused without allow_unsafe_settings: true`,
			`p.yaml:11: server p: setting "archive_command" runs commands`,
			`p.yaml:13: server p: setting "port" cannot be set`,
			`p.yaml:19: axis server.plugin_load_add: setting "plugin_load_add" loads plugins or libraries`,
			`p.yaml:21: axis server.shared_preload_libraries: setting "shared_preload_libraries" loads`,
			`p.yaml:22: axis server.log_directory: setting "log_directory" reads or writes files outside the sandbox`,
		}},
		{"allowed", "allow_unsafe_settings: true\n", []string{`p.yaml:13: server p: setting "port" cannot be set`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, servers+tt.allow)
			var got []string
			for _, e := range Check(p, toys) {
				got = append(got, e.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("errors %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("error %q, want %q...", got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSpecAllowUnsafe checks that a plan's allow_unsafe_settings reaches
// the sandbox spec, so that its start takes the settings Check let pass.
func TestSpecAllowUnsafe(t *testing.T) {
	for _, allow := range []bool{false, true} {
		line := ""
		if allow {
			line = "allow_unsafe_settings: true\n"
		}
		p := mustParse(t, "name: c\nservers: [{name: a, flavor: postgres}]\nworkloads: [toy]\n"+line)
		spec := Spec("a", p.Servers[0], []plan.Param{{Key: "archive_command", Value: "true"}})
		spec.Flavor = target.FlavorPostgres
		if spec.AllowUnsafe != allow || (len(spec.Validate()) == 0) != allow {
			t.Errorf("allow_unsafe_settings %v: spec.AllowUnsafe = %v, Validate() = %v", allow, spec.AllowUnsafe, spec.Validate())
		}
	}
}
