package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
)

// prometheusBinary is Debian's prometheus (scripts/install-deps test). In
// CI a missing one fails the test; elsewhere it is skipped with a line.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("prometheus not installed (scripts/install-deps test installs it): %v", err)
	}
	t.Skipf("prometheus not installed (scripts/install-deps test installs it): %v", err)
	return ""
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPrometheus starts a Prometheus server on loopback that scrapes
// target (HOST:PORT) every second, and returns its API's base URL. It is
// stopped (by its PID) when the test ends.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin := prometheusBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dbarena
    static_configs:
      - targets: ['%s']
`, target)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("prometheus not ready on %s within 30s: %v\n%s", addr, err, tail(string(log), 2000))
		}
	}
}

// promSample is one series of an instant query's result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) value(t *testing.T) float64 {
	t.Helper()
	str, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		t.Fatalf("sample %v: %v", s, err)
	}
	return v
}

// promQuery runs an instant query through the HTTP API (/api/v1/query).
func promQuery(t *testing.T, base, q string) []promSample {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s %s", q, body.Status, body.Error)
	}
	return body.Data.Result
}

// promWait runs q until ok accepts its result (Prometheus ingests a scrape
// a moment after it), and fails the test after limit with the last result.
func promWait(t *testing.T, base, q string, limit time.Duration, ok func([]promSample) bool) []promSample {
	t.Helper()
	var res []promSample
	for deadline := time.Now().Add(limit); ; time.Sleep(250 * time.Millisecond) {
		res = promQuery(t, base, q)
		if ok(res) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %s: %+v after %v", q, res, limit)
		}
	}
}

// wantLabels checks a series' labels.
func wantLabels(t *testing.T, what string, s promSample, want map[string]string) {
	t.Helper()
	for k, v := range want { // Prometheus drops empty labels: "" is absent
		if got := s.Metric[k]; got != v {
			t.Errorf("%s: label %s = %q, want %q (series %v)", what, k, got, v, s.Metric)
		}
	}
}

// TestMetricsPrometheusRun: a real Prometheus scrapes a running `dbarena
// run --metrics-listen`; its API returns the run's throughput and latency
// series labelled by run, workload and server, and the scraped count of
// measured events is the stored run's total (the run lingers until a
// scrape has read its final totals).
func TestMetricsPrometheusRun(t *testing.T) {
	needServers(t)
	port := freePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	api := startPrometheus(t, listen)
	freshTables(t, "oltp_read_write", pgTarget, "--tables", "1", "--table-size", "2000")
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "run", "oltp_read_write", pgTarget, "--tables", "1", "--table-size", "2000", "--threads", "2",
		"--time", "6", "--warmup", "2", "--report-interval", "1", "--results", results,
		"--metrics-listen", listen, "--metrics-linger", "30s").mustSucceed(t)
	if !strings.Contains(r.stdout, "Metrics: serving live figures at http://"+listen+"/metrics") {
		t.Errorf("no Metrics line:\n%s", tail(r.stdout, 2000))
	}
	if strings.Contains(r.stderr, "no scrape") {
		t.Errorf("no scrape read the final figures: %s", r.stderr)
	}
	run := storedRun(t, results)
	id := strconv.FormatInt(run.ID, 10)
	labels := map[string]string{"run": id, "workload": "oltp_read_write", "server": "pg", "cell": "", "job": "dbarena"}

	total := promWait(t, api, fmt.Sprintf(`max_over_time(dbarena_events_total{phase="measured",run="%s"}[5m])`, id), 15*time.Second,
		func(res []promSample) bool { return len(res) == 1 && res[0].value(t) == float64(run.Totals.Events) })
	wantLabels(t, "events", total[0], labels)
	t.Logf("scraped measured events %v = stored total %d", total[0].Value[1], run.Totals.Events)

	tps := promQuery(t, api, fmt.Sprintf(`max_over_time(rate(dbarena_events_total{phase="measured",run="%s"}[3s])[5m:1s])`, id))
	if len(tps) != 1 || tps[0].value(t) <= 0 {
		t.Fatalf("throughput: %+v", tps)
	}
	wantLabels(t, "tps", tps[0], labels)
	t.Logf("peak tps (rate over 3s) %v; stored tps %.2f", tps[0].Value[1], run.Throughput.TPS)

	p95 := promQuery(t, api, fmt.Sprintf(`histogram_quantile(0.95, sum by (le, run, workload, server, cell) (increase(dbarena_latency_seconds_bucket{phase="measured",run="%s"}[5m])))`, id))
	if len(p95) != 1 || p95[0].value(t) <= 0 {
		t.Fatalf("p95: %+v", p95)
	}
	wantLabels(t, "p95", p95[0], map[string]string{"run": id, "workload": "oltp_read_write", "server": "pg", "cell": ""})
	t.Logf("p95 from the histogram %v s; stored p95 %.2f ms", p95[0].Value[1], run.LatencyMS.P95)

	count := promQuery(t, api, fmt.Sprintf(`max_over_time(dbarena_latency_seconds_count{phase="measured",run="%s"}[5m])`, id))
	if len(count) != 1 || count[0].value(t) != float64(run.Totals.Events) {
		t.Errorf("latency histogram count %+v, want the stored total %d", count, run.Totals.Events)
	}
	for _, source := range []string{"host", "server", "counter"} {
		res := promQuery(t, api, fmt.Sprintf(`last_over_time(dbarena_monitor{source=%q,run="%s"}[5m])`, source, id))
		if len(res) == 0 {
			t.Errorf("no %s figures scraped", source)
		}
	}
	warm := promQuery(t, api, fmt.Sprintf(`max_over_time(dbarena_events_total{phase="warmup",run="%s"}[5m])`, id))
	if len(warm) != 1 || warm[0].value(t) <= 0 {
		t.Errorf("warm-up events: %+v", warm)
	}
	// Every query docs/metrics.md shows is valid PromQL for this server.
	for _, q := range docQueries(t) {
		promQuery(t, api, strings.ReplaceAll(q, `run="42"`, `run="`+id+`"`))
	}
	info := promQuery(t, api, fmt.Sprintf(`last_over_time(dbarena_run_info{run="%s"}[5m])`, id))
	if len(info) != 1 || info[0].Metric["flavor"] != "postgres" {
		t.Errorf("run info: %+v", info)
	}
	status := promQuery(t, api, fmt.Sprintf(`last_over_time(dbarena_run_status{run="%s"}[5m]) == 1`, id))
	if len(status) != 1 || status[0].Metric["status"] != "complete" {
		t.Errorf("run status: %+v", status)
	}
}

