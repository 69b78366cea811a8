package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestServerStartTLS: `server start --tls` gives a sandbox whose CA
// `server show` prints, and a run through a DSN that verifies the server
// with it (tls=true&tls-ca=...) works; a bad tls= value is a one-line error.
func TestServerStartTLS(t *testing.T) {
	needServers(t)
	const pw = "tls-cli-secret-1"
	dbarena(t, "server", "start", "cli-tls", "--flavor", "mariadb", "--profile", "fast", "--tls", "--password", pw).mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "server", "rm", "cli-tls") })
	var show struct {
		Port  int    `json:"port"`
		TLSCA string `json:"tls_ca"`
	}
	out := dbarena(t, "server", "show", "cli-tls", "--json").mustSucceed(t).stdout
	if err := json.Unmarshal([]byte(out), &show); err != nil || show.TLSCA == "" {
		t.Fatalf("server show --json gives no tls_ca (%v):\n%s", err, out)
	}
	if s := dbarena(t, "server", "show", "cli-tls").mustSucceed(t).stdout; !strings.Contains(s, "tls-ca: "+show.TLSCA) {
		t.Fatalf("server show lacks the CA:\n%s", s)
	}
	dsn := func(params string) string {
		return fmt.Sprintf("--target=mysql://dbarena:%s@127.0.0.1:%d/sbtest?%s", pw, show.Port, params)
	}
	good := dsn("tls=true&tls-ca=" + url.QueryEscape(show.TLSCA))
	dbarena(t, "prepare", "oltp_point_select", "--tables", "1", "--table-size", "100", good).mustSucceed(t)
	js := jsonPath(t)
	dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "100", "--threads", "2",
		"--events", "200", "--json", js, good).mustSucceed(t)
	if run := readSummary(t, js); run.Totals.Events != 200 || run.Totals.Errors != 0 {
		t.Fatalf("TLS run: %+v", run.Totals)
	}
	r := dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "100", "--events", "10", dsn("tls=maybe"))
	if r.code == 0 || !strings.Contains(r.stderr, `tls="maybe"`) {
		t.Fatalf("tls=maybe: exit %d\n%s", r.code, r.stderr)
	}
}
