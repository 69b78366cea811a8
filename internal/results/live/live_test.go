package live

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/spf13/pflag"

	dto "github.com/prometheus/client_model/go"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr    string
		anyAddr bool
		want    string // "" = accepted; else part of the error
	}{
		{"127.0.0.1:9464", false, ""},
		{"127.1.2.3:0", false, ""},
		{"[::1]:9464", false, ""},
		{"localhost:9464", false, ""},
		{"LOCALHOST:9464", false, ""},
		{":9464", false, "every interface is not a loopback address"},
		{"0.0.0.0:9464", false, "0.0.0.0 is not a loopback address"},
		{"[::]:9464", false, ":: is not a loopback address"},
		{"10.1.2.3:9464", false, "10.1.2.3 is not a loopback address"},
		{"metrics.example.com:9464", false, "metrics.example.com is not a loopback address"},
		{"0.0.0.0:9464", true, ""},
		{":9464", true, ""},
		{"127.0.0.1", false, "is not HOST:PORT"},
		{"127.0.0.1:", false, "bad port"},
		{"127.0.0.1:99999", false, "bad port"},
		{"127.0.0.1:http", false, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s any=%v", tt.addr, tt.anyAddr), func(t *testing.T) {
			err := CheckAddr(tt.addr, tt.anyAddr)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}

// named is a workload with a name and nothing else.
type named string

func (n named) Name() string         { return string(n) }
func (named) Description() string    { return "" }
func (named) Flags(*pflag.FlagSet)   {}
func (named) Validate() []error      { return nil }
func (named) Params() map[string]any { return nil }

var _ workload.Workload = named("")

// latencies returns a histogram of the given latencies.
func latencies(ds ...time.Duration) *hist.Histogram {
	h := hist.NewCoarse()
	for _, d := range ds {
		h.Record(d)
	}
	return h
}

// scrape reads the served figures as metric families.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// find is the metric of family name whose labels include want.
func find(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// TestExporter: a run's intervals and final run become the served
// figures: counters by phase adding up the intervals, errors by code,
// types capped at MaxTypes, the latency histogram's buckets, the monitor
// figures, the status; and Linger returns once a scrape read the last
// change.
func TestExporter(t *testing.T) {
	e := New()
	srv, err := Serve(e, "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := &execute.Session{Target: target.Target{Flavor: target.FlavorMariaDB, Version: "10.11", Host: "127.0.0.1", Port: 3306, Sandbox: "default"}}
	spec := &execute.Spec{Workload: named("tpcc")}
	obs := e.Observe(nil, "")
	obs.Begin(s, spec, nil)
	obs.Stored(7)
	ms := time.Millisecond
	obs.Interval(runner.Interval{Warmup: true, End: time.Second, Events: 5, Latency: latencies(ms, ms, ms, ms, ms)}, nil)
	perType := map[string]workload.TypeInterval{}
	for i := range MaxTypes + 2 {
		perType[fmt.Sprintf("t%03d", i)] = workload.TypeInterval{Count: 1, P95: ms}
	}
	obs.Interval(runner.Interval{End: time.Second, Events: MaxTypes + 2, Errors: 2, Queries: workload.Queries{Read: 10, Write: 4, Other: 1},
		ErrorsByCode: map[string]int64{"1213": 2}, PerType: perType, P95: 3 * ms, Threads: 4,
		Latency: latencies(append(make([]time.Duration, MaxTypes), 2900*time.Microsecond, 190*ms)...)},
		map[string]float64{"host.cpu.busy": 42, "counter.Innodb_data_fsyncs": 3})
	run := "7"
	base := map[string]string{"run": run, "workload": "tpcc", "server": "default"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	fams := scrape(t, srv.URL())
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"dbarena_events_total", with("phase", "warmup"), 5},
		{"dbarena_events_total", with("phase", "measured"), MaxTypes + 2},
		{"dbarena_errors_total", with("phase", "measured"), 2},
		{"dbarena_queries_total", with("phase", "measured", "kind", "read"), 10},
		{"dbarena_errors_by_code_total", with("phase", "measured", "code", "1213"), 2},
		{"dbarena_type_events_total", with("phase", "measured", "type", "t000"), 1},
		{"dbarena_type_events_total", with("phase", "measured", "type", OtherType), 2},
		{"dbarena_monitor", with("source", "host", "figure", "host.cpu.busy"), 42},
		{"dbarena_monitor", with("source", "counter", "figure", "counter.Innodb_data_fsyncs"), 3},
		{"dbarena_threads", base, 4},
		{"dbarena_run_running", base, 1},
		{"dbarena_run_status", with("status", "running"), 1},
		{"dbarena_interval_latency_seconds", with("quantile", "0.95"), 0.003},
	}
	value := func(m *dto.Metric) float64 {
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
		return -1
	}
	for _, c := range checks {
		m := find(fams, c.name, c.labels)
		if m == nil || value(m) != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, m, c.want)
		}
	}
	if n := len(fams["dbarena_type_events_total"].Metric); n != MaxTypes+1 {
		t.Errorf("%d type series, want %d (MaxTypes and %s)", n, MaxTypes+1, OtherType)
	}
	h := find(fams, "dbarena_latency_seconds", with("phase", "measured"))
	if h == nil || h.Histogram.GetSampleCount() != MaxTypes+2 {
		t.Fatalf("measured histogram %v", h)
	}
	buckets := map[float64]uint64{}
	for _, b := range h.Histogram.Bucket {
		buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	// MaxTypes zero latencies (recorded as 1µs), one of 2.9ms, one of 190ms
	// (1% precision: values at a bound could fall either side).
	for le, want := range map[float64]uint64{0.00005: MaxTypes, 0.002: MaxTypes, 0.003: MaxTypes + 1, 0.15: MaxTypes + 1, 0.2: MaxTypes + 2} {
		if buckets[le] != want {
			t.Errorf("bucket le=%g: %d, want %d (%v)", le, buckets[le], want, buckets)
		}
	}

	obs.Finish(&summary.Run{Status: summary.StatusComplete, Totals: summary.Totals{Events: MaxTypes + 3, Errors: 2}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if srv.Linger(ctx, time.Minute) {
		t.Errorf("Linger returned true before any scrape of the final figures")
	}
	cancel()
	lingered := make(chan bool)
	go func() { lingered <- srv.Linger(context.Background(), time.Minute) }()
	fams = scrape(t, srv.URL())
	if !<-lingered {
		t.Errorf("Linger did not see the scrape")
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"dbarena_events_total", with("phase", "measured"), MaxTypes + 3}, // the stored total
		{"dbarena_run_running", base, 0},
		{"dbarena_run_status", with("status", "complete"), 1},
		{"dbarena_run_status", with("status", "running"), 0},
	} {
		if m := find(fams, c.name, c.labels); m == nil || value(m) != c.want {
			t.Errorf("after Finish: %s%v = %v, want %v", c.name, c.labels, m, c.want)
		}
	}
	if !srv.Linger(context.Background(), time.Millisecond) {
		t.Errorf("Linger with nothing new to scrape waited")
	}
}

// TestExporterPlan: a plan's progress is served.
func TestExporterPlan(t *testing.T) {
	e := New()
	srv, err := Serve(e, "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	e.PlanBegan("p", "s1", 4, 1)
	e.PlanStarting(1, "server=a,threads=2", 1, 90*time.Second)
	fams := scrape(t, srv.URL())
	pl := map[string]string{"plan": "p", "session": "s1"}
	for name, want := range map[string]float64{"dbarena_plan_cells": 4, "dbarena_plan_cells_done": 1, "dbarena_plan_eta_seconds": 90} {
		if m := find(fams, name, pl); m == nil || m.Gauge.GetValue() != want {
			t.Errorf("%s = %v, want %v", name, m, want)
		}
	}
	if m := find(fams, "dbarena_plan_current_cell", map[string]string{"cell": "server=a,threads=2", "round": "1"}); m == nil || m.Gauge.GetValue() != 2 {
		t.Errorf("current cell %v", m)
	}
	e.PlanRan(false, 60*time.Second)
	fams = scrape(t, srv.URL())
	if m := find(fams, "dbarena_plan_cells_failed", pl); m == nil || m.Gauge.GetValue() != 1 {
		t.Errorf("failed %v", m)
	}
	if fams["dbarena_plan_current_cell"] != nil {
		t.Errorf("a current cell between cells: %v", fams["dbarena_plan_current_cell"])
	}
}

// FuzzCheckAddr: any --metrics-listen value is accepted or refused with a
// one-line error, never a panic; without anyAddr an accepted address is
// loopback.
func FuzzCheckAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9464", ":9464", "[::1]:0", "localhost:http", "0.0.0.0:1", "[fe80::1%eth0]:9464", "127.0.0.1:99999", "a:b:c", ""} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, addr string, anyAddr bool) {
		err := CheckAddr(addr, anyAddr)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error on more than one line: %q", err)
			}
			return
		}
		host, _, serr := net.SplitHostPort(addr)
		if serr != nil {
			t.Fatalf("accepted %q: %v", addr, serr)
		}
		if !anyAddr && !isLoopback(host) {
			t.Errorf("accepted %q, not loopback", addr)
		}
	})
}
