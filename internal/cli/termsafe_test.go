package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputTextEscaped: terminal escape sequences in a run's tags, and in
// the fields of a run imported from a file someone sent, reach the terminal
// as visible escapes (issue 33, item 13); the --json file that keeps them
// is its owner's alone, even over an older 0644 file (item 12).
func TestInputTextEscaped(t *testing.T) {
	needServers(t)
	const esc = "\x1b]0;pwned\x07\x1b[2J\u009b1m"
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	js := filepath.Join(dir, "run.json")
	prepareSmall(t, "")
	if err := os.WriteFile(js, nil, 0o644); err != nil { // an earlier file anyone may read
		t.Fatal(err)
	}
	r := dbarena(t, "run", "oltp_point_select", "--tables", "2", "--table-size", "2000", "--threads", "1",
		"--events", "50", "--report-interval", "0", "--monitor", "none", "--results", src, "--json", js,
		"--tag", "note=a"+esc+"b").mustSucceed(t)
	// The exact text is kept where it is data: the stored run, --json
	// (its owner's alone).
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(js); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("--json file: %v %v, want mode 0600", fi.Mode(), err)
	}
	sent := strings.ReplaceAll(string(raw), `"workload": "oltp_point_select"`, `"workload": "oltp_point_select`+`\u001b[5m"`)
	if sent == string(raw) {
		t.Fatalf("--json lacks the workload field:\n%.400s", raw)
	}
	imported := filepath.Join(dir, "sent.json")
	if err := os.WriteFile(imported, []byte(sent), 0o600); err != nil {
		t.Fatal(err)
	}
	outs := []result{r,
		dbarena(t, "results", "list", "--results", src).mustSucceed(t),
		dbarena(t, "results", "show", "1", "--results", src).mustSucceed(t),
		dbarena(t, "results", "import", imported, "--results", dst).mustSucceed(t),
		dbarena(t, "results", "list", "--results", dst).mustSucceed(t),
		dbarena(t, "results", "show", "1", "--results", dst).mustSucceed(t),
	}
	for i, o := range outs {
		for name, text := range map[string]string{"stdout": o.stdout, "stderr": o.stderr} {
			if strings.ContainsAny(text, "\x1b\x07\u009b") {
				t.Errorf("command %d: %s holds raw control characters:\n%q", i, name, text)
			}
		}
	}
	if !strings.Contains(outs[2].stdout, `a\x1b]0;pwned\x07\x1b[2J\u009b1mb`) {
		t.Errorf("results show does not show the tag escaped:\n%s", outs[2].stdout)
	}
	if !strings.Contains(outs[4].stdout+outs[5].stdout, `oltp_point_select\x1b[5m`) {
		t.Errorf("the imported run's workload is not shown escaped:\n%s%s", outs[4].stdout, outs[5].stdout)
	}
}