// docQueries are the PromQL lines of docs/metrics.md's promql blocks.
func docQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "```promql":
			in = true
		case l == "```":
			in = false
		case in && strings.TrimSpace(l) != "":
			qs = append(qs, l)
		}
	}
	if len(qs) < 10 {
		t.Fatalf("docs/metrics.md: %d PromQL queries", len(qs))
	}
	return qs
}

// TestMetricsPrometheusPlanRun: the same for `plan run`: each cell's run
// labelled with its cell and server, its scraped events its stored total,
// the plan's progress (cells done of total) scraped, and the progress
// lines printed (cells done, the cell starting, the ETA).
func TestMetricsPrometheusPlanRun(t *testing.T) {
	needServers(t)
	port := freePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	api := startPrometheus(t, listen)
	good := suite.mariadb.Target()
	path := writePlan(t, fmt.Sprintf(`name: promplan
servers:
  - name: good
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
workloads:
  - name: oltp_point_select
    params: {tables: 1, table-size: 1000}
axes:
  threads: [1, 2]
rounds: 1
warmup: 1s
duration: 3s
`, good.User, good.Password, good.Port, good.Database))
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "plan", "run", path, "--results", results, "--metrics-listen", listen, "--metrics-linger", "30s").mustSucceed(t)
	assertNoPassword(t, "stdout", r.stdout)
	for _, want := range []string{"runs: 0/2 (0%) done, starting 1/2: round 1 workload=oltp_point_select,server=good,threads=1, ETA ", "runs: 1/2 (50%) done, starting 2/2: round 1 ", ", ETA "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan run output lacks %q:\n%s", want, r.stdout)
		}
	}
	rows := planRuns(t, results, "promplan")
	if len(rows) != 2 {
		t.Fatalf("%d runs stored, want 2", len(rows))
	}
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, row := range rows {
		run, err := st.Run(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		id := strconv.FormatInt(row.ID, 10)
		res := promWait(t, api, fmt.Sprintf(`max_over_time(dbarena_events_total{phase="measured",run="%s"}[5m])`, id), 15*time.Second,
			func(res []promSample) bool { return len(res) == 1 && res[0].value(t) == float64(run.Totals.Events) })
		wantLabels(t, "events of run "+id, res[0], map[string]string{"workload": "oltp_point_select", "server": "good", "cell": row.Tags["plan.cell"]})
		t.Logf("run %s cell %s: scraped measured events %v = stored %d", id, row.Tags["plan.cell"], res[0].Value[1], run.Totals.Events)
		p95 := promQuery(t, api, fmt.Sprintf(`histogram_quantile(0.95, sum by (le, cell) (increase(dbarena_latency_seconds_bucket{phase="measured",run="%s"}[5m])))`, id))
		if len(p95) != 1 || p95[0].value(t) <= 0 || p95[0].Metric["cell"] != row.Tags["plan.cell"] {
			t.Errorf("p95 of run %s: %+v", id, p95)
		}
	}
	done := promWait(t, api, `max_over_time(dbarena_plan_cells_done{plan="promplan"}[5m])`, 15*time.Second,
		func(res []promSample) bool { return len(res) == 1 && res[0].value(t) == 2 })
	t.Logf("plan progress scraped: %v cells done", done[0].Value[1])
	cells := promQuery(t, api, `last_over_time(dbarena_plan_cells{plan="promplan"}[5m])`)
	if len(cells) != 1 || cells[0].value(t) != 2 {
		t.Errorf("plan cells: %+v", cells)
	}
	cur := promQuery(t, api, `max_over_time(dbarena_plan_current_cell{plan="promplan"}[5m])`)
	// Prometheus's first scrape of a new target may come after the first
	// cell: at least one cell is seen running, each a cell of the plan.
	if len(cur) == 0 {
		t.Errorf("no current cell scraped")
	}
	for _, c := range cur {
		if !strings.HasPrefix(c.Metric["cell"], "workload=oltp_point_select,server=good,threads=") || c.value(t) < 1 || c.value(t) > 2 {
			t.Errorf("current cell: %+v", c)
		}
	}
}

