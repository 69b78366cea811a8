package lab

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestRunRecordsScale: every run of a plan carries its --scale (tag
// plan.scale: "1" at full size, "0.25" after Scale(0.25)), also a sharded
// step's shards (StepData), so that reports keep scales apart.
func TestRunRecordsScale(t *testing.T) {
	for _, tc := range []struct {
		scale float64
		want  string
	}{{1, "1"}, {0.25, "0.25"}} {
		w := newWorld()
		p := twoServers(t, 1, "")
		p.Scale(tc.scale)
		if _, err := w.lab().Run(context.Background(), p, Options{Session: "s"}); err != nil {
			t.Fatal(err)
		}
		if len(w.runs) == 0 {
			t.Fatal("no runs")
		}
		for _, r := range w.runs {
			if r.Tags[TagScale] != tc.want {
				t.Errorf("scale %g: run %d tags %v, want %s=%s", tc.scale, r.ID, r.Tags, TagScale, tc.want)
			}
		}
		j := Job{Plan: p, Step: p.Schedule()[0], Session: "s"}
		d, _ := j.Data("results.db")
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseStepData(string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range back.Job(j.Target).Tags() {
			if kv[0] == TagScale && kv[1] != tc.want {
				t.Errorf("scale %g: a shard's tag %s=%s, want %s", tc.scale, kv[0], kv[1], tc.want)
			}
		}
	}
}

// TestResumeKeepsScale: --resume of a session run at another --scale is
// refused (ErrResumeScale, naming the scale to resume with) before
// anything runs; at the session's own scale it resumes.
func TestResumeKeepsScale(t *testing.T) {
	quarter := twoServers(t, 2, "")
	quarter.Scale(0.25)
	w := newWorld()
	w.store(quarter, "q", 0, summary.StatusComplete)
	full := twoServers(t, 2, "")
	_, err := w.lab().Run(context.Background(), full, Options{Resume: true})
	if !errors.Is(err, ErrResumeScale) || !strings.Contains(err.Error(), "session q ran at --scale 0.25, not 1; resume it with --scale 0.25") {
		t.Fatalf("resume at full size of a quarter-size session: %v", err)
	}
	if len(w.log) != 0 {
		t.Errorf("ran %q before refusing", w.log)
	}
	res, err := w.lab().Run(context.Background(), quarter, Options{Resume: true})
	if err != nil || res.Session != "q" || res.Skipped != 1 {
		t.Fatalf("resume at the session's scale: %+v, %v", res, err)
	}
}
