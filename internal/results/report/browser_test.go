package report_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
)

// browserFlags are the headless Chromium flags of the issue: no sandbox
// (tests run as root), no GPU and nothing that reaches the network.
var browserFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
	"--disable-dev-shm-usage", "--window-size=1280,1600"}

// webDriver is a minimal W3C WebDriver client for chromedriver: plain HTTP
// and JSON, no dependency.
type webDriver struct {
	t       testing.TB
	base    string
	session string
}

func (d *webDriver) call(method, path string, body any) json.RawMessage {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			d.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	url := d.base + path
	if d.session != "" {
		url = d.base + "/session/" + d.session + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 2 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		d.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != http.StatusOK {
		d.t.Fatalf("webdriver %s %s: HTTP %d: %.500s", method, path, resp.StatusCode, raw)
	}
	return out.Value
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startBrowser starts chromedriver and a headless Chromium session; both
// end when the test does. Without them the test skips, except under CI.
func startBrowser(t *testing.T) *webDriver {
	t.Helper()
	driver, derr := exec.LookPath("chromedriver")
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if derr != nil || browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("headless browser test needs chromium and chromedriver (scripts/install-deps installs them)")
		}
		t.Skip("chromium or chromedriver not installed")
	}
	port := freePort(t)
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // the chromedriver this test started, by its handle
		_ = cmd.Wait()
	})
	d := &webDriver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.base + "/status")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	args := append(append([]string{}, browserFlags...), "--user-data-dir="+t.TempDir())
	v := d.call("POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"binary": browser, "args": args},
		"goog:loggingPrefs":  map[string]any{"browser": "ALL"},
	}}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(v, &s); err != nil || s.SessionID == "" {
		t.Fatalf("webdriver session: %s", v)
	}
	d.session = s.SessionID
	t.Cleanup(func() { d.call("DELETE", "", nil) })
	return d
}

// inkPixels counts the pixels of img that are not (near) white.
func inkPixels(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				n++
			}
		}
	}
	return n
}

// TestHTMLInHeadlessChromium opens an HTML report offline in headless
// Chromium: no console error, no resource fetched, and a screenshot of
// every chart area that is not blank.
func TestHTMLInHeadlessChromium(t *testing.T) {
	runs := append(reporttest.PlanRuns(reporttest.Options{Threads: []int{1, 4, 16, 64}}),
		reporttest.TPCCRun(), reporttest.ReplayRun(), reporttest.InterruptedRun())
	for i, r := range runs {
		r.ID = int64(i + 1)
	}
	o := report.NewOptions()
	o.MaxTimeSeries = 8 // more than 4 runs: their host-resource charts sit in a closed <details>
	rep, err := report.Build(runs, o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCharts := len(rep.Charts())

	d := startBrowser(t)
	d.call("POST", "/url", map[string]any{"url": "file://" + page})
	d.call("POST", "/execute/sync", map[string]any{"script": "document.querySelectorAll('details').forEach(e => e.open = true)", "args": []any{}})

	var resources int
	v := d.call("POST", "/execute/sync", map[string]any{"script": "return performance.getEntriesByType('resource').length", "args": []any{}})
	if err := json.Unmarshal(v, &resources); err != nil || resources != 0 {
		t.Errorf("the page fetched %s resources, want none (self-contained)", v)
	}

	var elems []map[string]string
	if err := json.Unmarshal(d.call("POST", "/elements", map[string]any{"using": "css selector", "value": "figure.chart"}), &elems); err != nil {
		t.Fatal(err)
	}
	if len(elems) != wantCharts || wantCharts < 10 {
		t.Fatalf("page has %d chart areas, report has %d charts (want at least 10)", len(elems), wantCharts)
	}
	shots := os.Getenv("DBARENA_REPORT_SHOTS") // keep screenshots to look at them
	for i, e := range elems {
		var id string
		for _, v := range e {
			id = v
		}
		var b64 string
		if err := json.Unmarshal(d.call("GET", "/element/"+id+"/screenshot", nil), &b64); err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("chart %d screenshot: %v", i, err)
		}
		b := img.Bounds()
		ink := inkPixels(img)
		// A drawn chart has axes, labels and lines: well over 1% ink.
		if b.Dx() < 300 || b.Dy() < 150 || ink < b.Dx()*b.Dy()/100 {
			t.Errorf("chart %d screenshot %dx%d has %d non-white pixels: blank?", i, b.Dx(), b.Dy(), ink)
		}
		if shots != "" {
			_ = os.WriteFile(filepath.Join(shots, fmt.Sprintf("chart-%02d.png", i)), raw, 0o644)
		}
	}

	var logs []struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(d.call("POST", "/se/log", map[string]any{"type": "browser"}), &logs); err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if l.Level == "SEVERE" || strings.Contains(strings.ToLower(l.Message), "error") {
			t.Errorf("console: %s %s", l.Level, l.Message)
		}
	}
}
