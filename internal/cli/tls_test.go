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
	run := readSummary(t, js)
	if run.Totals.Events != 200 || run.Totals.Errors != 0 {
		t.Fatalf("TLS run: %+v", run.Totals)
	}
	// The summary says the connections used TLS, with the server's
	// protocol version and cipher, and results show prints it.
	if tl := run.Target.TLS; tl == nil || !tl.Enabled || tl.Mode != "tls=true" || !strings.HasPrefix(tl.Version, "TLSv1.") || tl.Cipher == "" {
		t.Errorf("TLS run: target tls %+v", tl)
	}
	shown := dbarena(t, "results", "show", fmt.Sprint(run.ID)).mustSucceed(t).stdout
	if want := "TLS: " + run.Target.TLS.String() + "\n"; !strings.Contains(shown, want) || !strings.Contains(shown, "TLS: on TLSv1.") {
		t.Errorf("results show lacks %q:\n%s", want, shown)
	}
	plain := jsonPath(t)
	dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "100", "--threads", "1",
		"--events", "10", "--json", plain, dsn("tls=false")).mustSucceed(t)
	if tl := readSummary(t, plain).Target.TLS; tl == nil || tl.Enabled || tl.Mode != "tls=false" || tl.Version != "" {
		t.Errorf("plain run: target tls %+v", tl)
	}
	r := dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "100", "--events", "10", dsn("tls=maybe"))
	if r.code == 0 || !strings.Contains(r.stderr, `tls="maybe"`) {
		t.Fatalf("tls=maybe: exit %d\n%s", r.code, r.stderr)
	}
}
