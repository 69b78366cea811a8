package convert

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/capturetest"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

const sessions = 3

// convertLog converts path and reads the capture back.
func convertLog(t *testing.T, path string, o Options) (capture.Header, []capture.Event) {
	t.Helper()
	var buf bytes.Buffer
	res, err := Files([]string{path}, o, &buf)
	if err != nil {
		t.Fatalf("convert %s: %v", o.From, err)
	}
	r, err := capture.NewReader(&buf, "out")
	if err != nil {
		t.Fatal(err)
	}
	var evs []capture.Event
	for {
		var e capture.Event
		if err := r.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	if int64(len(evs)) != res.Events || res.Header.Skipped != 0 {
		t.Fatalf("%d events read, %d written, %d skipped", len(evs), res.Events, res.Header.Skipped)
	}
	return r.Header, evs
}

var markerRE = regexp.MustCompile(`/\*cap:(\d+):(\d+)\*/`)

// checkSessions asserts that each traffic session's marked statements are
// all there, in order, in one capture session with the workload's user
// and database, between its connect and quit; kinds counts the kinds of
// marked statements.
func checkSessions(t *testing.T, evs []capture.Event, user, db string, wantDur, wantRows, wantQuit bool) map[string]int {
	t.Helper()
	steps := map[int][]int{}
	sessOf := map[int]string{}
	kinds := map[string]int{}
	opened, quit := map[string]bool{}, map[string]bool{}
	var lastT int64
	for _, e := range evs {
		if e.TUS < lastT {
			t.Fatalf("events out of order: %d after %d", e.TUS, lastT)
		}
		lastT = e.TUS
		switch e.Kind {
		case capture.KindConnect:
			opened[e.Session] = true
		case capture.KindQuit:
			quit[e.Session] = true
		}
		m := markerRE.FindStringSubmatch(e.SQL)
		if m == nil || e.Kind == capture.KindPrepare {
			continue
		}
		s, _ := strconv.Atoi(m[1])
		step, _ := strconv.Atoi(m[2])
		if prev, ok := sessOf[s]; ok && prev != e.Session {
			t.Fatalf("traffic session %d in capture sessions %s and %s", s, prev, e.Session)
		}
		sessOf[s] = e.Session
		steps[s] = append(steps[s], step)
		kinds[e.Kind]++
		if !opened[e.Session] || quit[e.Session] {
			t.Errorf("session %s: %q outside its connect/quit", e.Session, e.SQL)
		}
		if e.User != user || e.DB != db {
			t.Errorf("session %s: user %q db %q, want %q %q", e.Session, e.User, e.DB, user, db)
		}
		if (wantDur && e.DurUS == nil) || (wantRows && e.Rows == nil) {
			t.Errorf("%q: no dur_us or rows", e.SQL)
		}
	}
	for s := 1; s <= sessions; s++ {
		if fmt.Sprint(steps[s]) != fmt.Sprint(capturetest.MarkedSteps) {
			t.Errorf("traffic session %d: steps %v, want %v", s, steps[s], capturetest.MarkedSteps)
		}
		if wantQuit && !quit[sessOf[s]] {
			t.Errorf("traffic session %d (%s): no quit", s, sessOf[s])
		}
	}
	return kinds
}

func find(evs []capture.Event, sub string) *capture.Event {
	for i := range evs {
		if strings.Contains(evs[i].SQL, sub) && evs[i].Kind != capture.KindPrepare {
			return &evs[i]
		}
	}
	return nil
}

func TestMariaDBLogs(t *testing.T) {
	sb := capturetest.StartMariaDB(t)
	capturetest.Traffic(t, sb.Target, sessions)
	logs := capturetest.LogsOf(t, sb)
	last := capturetest.Marker(sessions, 9)
	capturetest.WaitFor(t, logs.General, last)
	b, _ := os.ReadFile(logs.General)
	capturetest.WaitCount(t, logs.General, " Quit\t", strings.Count(string(b), " Connect\t"))
	capturetest.WaitFor(t, logs.Slow, last)

	t.Run("general", func(t *testing.T) {
		_, evs := convertLog(t, logs.General, Options{From: MySQLGeneral})
		kinds := checkSessions(t, evs, sb.Target.User, sb.Target.Database, false, false, true)
		// go-sql-driver prepares step 6 on the server: two executions.
		if kinds[capture.KindExecute] != 2*sessions || kinds[capture.KindQuery] != 6*sessions {
			t.Errorf("kinds of marked statements %v", kinds)
		}
		if e := find(evs, capturetest.Marker(1, 8)); e == nil || !strings.Contains(e.SQL, "\n  'two') AS b") {
			t.Errorf("multi-line statement: %+v", e)
		}
		if e := find(evs, capturetest.Marker(1, 6)); e == nil || e.Kind != capture.KindExecute || strings.Contains(e.SQL, "?") {
			t.Errorf("execute carries the substituted text: %+v", e)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		checkMalformed(t, logs.General, Options{From: MySQLGeneral}, 5, "2024-13-45T99:00:00Z\t 5 Query\tSELECT 1")
		// Before the second entry: a boundary.
		b, _ := os.ReadFile(logs.Slow)
		n, seen := 0, 0
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "# User@Host: ") {
				if seen++; seen == 2 {
					n = i
					break
				}
			}
		}
		if n == 0 {
			t.Fatalf("slow log with fewer than two entries:\n%s", b)
		}
		checkMalformed(t, logs.Slow, Options{From: MySQLSlow}, n, "# Time: 2024-13-45T99:00:00Z")
	})
	t.Run("slow", func(t *testing.T) {
		_, evs := convertLog(t, logs.Slow, Options{From: MySQLSlow})
		kinds := checkSessions(t, evs, sb.Target.User, sb.Target.Database, true, true, false)
		if kinds[capture.KindQuery] != 8*sessions {
			t.Errorf("kinds of marked statements %v", kinds)
		}
		if e := find(evs, capturetest.Marker(1, 9)); e == nil || *e.Rows != 1 {
			t.Errorf("rows of a one-row SELECT: %+v", e)
		}
		if e := find(evs, capturetest.Marker(1, 4)); e == nil || *e.Rows != 1 {
			t.Errorf("rows of a one-row INSERT: %+v", e)
		}
	})
}

