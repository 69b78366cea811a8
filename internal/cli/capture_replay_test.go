package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/capturetest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// pgExec runs statements on tgt, one connection.
func pgExec(t *testing.T, tgt target.Target, qs ...string) {
	t.Helper()
	db := openTarget(t, tgt)
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// waitLogging waits (up to 30 s) until a new session of tgt (the admin:
// not the captured user) sees log_statement=all: the live capture has
// switched its logging on.
func waitLogging(t *testing.T, tgt target.Target) {
	t.Helper()
	db := openTarget(t, tgt)
	defer db.Close()
	db.SetMaxIdleConns(0) // a new session each time
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var v string
		if err := db.QueryRow("SELECT current_setting('log_statement') || current_setting('log_connections')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v == "allon" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("logging not on after 30 s: %s", v)
		}
	}
}

var capMarker = regexp.MustCompile(`/\*cap:(\d+):(\d+)\*/`)

// `dbarena capture --sandbox pg --time D` while the test client sends
// traffic (with an idle gap, so the capture spans seconds), then `run
// replay --speed 2` into an empty database: every statement, each
// depending on the one before in its session, runs without error, and
// the replay takes about half the captured span.
func TestCaptureLiveReplaySpeed(t *testing.T) {
	needServers(t)
	const sessions = 2
	tgt := suite.postgres.Target()
	file := filepath.Join(t.TempDir(), "live.capture")
	stop := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		done <- dbarenaCtx(t, context.Background(), stop, "capture", "--sandbox", "pg", "--time", "120s", "--users", tgt.User, "-o", file)
	}()
	waitLogging(t, suite.postgres.AdminTarget())
	capturetest.Traffic(t, tgt, sessions)
	// The gap is the traffic's shape (it gives the capture a span to
	// halve), not a wait for anything.
	time.Sleep(1500 * time.Millisecond)
	pgExec(t, tgt, "/*cap:end*/ SELECT 1")
	close(stop)
	r := <-done
	r.mustSucceed(t)

	// Each session's marked statements, in order.
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f, file)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string][]string{}
	sawEnd := false
	for {
		var e capture.Event
		if err := rd.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		sawEnd = sawEnd || strings.Contains(e.SQL, "/*cap:end*/")
		if m := capMarker.FindStringSubmatch(e.SQL); m != nil && e.Kind != capture.KindPrepare {
			steps[m[1]] = append(steps[m[1]], m[2])
		}
	}
	want := strings.Trim(fmt.Sprint(capturetest.MarkedSteps), "[]")
	for s := 1; s <= sessions; s++ {
		if got := strings.Join(steps[strconv.Itoa(s)], " "); got != want {
			t.Errorf("captured session %d: steps %s, want %s", s, got, want)
		}
	}
	if !sawEnd {
		t.Fatal("the last statement is not in the capture")
	}

	pgExec(t, suite.postgres.AdminTarget(), "DROP DATABASE IF EXISTS cli_replay", "CREATE DATABASE cli_replay OWNER "+tgt.User)
	js := jsonPath(t)
	// At the captured concurrency: PostgreSQL logs a disconnection as the
	// backend exits, after the client has opened its next session, but the
	// table's session holds its connection only until its last statement,
	// so the next one's INSERT runs after the CREATE TABLE.
	dbarena(t, "run", "replay", pgTarget, "--capture", file, "--speed", "2", "--db", "cli_replay", "--json", js).mustSucceed(t)
	run := readSummary(t, js)
	rp := run.Replay
	// The table's session (CREATE, INSERT), each traffic session's marked
	// statements with BEGIN and COMMIT, the last SELECT.
	statements := int64(2 + sessions*(len(capturetest.MarkedSteps)+2) + 1)
	if run.Totals.Errors != 0 || rp == nil || rp.Statements != statements {
		t.Fatalf("errors %d (%v), replay %+v", run.Totals.Errors, run.Totals.ErrorsByCode, rp)
	}
	// Paced statements never start early, so the replay takes at least
	// half the span; beyond that only by the lag it recorded (a busy
	// machine's stall shows there): a replay at the captured speed would
	// take the whole span with no lag.
	if rp.SpanS < 1.5 || rp.ExpectedS != rp.SpanS/2 || rp.LagMS == nil || run.DurationS < rp.ExpectedS*0.95 ||
		run.DurationS > rp.ExpectedS+rp.LagMS.Max/1000+0.25 {
		t.Errorf("span %.3f s, expected %.3f s, replay took %.3f s (lag %+v)", rp.SpanS, rp.ExpectedS, run.DurationS, rp.LagMS)
	}
	t.Logf("span %.3f s, replay at --speed 2 took %.3f s", rp.SpanS, run.DurationS)
}
