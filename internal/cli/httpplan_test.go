package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// portApp is an application configured once for the MySQL server at
// 127.0.0.1:port: each request to /page connects, asks the server its
// wait_timeout (which tells the plan's servers apart) and disconnects. Its
// password is the one of the first sandbox on that port, read once.
type portApp struct {
	url  string
	port int

	once sync.Once
	pw   string

	mu   sync.Mutex
	seen map[string]int // wait_timeout -> requests answered
	errs []string
}

func startPortApp(t *testing.T, port int) *portApp {
	t.Helper()
	a := &portApp{port: port, seen: map[string]int{}}
	d, err := dialect.For(target.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	page := func(w http.ResponseWriter, r *http.Request) {
		a.once.Do(func() {
			all, _ := suite.mgr.List()
			for _, sb := range all {
				if sb.Port == port {
					a.pw = sb.Target().Password
					break
				}
			}
		})
		tgt := target.Target{Flavor: target.FlavorMariaDB, Host: "127.0.0.1", Port: port, User: "dbarena", Password: a.pw, Database: "sbtest"}
		var v string
		db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 1})
		if err == nil {
			err = db.QueryRowContext(r.Context(), "SELECT @@wait_timeout").Scan(&v)
			db.Close()
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if err != nil {
			a.errs = append(a.errs, err.Error())
			http.Error(w, err.Error(), 500)
			return
		}
		a.seen[v]++
		fmt.Fprintf(w, "served by the server with wait_timeout %s\n", v)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(page)}
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

// TestPlanHTTPFixedPort is document 000's "five servers, one URL list" as
// one plan: two servers on the same fixed port run in turn; the
// application, configured once for 127.0.0.1:PORT, reaches each; each
// cell is exactly -c 2 -r 5 = 10 requests, stored against its server with
// its counters and process figures.
func TestPlanHTTPFixedPort(t *testing.T) {
	needServers(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	a := startPortApp(t, port)
	path := writePlan(t, fmt.Sprintf(`name: httpservers
servers:
  - {name: m1, flavor: mariadb, profile: fast, port: %d, settings: {wait_timeout: 601}}
  - {name: m2, flavor: mariadb, profile: fast, port: %d, settings: {wait_timeout: 602}}
workloads:
  - name: http
    params: {urls: urls.txt, reps: 5, timeout: 10}
axes:
  threads: [2]
rounds: 1
warmup: 0
report_interval: 1s
`, port, port))
	// the URL list beside the plan (relative paths are the plan's)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "urls.txt"), []byte("APP="+a.url+"\n$(APP)/page\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{"lab-m1", "lab-m2"} {
			_ = suite.mgr.Remove(context.Background(), name)
		}
	})
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "plan", "run", path, "--results", results)
	a.mu.Lock()
	seen, errs := a.seen, a.errs
	a.mu.Unlock()
	if r.code != 0 {
		t.Fatalf("plan run: exit %d\n%s\n%s\napp errors: %q", r.code, tail(r.stdout, 2000), r.stderr, errs)
	}
	if seen["601"] != 10 || seen["602"] != 10 || len(seen) != 2 || len(errs) != 0 {
		t.Errorf("the application saw %v (errors %q), want 10 requests on each server", seen, errs)
	}
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows := planRuns(t, results, "httpservers")
	if len(rows) != 2 {
		t.Fatalf("%d runs, want 2", len(rows))
	}
	got := map[string]bool{}
	for _, row := range rows {
		run, err := st.Run(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		server := run.Plan.Coords["server"]
		got[server] = true
		if run.Status != "complete" || run.Totals.Events != 10 || run.Totals.Errors != 0 {
			t.Errorf("cell %s: %s %q, %d events %d errors; want complete, 10, 0", server, run.Status, run.Error, run.Totals.Events, run.Totals.Errors)
		}
		if run.Target.Sandbox != "lab-"+server || run.Target.Flavor != "mariadb" || !strings.Contains(run.Target.DSN, ":"+strconv.Itoa(port)+"/") {
			t.Errorf("cell %s stored against %+v, want sandbox lab-%s on port %d", server, run.Target, server, port)
		}
		if run.ServerCounters["selects"] < 10 {
			t.Errorf("cell %s: server selects %d, want >= 10 (%v)", server, run.ServerCounters["selects"], run.ServerCounters)
		}
		if run.Monitor == nil || run.Monitor.Avg["server.rss_mb"] <= 0 {
			t.Errorf("cell %s: no server process figures: %+v", server, run.Monitor)
		}
		if run.Figures["http.transactions"] != 10 {
			t.Errorf("cell %s: siege figures %v", server, run.Figures)
		}
	}
	if !got["m1"] || !got["m2"] {
		t.Errorf("cells %v, want m1 and m2", got)
	}
}
