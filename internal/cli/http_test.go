package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
)

// dbApp is a small application on 127.0.0.1 whose /item handler queries
// the default MariaDB sandbox; /missing is a 404 and /slow never answers
// before its client gives up. It counts every request it receives.
type dbApp struct {
	url      string
	requests atomic.Int64
	queries  atomic.Int64
}

func startDBApp(t *testing.T) *dbApp {
	t.Helper()
	tgt := suite.mariadb.Target()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a := &dbApp{}
	mux := http.NewServeMux()
	mux.HandleFunc("/item", func(w http.ResponseWriter, r *http.Request) {
		var n int
		if err := db.QueryRowContext(r.Context(), "SELECT ? + 1", r.URL.Query().Get("id")).Scan(&n); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		a.queries.Add(1)
		fmt.Fprintf(w, "item %d\n", n)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.requests.Add(1)
		mux.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
	})
	a.url = "http://" + l.Addr().String()
	return a
}

// TestRunHTTPAgainstSandboxApp is document 000's test: siege -c 4 -r 10 -f
// urls.txt against an application backed by a sandbox is exactly 40
// requests; the 404 and the timeout are failures by cause; the run is
// stored against the sandbox with its server's figures.
func TestRunHTTPAgainstSandboxApp(t *testing.T) {
	needServers(t)
	a := startDBApp(t)
	list := filepath.Join(t.TempDir(), "urls.txt")
	text := fmt.Sprintf("# the site\nAPP=%s\n$(APP)/item?id=1\n/item?id=2\n/missing\n/item?id=3\n/slow\n", a.url)
	if err := os.WriteFile(list, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	js := jsonPath(t)
	r := dbarena(t, "run", "http", "--urls", list, "--threads", "4", "--reps", "10", "--timeout", "2",
		"--db-target", "sandbox:default", "--report-interval", "1", "--json", js).mustSucceed(t)
	if n := a.requests.Load(); n != 40 {
		t.Errorf("the application got %d requests, want 40", n)
	}
	run := readSummary(t, js)
	// 4 users x 10 requests over 5 URLs in order: each URL 8 times.
	want := map[string]int64{"http_4xx": 8, "timeout": 8}
	for k, v := range want {
		if run.Totals.ErrorsByCode[k] != v {
			t.Errorf("errors by cause %v, want %v", run.Totals.ErrorsByCode, want)
		}
	}
	if run.Totals.Events != 24 || run.Totals.Errors != 16 || a.queries.Load() != 24 {
		t.Errorf("events %d errors %d, queries by the app %d; want 24, 16, 24", run.Totals.Events, run.Totals.Errors, a.queries.Load())
	}
	f := run.Figures
	if f["http.transactions"] != 32 || f["http.successful"] != 24 || f["http.failed"] != 8 || f["http.status.404"] != 8 {
		t.Errorf("siege figures: %v", f)
	}
	if pt, ok := run.PerType[a.url+"/item?id=1"]; !ok || pt.Count != 8 {
		t.Errorf("per URL: %v", run.PerType)
	}
	if run.Target.Sandbox != "default" || run.Target.Flavor != "mariadb" {
		t.Errorf("stored against %+v, want the default sandbox", run.Target)
	}
	// The server behind the application: its counters and its process.
	if run.ServerCounters["selects"] < 24 {
		t.Errorf("server selects %d, want >= 24 (server counters %v)", run.ServerCounters["selects"], run.ServerCounters)
	}
	if run.Monitor == nil {
		t.Fatal("the run has no monitor section")
	}
	if _, ok := run.Monitor.Max["host.load1"]; !ok || run.Monitor.Avg["server.rss_mb"] <= 0 {
		t.Errorf("monitor: %+v", run.Monitor)
	}
	for _, s := range []string{"Transactions:", "Availability:", "Failures by cause:", "http_4xx: 8", "Stored as run"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, tail(r.stdout, 3000))
		}
	}
}

// TestRunHTTPWithoutDatabase: without --db-target the run needs no
// database, samples the host only and is stored against the URLs' origin.
func TestRunHTTPWithoutDatabase(t *testing.T) {
	needServers(t) // the store of the suite's home
	a := startDBApp(t)
	js := jsonPath(t)
	r := dbarena(t, "run", "http", "--url", a.url+"/missing", "--threads", "2", "--reps", "3", "--json", js).mustSucceed(t)
	run := readSummary(t, js)
	if run.Target.Flavor != "http" || run.Target.DSN != a.url || run.Target.Sandbox != "" {
		t.Errorf("target %+v, want flavor http at %s", run.Target, a.url)
	}
	if run.Totals.ErrorsByCode["http_4xx"] != 6 || a.requests.Load() != 6 {
		t.Errorf("errors %v, requests %d; want 6 404s", run.Totals.ErrorsByCode, a.requests.Load())
	}
	if run.Monitor == nil {
		t.Fatal("the run has no monitor section")
	}
	if _, ok := run.Monitor.Max["host.load1"]; !ok || len(run.ServerCounters) != 0 {
		t.Errorf("monitor %+v, server counters %v", run.Monitor, run.ServerCounters)
	}
	for k := range run.Monitor.Avg {
		if strings.HasPrefix(k, "server.") {
			t.Errorf("a run without a database sampled %s", k)
		}
	}
	if !strings.Contains(r.stdout, "Running http on http") || !strings.Contains(r.stdout, a.url) {
		t.Errorf("stdout:\n%s", tail(r.stdout, 2000))
	}
}

// TestRunHTTPBadInput: a bad list line, --target and --connect are usage
// errors naming the file:line or the flag.
func TestRunHTTPBadInput(t *testing.T) {
	list := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(list, []byte("http://127.0.0.1:1/\n/x FETCH\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--urls", list}, list + ":2:"},
		{[]string{"--url", "http://127.0.0.1:1/", "--target", "sandbox:default"}, "--db-target"},
		{[]string{"--url", "http://127.0.0.1:1/", "--connect", "per-event"}, "--keep-alive"},
	} {
		r := dbarena(t, append([]string{"run", "http"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
