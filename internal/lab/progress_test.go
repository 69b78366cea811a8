package lab

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestETA(t *testing.T) {
	s := time.Second
	e := NewETA([]time.Duration{10 * s, 10 * s, 0, 10 * s})
	steps := []struct {
		name string
		ran  func()
		left []int
		want time.Duration
	}{
		{"the estimates before anything ran", nil, []int{0, 1, 3}, 30 * s},
		{"a step with no estimate is not known before anything ran", nil, []int{0, 1, 2, 3}, -1},
		{"a step that took 1.5x its estimate scales the others", func() { e.Ran(0, 15*s) }, []int{1, 3}, 30 * s},
		{"with no step without estimate run, the mean of all", nil, []int{1, 2, 3}, 45 * s},
		{"the mean of the steps run without estimate", func() { e.Ran(2, 4*s) }, []int{1, 2, 3}, 34 * s},
		{"nothing left", nil, nil, 0},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.ran != nil {
				st.ran()
			}
			if got := e.Left(st.left); got != st.want {
				t.Errorf("Left(%v) = %v, want %v", st.left, got, st.want)
			}
		})
	}
}

func TestStepEstimates(t *testing.T) {
	reg := workload.NewRegistry(func() workload.Workload { return &toy{} }, func() workload.Workload { return &limited{} })
	p := mustParse(t, `name: e
servers: [{flavor: mariadb}]
workloads:
  - toy
  - name: limited
    params: {queries: 100}
rounds: 1
warmup: 10s
`)
	// toy runs 60s + 10s; limited ends at its event limit: not known.
	got := StepEstimates(p, reg)
	if want := []time.Duration{70 * time.Second, 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("with the registry: %v, want %v", got, want)
	}
	if got, want := StepEstimates(p, nil), []time.Duration{70 * time.Second, 70 * time.Second}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("without: %v, want %v", got, want)
	}
}

// starter is the fakes' observer that also hears steps start.
type starter struct {
	*recorder
	started []string // "i/n server rR eta"
}

func (s *starter) Starting(i, n int, step plan.Step, eta time.Duration) {
	s.started = append(s.started, fmt.Sprintf("%d/%d %s r%d %v", i+1, n, step.CoordMap()["server"], step.Round, eta))
}

// TestRunStarting: the lab says which step starts, of how many, and the
// time left from the plan's estimate (1s per step here), the steps
// complete before a resume not counted; once steps ran, the estimate is
// corrected by their time (the fakes take none).
func TestRunStarting(t *testing.T) {
	p := twoServers(t, 2, "")
	t.Run("fresh", func(t *testing.T) {
		w := newWorld()
		obs := &starter{recorder: (*recorder)(w)}
		l := w.lab()
		l.Observer = obs
		if _, err := l.Run(context.Background(), p, Options{Session: "s"}); err != nil {
			t.Fatal(err)
		}
		if len(obs.started) != 8 || obs.started[0] != "1/8 a r1 8s" || obs.started[7] != "8/8 b r2 0s" {
			t.Errorf("started %q", obs.started)
		}
	})
	t.Run("resume", func(t *testing.T) {
		w := newWorld()
		w.store(p, "old", 0, summary.StatusComplete)
		w.store(p, "old", 1, summary.StatusComplete)
		obs := &starter{recorder: (*recorder)(w)}
		l := w.lab()
		l.Observer = obs
		if _, err := l.Run(context.Background(), p, Options{Resume: true}); err != nil {
			t.Fatal(err)
		}
		if len(obs.started) != 6 || obs.started[0] != "3/8 b r1 6s" {
			t.Errorf("started %q", obs.started)
		}
	})
}
