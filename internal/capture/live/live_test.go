package live

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/capturetest"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

const sessions = 2

// captureDuring runs Capture until traffic has been sent, and returns the
// events.
func captureDuring(t *testing.T, o Options, traffic func()) []capture.Event {
	t.Helper()
	on := make(chan struct{})
	o.Duration = time.Minute
	o.Notify = func(msg string) {
		if strings.Contains(msg, " on ") {
			close(on)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		res convert.Result
		err error
	}
	done := make(chan result, 1)
	var buf bytes.Buffer
	go func() {
		res, err := Capture(ctx, o, &buf)
		done <- result{res, err}
	}()
	select {
	case <-on:
	case r := <-done:
		t.Fatalf("capture ended before it began: %v", r.err)
	}
	traffic()
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	rd, err := capture.NewReader(&buf, "live")
	if err != nil {
		t.Fatal(err)
	}
	var evs []capture.Event
	for {
		var e capture.Event
		if err := rd.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	return evs
}

var markerRE = regexp.MustCompile(`/\*cap:(\d+):(\d+)\*/`)

// checkOrder checks each traffic session's marked statements; the
// performance schema lacks the binary protocol's executions (step 6).
func checkOrder(t *testing.T, evs []capture.Event, noExecute bool) {
	t.Helper()
	steps := map[int][]int{}
	for _, e := range evs {
		if strings.Contains(e.SQL, "SET GLOBAL") || strings.Contains(e.SQL, "ALTER SYSTEM") {
			t.Errorf("the capturing session's own statement: %q", e.SQL)
		}
		m := markerRE.FindStringSubmatch(e.SQL)
		if m == nil || e.Kind == capture.KindPrepare {
			continue
		}
		s, _ := strconv.Atoi(m[1])
		step, _ := strconv.Atoi(m[2])
		steps[s] = append(steps[s], step)
	}
	for s := 1; s <= sessions; s++ {
		want := fmtInts(capturetest.MarkedSteps)
		if noExecute {
			want = strings.ReplaceAll(want, "6 6 ", "")
		}
		if got := fmtInts(steps[s]); got != want {
			t.Errorf("session %d: steps %s, want %s", s, got, want)
		}
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

func globals(t *testing.T, tgt target.Target, q string) string {
	t.Helper()
	d, _ := dialect.For(tgt.Family())
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(q).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMariaDB(t *testing.T) {
	sb := sandboxtest.StartNamed(t, target.FlavorMariaDB, func(s *sandbox.Spec) {
		s.Settings = []sandbox.Setting{{Key: "performance_schema", Value: "ON"}}
	})
	v, err := sb.Manager.Get(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	admin := v.AdminTarget()
	const q = "SELECT CONCAT(@@GLOBAL.general_log, ',', @@GLOBAL.log_output, ',', @@GLOBAL.general_log_file)"
	before := globals(t, admin, q)
	for _, mode := range []string{"file", "table", "performance_schema"} {
		t.Run(mode, func(t *testing.T) {
			o := Options{Admin: admin, PerfSchema: mode == "performance_schema"}
			if mode == "file" {
				o.Datadir = v.Datadir
			}
			evs := captureDuring(t, o, func() { capturetest.Traffic(t, sb.Target, sessions) })
			checkOrder(t, evs, o.PerfSchema)
			if after := globals(t, admin, q); after != before {
				t.Errorf("settings not restored: %s, were %s", after, before)
			}
		})
	}
}

func TestPostgres(t *testing.T) {
	sb := sandboxtest.StartNamed(t, target.FlavorPostgres, nil)
	v, err := sb.Manager.Get(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	admin := v.AdminTarget()
	const q = "SELECT current_setting('log_statement') || ',' || current_setting('log_connections') || ',' || current_setting('log_line_prefix')"
	before := globals(t, admin, q)
	evs := captureDuring(t, Options{Admin: admin, ErrorLog: v.ErrorLog}, func() { capturetest.Traffic(t, sb.Target, sessions) })
	checkOrder(t, evs, false)
	var after string
	for i := 0; i < 100; i++ { // the reload reaches new sessions at once; poll in case
		if after = globals(t, admin, q); after == before {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after != before {
		t.Errorf("settings not restored: %s, were %s", after, before)
	}
}
