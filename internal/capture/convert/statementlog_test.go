package convert

import (
	"fmt"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/capturetest"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestPostgresStatementLog: a real PostgreSQL server logging the way
// pgBadger asks (log_min_duration_statement=0, no connection lines, its
// recommended prefix) with log_timezone Europe/Moscow (times written
// "... MSK"): both its stderr log (prefix detected) and its csvlog
// convert, sessions from %p and session_id, times in UTC (issue 34 item 9:
// the log was refused, and MSK read as UTC).
func TestPostgresStatementLog(t *testing.T) {
	sb := sandboxtest.StartNamed(t, target.FlavorPostgres, func(s *sandbox.Spec) {
		s.Settings = []sandbox.Setting{
			{Key: "logging_collector", Value: "on"},
			{Key: "log_destination", Value: "stderr,csvlog"},
			{Key: "log_directory", Value: "log"},
			{Key: "log_filename", Value: "pg.log"},
			{Key: "log_line_prefix", Value: "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h "},
			{Key: "log_min_duration_statement", Value: "0"},
			{Key: "log_connections", Value: "off"},
			{Key: "log_disconnections", Value: "off"},
			{Key: "log_timezone", Value: "Europe/Moscow"},
		}
	})
	before := time.Now().Add(-time.Second)
	capturetest.Traffic(t, sb.Target, sessions)
	after := time.Now().Add(time.Second)
	logs := capturetest.LogsOf(t, sb)
	last := capturetest.Marker(sessions, 9)
	capturetest.WaitFor(t, logs.Stderr, last)
	capturetest.WaitFor(t, logs.CSV, last)
	capturetest.WaitFor(t, logs.Stderr, " MSK [")

	for name, o := range map[string]Options{"stderr": {From: PGStderr}, "csv": {From: PGCSV}} {
		t.Run(name, func(t *testing.T) {
			h, evs := convertLog(t, map[string]string{"stderr": logs.Stderr, "csv": logs.CSV}[name], o)
			steps := map[int][]int{}
			sessOf := map[int]string{}
			var first, lastAt time.Time
			for _, e := range evs {
				if e.Kind == capture.KindConnect || e.Kind == capture.KindQuit {
					t.Fatalf("a log without connection lines gave %+v", e)
				}
				m := markerRE.FindStringSubmatch(e.SQL)
				if m == nil {
					continue
				}
				var s, step int
				fmt.Sscan(m[1], &s)
				fmt.Sscan(m[2], &step)
				if prev, ok := sessOf[s]; ok && prev != e.Session {
					t.Fatalf("traffic session %d in capture sessions %s and %s", s, prev, e.Session)
				}
				sessOf[s] = e.Session
				steps[s] = append(steps[s], step)
				if e.User != sb.Target.User || e.DB != sb.Target.Database || e.DurUS == nil {
					t.Errorf("%+v: user, db or duration missing", e)
				}
				at := h.Start.Add(time.Duration(e.TUS) * time.Microsecond)
				if first.IsZero() {
					first = at
				}
				lastAt = at
			}
			seen := map[string]bool{}
			for s := 1; s <= sessions; s++ {
				if fmt.Sprint(steps[s]) != fmt.Sprint(capturetest.MarkedSteps) {
					t.Errorf("traffic session %d: steps %v, want %v", s, steps[s], capturetest.MarkedSteps)
				}
				if seen[sessOf[s]] {
					t.Errorf("two traffic sessions in capture session %s", sessOf[s])
				}
				seen[sessOf[s]] = true
			}
			// MSK is UTC+3: read as UTC the times would be 3 hours late.
			if first.Before(before.Truncate(time.Second)) || lastAt.After(after) {
				t.Errorf("statements at %v to %v, sent between %v and %v", first, lastAt, before, after)
			}
		})
	}
}
