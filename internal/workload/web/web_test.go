package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// app is a small application: /ok answers "hello", /missing 404, /boom
// 500, /slow waits for its client to give up, /post echoes the body's
// length. It counts requests by path and the connections it accepted.
type app struct {
	srv   *httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	posts []string
	conns atomic.Int64
}

func newApp(t *testing.T) *app {
	a := &app{hits: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.HandleFunc("/boom", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	})
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.posts = append(a.posts, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b)+" "+r.Header.Get("X-Test"))
		a.mu.Unlock()
	})
	a.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.hits[r.URL.Path]++
		a.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	a.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			a.conns.Add(1)
		}
	}
	a.srv.Start()
	t.Cleanup(a.srv.Close)
	return a
}

func (a *app) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits[path]
}

// configure builds the workload from command-line flags.
func configure(t *testing.T, args ...string) *Workload {
	t.Helper()
	wl := New().(*Workload)
	fs := pflag.NewFlagSet("http", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if errs := wl.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	return wl
}

// run runs wl on threads workers until they are done (or time).
func run(t *testing.T, wl *Workload, threads int, d time.Duration) (*runner.Result, *summary.Run) {
	t.Helper()
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Duration = threads, d
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, cfg, workload.Env{}, wl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil || res.Interrupted {
		t.Fatalf("run: %v (interrupted %v)", res.Err, res.Interrupted)
	}
	sum := &summary.Run{}
	res.Fill(sum)
	wl.Summarize(sum)
	if !sum.HasSection(summary.SectionSiege) || len(sum.Sections) != 1 {
		t.Errorf("sections %q, want the siege table", sum.Sections)
	}
	return res, sum
}

func writeFile(t *testing.T, name, text string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRepsMakeExactlyThreadsTimesReps: siege -c 4 -r 10 over a list is 40
// requests, as the server counts them, in list order.
func TestRepsMakeExactlyThreadsTimesReps(t *testing.T) {
	a := newApp(t)
	list := writeFile(t, "urls.txt", fmt.Sprintf("APP=%s\n$(APP)/ok\n/ok?second\n", a.srv.URL))
	wl := configure(t, "--urls", list, "--reps", "10")
	res, sum := run(t, wl, 4, time.Hour)
	if n := a.count("/ok"); n != 40 {
		t.Errorf("the server saw %d requests, want 40", n)
	}
	if res.Events != 40 || res.Errors != 0 {
		t.Errorf("events %d errors %d, want 40 and 0", res.Events, res.Errors)
	}
	first, second := res.PerType[a.srv.URL+"/ok"], res.PerType[a.srv.URL+"/ok?second"]
	if first == nil || second == nil || first.Count != 20 || second.Count != 20 {
		t.Errorf("per URL: %v", res.PerType)
	}
	f := sum.Figures
	if f[FigTransactions] != 40 || f[FigSuccessful] != 40 || f[FigFailed] != 0 || f[FigAvailability] != 100 ||
		f[FigBytes] != 200 || f[FigStatus+"200"] != 40 || f[FigLongest] < f[FigShortest] || f[FigShortest] <= 0 {
		t.Errorf("siege figures: %v", f)
	}
	// Keep-alive: each user keeps its connection.
	if c := a.conns.Load(); c > 4 {
		t.Errorf("%d connections for 4 users with keep-alive", c)
	}
}

// TestFailuresByCause: a 404, a 500, a timeout and a refused connection
// are failures under their causes; the run goes on.
func TestFailuresByCause(t *testing.T) {
	a := newApp(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	wl := configure(t, "--url", a.srv.URL+"/ok", "--url", "/missing", "--url", "/boom", "--url", "/slow",
		"--url", closed, "--reps", "5", "--timeout", "1.5")
	res, sum := run(t, wl, 2, time.Hour)
	want := map[string]int64{Cause4xx: 2, Cause5xx: 2, CauseTimeout: 2, CauseRefused: 2}
	for k, v := range want {
		if res.ErrorsByCode[k] != v {
			t.Errorf("errors by cause %v, want %v", res.ErrorsByCode, want)
			break
		}
	}
	if res.Events != 2 || res.Errors != 8 {
		t.Errorf("events %d errors %d, want 2 and 8", res.Events, res.Errors)
	}
	f := sum.Figures
	// siege: a 404 and a 500 are transactions, not successful ones; a
	// timeout and a refusal are failed transactions.
	if f[FigTransactions] != 6 || f[FigSuccessful] != 2 || f[FigFailed] != 4 || f[FigStatus+"404"] != 2 || f[FigStatus+"500"] != 2 {
		t.Errorf("siege figures: %v", f)
	}
	if a := f[FigAvailability]; a < 59.9 || a > 60.1 {
		t.Errorf("availability %.2f, want 60", a)
	}
	if got := res.PerType[a.srv.URL+"/missing"]; got == nil || got.Errors != 2 {
		t.Errorf("per URL /missing: %+v", got)
	}
}

// TestPostBodiesAndHeaders: POST data and files from the list, headers
// from --header, keep-alive off opens a connection per request.
func TestPostBodiesAndHeaders(t *testing.T) {
	a := newApp(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"k":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(list, []byte(a.srv.URL+"/post POST a=1&b=2\n/post PUT <b.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := configure(t, "--urls", list, "--reps", "2", "--header", "X-Test: yes", "--keep-alive", "off")
	run(t, wl, 1, time.Hour)
	a.mu.Lock()
	got := strings.Join(a.posts, "|")
	a.mu.Unlock()
	want := `POST application/x-www-form-urlencoded a=1&b=2 yes|PUT application/json {"k":1} yes`
	if got != want {
		t.Errorf("the server got %q, want %q", got, want)
	}
	if c := a.conns.Load(); c != 2 {
		t.Errorf("%d connections for 2 requests without keep-alive, want 2", c)
	}
}

// TestDelayIsAPause: the think time of 0..--delay is reported as the
// event's Pause, which the runner leaves out of the latency.
func TestDelayIsAPause(t *testing.T) {
	a := newApp(t)
	wl := configure(t, "--url", a.srv.URL+"/ok", "--delay", "0.02", "--random")
	w := newWorker(wl, 0, 1)
	defer w.Close()
	var total time.Duration
	for i := 0; i < 10; i++ {
		var ev workload.Event
		if err := w.Event(context.Background(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Pause < 0 || ev.Pause > 20*time.Millisecond {
			t.Fatalf("pause %v, want 0..20ms", ev.Pause)
		}
		total += ev.Pause
	}
	if total == 0 {
		t.Error("no think time in 10 requests")
	}
	if n := a.count("/ok"); n != 10 {
		t.Errorf("%d requests, want 10", n)
	}
}

// TestRedirects: a 3xx is the result unless --follow-redirects.
func TestRedirects(t *testing.T) {
	a := newApp(t)
	_, sum := run(t, configure(t, "--url", a.srv.URL+"/moved", "--reps", "2"), 1, time.Hour)
	if a.count("/ok") != 0 || sum.Figures[FigStatus+"302"] != 2 || sum.Figures[FigSuccessful] != 2 {
		t.Errorf("without --follow-redirects: /ok hit %d times, figures %v", a.count("/ok"), sum.Figures)
	}
	_, sum = run(t, configure(t, "--url", a.srv.URL+"/moved", "--reps", "2", "--follow-redirects"), 1, time.Hour)
	if a.count("/ok") != 2 || sum.Figures[FigStatus+"200"] != 2 {
		t.Errorf("with --follow-redirects: /ok hit %d times, figures %v", a.count("/ok"), sum.Figures)
	}
}

// TestWarmupLeftOut: siege's figures restart when the measured period
// begins.
func TestWarmupLeftOut(t *testing.T) {
	a := newApp(t)
	wl := configure(t, "--url", a.srv.URL+"/ok")
	w := newWorker(wl, 0, 1)
	defer w.Close()
	for i := 0; i < 3; i++ {
		if err := w.Event(context.Background(), &workload.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	wl.BeginMeasure()
	if err := w.Event(context.Background(), &workload.Event{}); err != nil {
		t.Fatal(err)
	}
	sum := &summary.Run{DurationS: 1}
	wl.Summarize(sum)
	if sum.Figures[FigTransactions] != 1 || sum.Figures[FigBytes] != 5 {
		t.Errorf("figures after the warm-up: %v", sum.Figures)
	}
}

// TestShard: shards number their users apart.
func TestShard(t *testing.T) {
	wl := New().(*Workload)
	if err := wl.Shard(3, 3); err == nil {
		t.Error("shard 3 of 3 accepted")
	}
	if err := wl.Shard(1, 3); err != nil {
		t.Fatal(err)
	}
	if wl.user(0) != 1 || wl.user(2) != 7 {
		t.Errorf("users of shard 1 of 3: %d, %d; want 1, 7", wl.user(0), wl.user(2))
	}
	// User 7's random order is the same on one machine (worker 7) as on
	// shard 1 of 3 (its worker 2).
	one := configure(t, "--url", "http://a/1", "--url", "/2", "--url", "/3", "--random")
	sharded := configure(t, "--url", "http://a/1", "--url", "/2", "--url", "/3", "--random")
	if err := sharded.Shard(1, 3); err != nil {
		t.Fatal(err)
	}
	const seed = 42
	a, b := newWorker(one, 7, seed+7), newWorker(sharded, 2, seed+2)
	for i := 0; i < 20; i++ {
		if x, y := a.rng.IntN(3), b.rng.IntN(3); x != y {
			t.Fatalf("draw %d: %d on one machine, %d on the shard", i, x, y)
		}
	}
}

// TestValidate: bad flags and list lines are reported, naming them.
func TestValidate(t *testing.T) {
	bad := writeFile(t, "u.txt", "http://a/\nhttp://a/ FETCH\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--urls FILE or --url URL"},
		{[]string{"--urls", bad}, "u.txt:2:"},
		{[]string{"--url", "/x"}, "--url"},
		{[]string{"--url", "http://a/", "--keep-alive", "maybe"}, "--keep-alive"},
		{[]string{"--url", "http://a/", "--header", "nocolon"}, "--header"},
		{[]string{"--url", "http://a/", "--reps", "-1"}, "--reps"},
		{[]string{"--urls", bad, "--define", "1X=y"}, "--define"},
		{[]string{"--urls", bad, "--define", "novalue"}, "--define"},
		{[]string{"--urls", bad, "--env-var", "A-B"}, "--env-var"},
		{[]string{"--urls", bad, "--body-dir", "/nonexistent/dir"}, "--body-dir"},
		{[]string{"--url", "http://a/", "--define", "X=1"}, "--define applies to a --urls list"},
	} {
		wl := New().(*Workload)
		fs := pflag.NewFlagSet("http", pflag.ContinueOnError)
		wl.Flags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		errs := wl.Validate()
		if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, errs, c.want)
		}
	}
}

// TestRateWithReps: --rate paces the requests (open model) and --reps
// still makes exactly threads x reps of them.
func TestRateWithReps(t *testing.T) {
	a := newApp(t)
	wl := configure(t, "--url", a.srv.URL+"/ok", "--reps", "5")
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Duration, cfg.Rate = 2, time.Hour, 200
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, cfg, workload.Env{}, wl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil || res.Events != 10 || a.count("/ok") != 10 {
		t.Errorf("err %v, events %d, requests %d; want 10", res.Err, res.Events, a.count("/ok"))
	}
}

// TestParamsMaskCredentials: the parameters stored with a run show no
// credential of a --url, a --header or a --define.
func TestParamsMaskCredentials(t *testing.T) {
	t.Setenv("API_TOKEN", "env-s3cret")
	list := writeFile(t, "u.txt", "http://127.0.0.1:1/$(V)/$(API_TOKEN)\n")
	wl := configure(t, "--urls", list, "--url", "http://u:s3cret@127.0.0.1:1/x?token=s3cret",
		"--header", "Authorization: Basic s3cret", "--header", "Accept: */*", "--define", "V=s3cret", "--env-var", "API_TOKEN")
	p := fmt.Sprint(wl.Params())
	if strings.Contains(p, "s3cret") || !strings.Contains(p, "Authorization: ***") || !strings.Contains(p, "Accept: */*") ||
		!strings.Contains(p, "http://u:***@127.0.0.1:1/x?token=***") || !strings.Contains(p, "define:[V]") {
		t.Errorf("params %s", p)
	}
	// An --env-var's value is a secret: the key names the variable.
	if want := "http://127.0.0.1:1/s3cret/$(API_TOKEN)"; wl.keys[0] != want {
		t.Errorf("per-URL key %q, want %q", wl.keys[0], want)
	}
}

// TestUserInfoIsBasicAuth: a URL's user info is sent as Basic
// authorization, as http.Client does, with or without --follow-redirects.
func TestUserInfoIsBasicAuth(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		mu.Lock()
		got = append(got, fmt.Sprint(u, ":", p, ":", ok))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	authed := strings.Replace(srv.URL, "http://", "http://alice:pw@", 1)
	run(t, configure(t, "--url", authed+"/a", "--reps", "1"), 1, time.Hour)
	run(t, configure(t, "--url", authed+"/a", "--reps", "1", "--follow-redirects"), 1, time.Hour)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, " ") != "alice:pw:true alice:pw:true" {
		t.Errorf("the server got %q", got)
	}
}

// TestWorkersShareTheList is issue 33's item 11 in the workload: its
// workers share the list's requests, so that their memory does not grow
// with threads x URLs (16 workers over 1,000 URLs held 18 MB of copies).
func TestWorkersShareTheList(t *testing.T) {
	var args []string
	for i := range 1000 {
		args = append(args, "--url", fmt.Sprintf("http://127.0.0.1:1/page/%d", i))
	}
	wl := configure(t, append(args, "--header", "Accept: text/html")...)
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var ws []workload.Worker
	for i := range 16 {
		w, err := wl.DialWorker(ctx, workload.Env{}, i, 1)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ws)
	// A worker's own client, transport and figures are a few KB; a copy
	// of each request would be about 1 KB a URL.
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16*100<<10 {
		t.Errorf("16 workers over 1000 URLs hold %d KB, want < 100 KB each", grew>>10)
	}
}
