package runner

import (
	"reflect"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/results/summary"
)

func TestFillOutagesAndUnfinished(t *testing.T) {
	res := &Result{Elapsed: 10 * time.Second, Events: 800, Unfinished: 3, Latency: hist.New(),
		Outages: []Outage{{Start: 2 * time.Second, End: 4 * time.Second, Recovered: true},
			{Start: 9 * time.Second, End: 10 * time.Second}},
		Uptime: 7 * time.Second}
	var run summary.Run
	res.Fill(&run)
	if run.Totals.Unfinished != 3 {
		t.Errorf("Totals.Unfinished = %d, want 3", run.Totals.Unfinished)
	}
	want := []summary.Outage{{StartS: 2, EndS: 4, Recovered: true}, {StartS: 9, EndS: 10}}
	if !reflect.DeepEqual(run.Outages, want) {
		t.Errorf("Outages = %+v, want %+v", run.Outages, want)
	}
	if run.UptimeS != 7 || run.Throughput.TPS != 80 || run.Throughput.UpTPS != 800.0/7 {
		t.Errorf("UptimeS %v, TPS %v, UpTPS %v; want 7, 80, %v", run.UptimeS, run.Throughput.TPS, run.Throughput.UpTPS, 800.0/7)
	}

	var clean summary.Run
	(&Result{Elapsed: 10 * time.Second, Uptime: 10 * time.Second, Events: 800, Latency: hist.New()}).Fill(&clean)
	if clean.Outages != nil || clean.Throughput.UpTPS != 0 || clean.UptimeS != 10 {
		t.Errorf("without outages: Outages %v, UpTPS %v, UptimeS %v; want none, 0, 10", clean.Outages, clean.Throughput.UpTPS, clean.UptimeS)
	}
}
