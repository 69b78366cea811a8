package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/web"
)

// TestJobLimitEvents: an http cell with reps runs threads x reps events;
// the plan's duration caps it only when the plan gives one.
func TestJobLimitEvents(t *testing.T) {
	reg := workload.NewRegistry(func() workload.Workload { return web.New() })
	for _, tt := range []struct {
		extra string
		dur   time.Duration
	}{{"", 0}, {"duration: 7s\n", 7 * time.Second}} {
		p := mustParse(t, "name: h\nservers:\n  - {name: a, flavor: mariadb}\nworkloads:\n  - name: http\n    params: {url: 'http://127.0.0.1:1/', reps: 5}\naxes:\n  threads: [3]\n"+tt.extra)
		steps := p.Schedule()
		j := Job{Plan: p, Step: steps[0]}
		w, err := j.Workload(reg)
		if err != nil {
			t.Fatal(err)
		}
		w.(interface{ SetThreads(int) }).SetThreads(j.Threads())
		cfg := j.Config()
		j.LimitEvents(w, &cfg)
		if cfg.Events != 15 || cfg.Duration != tt.dur {
			t.Errorf("%q: events %d duration %s, want 15, %s", tt.extra, cfg.Events, cfg.Duration, tt.dur)
		}
	}
}

// TestCheckDetachedConnectAxis: an http workload takes no connect axis.
func TestCheckDetachedConnectAxis(t *testing.T) {
	reg := workload.NewRegistry(func() workload.Workload { return web.New() })
	p := mustParse(t, "name: h\nservers:\n  - {name: a, flavor: mariadb}\nworkloads:\n  - name: http\n    params: {url: 'http://127.0.0.1:1/'}\naxes:\n  connect: [persistent, per-event]\n")
	errs := Check(p, reg)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "axis connect: workload http has no database connection") {
		t.Errorf("errors %v", errs)
	}
}
