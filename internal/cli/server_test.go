package cli

import (
	"encoding/json"
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

// TestServerStartUnsafeSet checks that --set refuses a setting that runs
// code, loads libraries or opens a listener with one line naming it (exit
// 2) and leaves no sandbox behind, and that --allow-unsafe-set lets it
// through (the start then fails on the bad port alone, before any server
// starts).
func TestServerStartUnsafeSet(t *testing.T) {
	for _, tt := range []struct{ flavor, set string }{
		{"mariadb", "init_file=/tmp/x.sql"},
		{"mariadb", "loose-plugin-load-add=ha_connect.so"},
		{"mariadb", "Admin_Address=0.0.0.0"},
		{"mysql", "mysqlx_bind_address=*"},
		{"postgres", "archive_command=sh -c id"},
		{"postgres", "shared_preload_libraries=evil"},
		{"postgres", "listen_addresses=*"},
	} {
		key, _, _ := strings.Cut(tt.set, "=")
		t.Run(key, func(t *testing.T) {
			r := dbarena(t, "server", "start", "unsafe-set", "--flavor", tt.flavor, "--set", tt.set)
			if r.code != ExitUsage || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 ||
				!strings.Contains(r.stderr, `setting "`+key+`"`) || !strings.Contains(r.stderr, "--allow-unsafe-set") {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line naming %s and --allow-unsafe-set", r.code, r.stderr, key)
			}
			if _, err := os.Stat(filepath.Join(suite.home, "sandboxes", "unsafe-set")); !os.IsNotExist(err) {
				t.Errorf("a refused start left a sandbox directory (stat: %v)", err)
			}
			r = dbarena(t, "server", "start", "unsafe-set", "--flavor", tt.flavor, "--set", tt.set, "--allow-unsafe-set", "--port", "70000")
			if r.code != ExitUsage || strings.Contains(r.stderr, "setting") || !strings.Contains(r.stderr, "port 70000") {
				t.Fatalf("with --allow-unsafe-set: exit %d, stderr %q; want only the bad port refused", r.code, r.stderr)
			}
		})
	}
}

// TestServerStartAllowUnsafeSet checks that an unsafe setting given with
// --allow-unsafe-set reaches a real server's configuration.
func TestServerStartAllowUnsafeSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pglog")
	r := dbarena(t, "server", "start", "unsafe-allowed", "--flavor", "postgres", "--set", "log_directory="+dir, "--allow-unsafe-set")
	t.Cleanup(func() { dbarena(t, "server", "rm", "unsafe-allowed") })
	r.mustSucceed(t)
	r = dbarena(t, "server", "show", "unsafe-allowed", "--json")
	r.mustSucceed(t)
	var sb struct{ Datadir, State string }
	if err := json.Unmarshal([]byte(r.stdout), &sb); err != nil || sb.State != "running" {
		t.Fatalf("server show --json: %v, %+v; want it running", err, sb)
	}
	conf, err := os.ReadFile(filepath.Join(sb.Datadir, "postgresql.conf"))
	if err != nil || !strings.Contains(string(conf), "log_directory = '"+dir+"'") {
		t.Errorf("postgresql.conf (%v):\n%s\nwant log_directory = '%s'", err, conf, dir)
	}
}
