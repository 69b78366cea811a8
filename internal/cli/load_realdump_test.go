package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadFailedJSONListsError: a load stopped by a statement the server
// refuses writes --json with error_count 1 and that statement listed
// (issue 34: it said error_count 0 and no list); a bad --format is a
// usage error; a client command is refused naming file and line.
func TestLoadFailedJSONListsError(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "fails.sql")
	body := "CREATE TABLE IF NOT EXISTS jf (id INT PRIMARY KEY);\nINSERT INTO jf VALUES (1);\nINSERT INTO no_such_table VALUES (1);\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fail.json")
	r := dbarena(t, "load", f, "--database", "jsonfail", "--drop-existing", "--json", out)
	if r.code != 1 || !strings.Contains(r.stderr, f+":3") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Result struct {
			ErrorCount int `json:"error_count"`
			Errors     []struct {
				Line int    `json:"line"`
				Code string `json:"code"`
			} `json:"errors"`
			Tables []struct {
				Name   string `json:"name"`
				Sent   int64  `json:"sent"`
				Loaded int64  `json:"loaded"`
			} `json:"tables"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Result.ErrorCount != 1 || len(doc.Result.Errors) != 1 || doc.Result.Errors[0].Line != 3 || doc.Result.Errors[0].Code != "1146" {
		t.Errorf("--json: %s", b)
	}
	if bad := dbarena(t, "load", f, "--format", "sqlite"); bad.code != 2 || !strings.Contains(bad.stderr, "--format") {
		t.Errorf("bad --format: exit %d, stderr %q", bad.code, bad.stderr)
	}
	src := filepath.Join(dir, "employees.sql")
	os.WriteFile(src, []byte("CREATE TABLE IF NOT EXISTS emp (id INT);\nsource load_emp.sql ;\n"), 0o644)
	if s := dbarena(t, "load", src, "--database", "jsonfail"); s.code != 2 || !strings.Contains(s.stderr, src+":2") || !strings.Contains(s.stderr, "--follow-includes") {
		t.Errorf("source: exit %d, stderr %q", s.code, s.stderr)
	}
}
