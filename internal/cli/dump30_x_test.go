package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadQualifiedForeignRefused: with --database, a dump statement
// naming a database other than the dump's own stops the load with exit
// 2 and one line naming the file and line (issue 30); nothing of it ran.
func TestLoadQualifiedForeignRefused(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "shop.sql")
	body := "CREATE DATABASE shopq;\nUSE shopq;\nCREATE TABLE IF NOT EXISTS item (id INT PRIMARY KEY);\n" +
		"CREATE TRIGGER shopq.item_ai AFTER INSERT ON shopq.item FOR EACH ROW INSERT INTO other.audit VALUES (NEW.id);\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := dbarena(t, "load", f, "--database", "qforeign30")
	want := f + `:4: the statement names other.audit, in database "other", which is not the dump's (its own: "shopq"): with --database "qforeign30" a load writes only into "qforeign30"; refused`
	var lines []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "the statement names") {
			lines = append(lines, l)
		}
	}
	if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Fatalf("exit %d, stderr %q\nwant one line with %s", r.code, r.stderr, want)
	}
}
