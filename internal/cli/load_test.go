package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/dumpload"
)

// TestLoadCommand: a small MyISAM dump loads with --engine Aria (the
// text "ENGINE=MyISAM" in the data stays), is stored as a run of workload
// "load" and written to --json; an unknown engine and an unsplittable
// dump are usage errors (exit 2); a statement the server refuses is exit
// 1 with its file and line.
func TestLoadCommand(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	dumpFile := filepath.Join(dir, "shop.sql")
	body := "/*!40101 SET NAMES utf8mb4 */;\n" +
		"DROP TABLE IF EXISTS `notes`;\n" +
		"CREATE TABLE `notes` (\n  `id` int NOT NULL,\n  `body` text,\n  PRIMARY KEY (`id`)\n) ENGINE=MyISAM DEFAULT CHARSET=utf8mb4;\n" +
		"LOCK TABLES `notes` WRITE;\n" +
		"INSERT INTO `notes` VALUES (1,'sed s/MyISAM/InnoDB/ breaks ENGINE=MyISAM here'),(2,NULL),(3,'😀');\n" +
		"UNLOCK TABLES;\n"
	if err := os.WriteFile(dumpFile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "load.json")
	r := dbarena(t, "load", dumpFile, "--engine", "Aria", "--json", out, "--threads", "2").mustSucceed(t)
	if !strings.Contains(r.stdout, "notes") || !strings.Contains(r.stdout, "Aria") || !strings.Contains(r.stdout, "Stored as run") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, suite.mariadb.Target().Password) {
		t.Error("password in output")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format string `json:"format"`
		RunID  int64  `json:"run_id"`
		Result struct {
			Rows   int64 `json:"rows"`
			Tables []struct {
				Name     string `json:"name"`
				Rows     int64  `json:"rows"`
				Engine   string `json:"engine"`
				Checksum string `json:"checksum"`
			} `json:"tables"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != dumpload.JSONFormat || doc.RunID == 0 || doc.Result.Rows != 3 || len(doc.Result.Tables) != 1 ||
		doc.Result.Tables[0].Engine != "Aria" || doc.Result.Tables[0].Rows != 3 || doc.Result.Tables[0].Checksum == "" {
		t.Errorf("--json: %s", b)
	}
	rs := dbarena(t, "results", "list", "--workload", "load")
	if rs.code != 0 || !strings.Contains(rs.stdout, "load") {
		t.Errorf("results: exit %d\n%s%s", rs.code, rs.stdout, rs.stderr)
	}

	bad := dbarena(t, "load", dumpFile, "--engine", "NoSuchEngine")
	if bad.code != 2 || !strings.Contains(bad.stderr, "--engine NoSuchEngine") {
		t.Errorf("unknown engine: exit %d, stderr %q", bad.code, bad.stderr)
	}
	broken := filepath.Join(dir, "broken.sql")
	os.WriteFile(broken, []byte("CREATE TABLE IF NOT EXISTS b1 (a INT);\n\nINSERT INTO b1 VALUES (1,,2);\n"), 0o644)
	br := dbarena(t, "load", broken)
	if br.code != 1 || !strings.Contains(br.stderr, broken+":3") {
		t.Errorf("broken statement: exit %d, stderr %q", br.code, br.stderr)
	}
	unterminated := filepath.Join(dir, "unterminated.sql")
	os.WriteFile(unterminated, []byte("INSERT INTO b1 VALUES ('open);\n"), 0o644)
	if u := dbarena(t, "load", unterminated); u.code != 2 || !strings.Contains(u.stderr, "unterminated.sql:1") {
		t.Errorf("unterminated string: exit %d, stderr %q", u.code, u.stderr)
	}
	if d := dbarena(t, "load", dumpFile, "--defer-indexes", "maybe"); d.code != 2 || !strings.Contains(d.stderr, "--defer-indexes") {
		t.Errorf("bad --defer-indexes: exit %d, stderr %q", d.code, d.stderr)
	}
	if d := dbarena(t, "load", dumpFile, "--load-data", "maybe"); d.code != 2 || !strings.Contains(d.stderr, "--load-data") {
		t.Errorf("bad --load-data: exit %d, stderr %q", d.code, d.stderr)
	}
	if n := dbarena(t, "load"); n.code != 2 {
		t.Errorf("no file: exit %d", n.code)
	}
}