// TestMetricsListenRefused: an address that is not loopback is refused
// (exit 2, one line naming the flag) unless --metrics-listen-any; so are
// the companion flags without --metrics-listen and a busy port.
func TestMetricsListenRefused(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"every interface", []string{"--metrics-listen", ":9464"}, "--metrics-listen: every interface is not a loopback address"},
		{"public address", []string{"--metrics-listen", "192.0.2.1:9464"}, "--metrics-listen: 192.0.2.1 is not a loopback address"},
		{"host name", []string{"--metrics-listen", "db.example.com:9464"}, "--metrics-listen: db.example.com is not a loopback address"},
		{"no port", []string{"--metrics-listen", "127.0.0.1"}, "--metrics-listen: \"127.0.0.1\" is not HOST:PORT"},
		{"any alone", []string{"--metrics-listen-any"}, "--metrics-listen-any: only with --metrics-listen"},
		{"linger alone", []string{"--metrics-linger", "5s"}, "--metrics-linger: only with --metrics-listen"},
		{"local shards", []string{"--metrics-listen", "127.0.0.1:0", "--shards", "2", "--local"}, "--metrics-listen: not with --shards N --local"},
		{"busy port", []string{"--metrics-listen", busy.Addr().String(), "--time", "1"}, "--metrics-listen: listen tcp " + busy.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "busy port" {
				needServers(t)
			}
			r := dbarena(t, append([]string{"run", "oltp_point_select", "--results", filepath.Join(t.TempDir(), "r.db")}, tt.args...)...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.stderr, tt.want)
			}
		})
	}
	t.Run("plan run", func(t *testing.T) {
		path := writePlan(t, "name: x\nservers: [{flavor: mariadb}]\nworkloads: [oltp_point_select]\n")
		r := dbarena(t, "plan", "run", path, "--metrics-listen", "0.0.0.0:9464")
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--metrics-listen: 0.0.0.0 is not a loopback address") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// TestMetricsLingerWithoutScraper: with no scraper, the run waits
// --metrics-linger for one, says none came, and ends as it would have
// (exit 0, the run stored).
func TestMetricsLingerWithoutScraper(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--time", "1", "--threads", "1",
		"--results", results, "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "1s").mustSucceed(t)
	if !strings.Contains(r.stdout, "Metrics: serving live figures at http://127.0.0.1:") {
		t.Errorf("no Metrics line:\n%s", tail(r.stdout, 1000))
	}
	if !strings.Contains(r.stderr, "read the final figures within --metrics-linger 1s") {
		t.Errorf("stderr %q lacks the linger line", r.stderr)
	}
	if run := storedRun(t, results); run.Status != "complete" || run.Totals.Events == 0 {
		t.Errorf("stored run %s with %d events", run.Status, run.Totals.Events)
	}
}
