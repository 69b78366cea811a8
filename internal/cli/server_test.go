package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerStartBadBasedir checks that a bad --basedir exits 2 with one
// line naming the flag and leaves no sandbox directory behind.
func TestServerStartBadBasedir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, basedir, want string }{
		{"missing", "/nonexistent", "--basedir /nonexistent: no such directory"},
		{"file", file, "--basedir " + file + ": not a directory"},
		{"empty", t.TempDir(), ": no mariadbd, mysqld or postgres under bin/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "bad-basedir-" + tt.name
			r := dbarena(t, "server", "start", name, "--basedir", tt.basedir)
			if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(suite.home, "sandboxes", name)); !os.IsNotExist(err) {
				t.Errorf("a failed start left a sandbox directory (stat: %v)", err)
			}
		})
	}
}

// TestServerRmHalfMade checks that `server rm` deletes a sandbox directory
// an interrupted or older start left without sandbox.json.
func TestServerRmHalfMade(t *testing.T) {
	dir := filepath.Join(suite.home, "sandboxes", "half-made")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dbarena(t, "server", "rm", "half-made").mustSucceed(t)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("server rm left %s (stat: %v)", dir, err)
	}
	if r := dbarena(t, "server", "rm", "half-made"); r.code != ExitUsage || !strings.Contains(r.stderr, "no sandbox named") {
		t.Errorf("second rm: exit %d, stderr %q; want exit 2, no sandbox", r.code, r.stderr)
	}
}