// corrupt copies the log at path with a bad line inserted after line n,
// and returns the copy's path.
func corrupt(t *testing.T, path string, n int, bad string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	out := strings.Join(lines[:n], "") + bad + "\n" + strings.Join(lines[n:], "")
	p := t.TempDir() + "/bad.log"
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkMalformed converts a corrupted copy of a real log: an error naming
// the bad line, or with SkipBad one skipped line.
func checkMalformed(t *testing.T, path string, o Options, n int, bad string) {
	t.Helper()
	p := corrupt(t, path, n, bad)
	_, err := Files([]string{p}, o, io.Discard)
	if want := fmt.Sprintf("%s:%d: ", p, n+1); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%s: want an error at %s, got %v", o.From, want, err)
	}
	o.SkipBad = true
	res, err := Files([]string{p}, o, io.Discard)
	if err != nil || res.Header.Skipped != 1 {
		t.Fatalf("%s --skip-bad: %v, skipped %d", o.From, err, res.Header.Skipped)
	}
}

func TestPostgresLogs(t *testing.T) {
	sb := capturetest.StartPostgres(t)
	capturetest.Traffic(t, sb.Target, sessions)
	logs := capturetest.LogsOf(t, sb)
	capturetest.WaitFor(t, logs.Stderr, capturetest.Marker(sessions, 9))
	capturetest.WaitFor(t, logs.CSV, capturetest.Marker(sessions, 9))
	// The last session's disconnection follows its last statement.
	for _, p := range []string{logs.Stderr, logs.CSV} {
		capturetest.WaitCount(t, p, "user="+sb.Target.User+" database="+sb.Target.Database+" host=", sessions+1)
	}
	check := func(t *testing.T, evs []capture.Event) {
		kinds := checkSessions(t, evs, sb.Target.User, sb.Target.Database, true, false, true)
		// pgx sends statements with arguments (step 6) through the extended
		// protocol: two executions of a named statement.
		if kinds[capture.KindExecute] < 2*sessions {
			t.Errorf("kinds of marked statements %v", kinds)
		}
		e := find(evs, capturetest.Marker(1, 6))
		if e == nil || e.Kind != capture.KindExecute || len(e.Params) != 1 || e.Params[0] == nil || !strings.Contains(e.SQL, "$1") {
			t.Errorf("execute with parameters: %+v", e)
		}
		if e := find(evs, capturetest.Marker(1, 8)); e == nil || !strings.Contains(e.SQL, "\n  'two') AS b") {
			t.Errorf("multi-line statement: %+v", e)
		}
	}
	t.Run("csv", func(t *testing.T) {
		_, evs := convertLog(t, logs.CSV, Options{From: PGCSV})
		check(t, evs)
	})
	t.Run("stderr", func(t *testing.T) {
		_, evs := convertLog(t, logs.Stderr, Options{From: PGStderr, LogLinePrefix: capturetest.PostgresPrefix})
		check(t, evs)
	})
	t.Run("malformed", func(t *testing.T) {
		checkMalformed(t, logs.CSV, Options{From: PGCSV}, 3, "2024-11-22 22:50:01.100 UTC,not,enough,columns")
		// After a statement's line (after other messages, such a line is
		// noise: skipped and counted).
		b, err := os.ReadFile(logs.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		ls := strings.Split(string(b), "\n")
		for i, l := range ls {
			if strings.Contains(l, "LOG:  statement: ") && i+1 < len(ls) && !strings.HasPrefix(ls[i+1], "\t") {
				n = i + 1
				break
			}
		}
		checkMalformed(t, logs.Stderr, Options{From: PGStderr, LogLinePrefix: capturetest.PostgresPrefix}, n, "garbage without the prefix")
	})
	t.Run("stderr-detected-prefix", func(t *testing.T) {
		_, evs := convertLog(t, logs.Stderr, Options{From: PGStderr})
		check(t, evs)
	})
}

type captureStats = capture.Stats

func captureHeader(from string) capture.Header {
	return capture.Header{Flavor: Flavor(from), Source: from}
}
