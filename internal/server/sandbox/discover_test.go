package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name, out string
		flavor    target.Flavor
		version   string
	}{
		{"mariadb debian", "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n",
			target.FlavorMariaDB, "10.11.19"},
		{"mariadb tarball", "mysqld  Ver 10.3.39-MariaDB for Linux on x86_64 (MariaDB Server)", target.FlavorMariaDB, "10.3.39"},
		{"mysql 8", "/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)", target.FlavorMySQL, "8.0.36"},
		{"mysql 5.7", "mysqld  Ver 5.7.44 for linux-glibc2.12 on x86_64 (MySQL Community Server (GPL))", target.FlavorMySQL, "5.7.44"},
		{"mysql 8.4", "mysqld  Ver 8.4.0 for Linux on x86_64 (MySQL Community Server - GPL)", target.FlavorMySQL, "8.4.0"},
		{"percona", "mysqld  Ver 8.0.36-28 for Linux on x86_64 (Percona Server (GPL), Release 28, Revision 47601f19)",
			target.FlavorPercona, "8.0.36-28"},
		{"postgres debian", "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)", target.FlavorPostgres, "15.18"},
		{"postgres devel", "postgres (PostgreSQL) 17beta1", target.FlavorPostgres, "17"},
		{"postgres two-part", "postgres (PostgreSQL) 16.4", target.FlavorPostgres, "16.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, v, err := parseVersion(tt.out)
			if err != nil || f != tt.flavor || v != tt.version {
				t.Fatalf("parseVersion = %q, %q, %v; want %q, %q", f, v, err, tt.flavor, tt.version)
			}
		})
	}
	for _, bad := range []string{"", "hello world", "mysqld  Ver unknown"} {
		if _, _, err := parseVersion(bad); err == nil {
			t.Errorf("parseVersion(%q) succeeded, want an error", bad)
		}
	}
}

// fakeServer writes an executable script printing version as --version output.
func fakeServer(t *testing.T, dir, name, version string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	script := "#!/bin/sh\necho '" + strings.ReplaceAll(version, "'", "") + "'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDiscoverOrder(t *testing.T) {
	root := t.TempDir()
	pg13 := fakeServer(t, filepath.Join(root, "pg13/bin"), "postgres", "postgres (PostgreSQL) 13.9")
	pg16 := fakeServer(t, filepath.Join(root, "pg16/bin"), "postgres", "postgres (PostgreSQL) 16.2")
	maria := fakeServer(t, filepath.Join(root, "maria/sbin"), "mariadbd", "mariadbd  Ver 10.6.12-MariaDB for Linux")
	if err := os.Symlink(maria, filepath.Join(root, "maria/sbin/mysqld")); err != nil {
		t.Fatal(err)
	}
	mysql := fakeServer(t, filepath.Join(root, "mysql/bin"), "mysqld", "mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)")

	m := NewManager(t.TempDir())
	m.SearchDirs = []string{filepath.Join(root, "pg*/bin"), filepath.Join(root, "maria/sbin"), filepath.Join(root, "mysql/bin"), filepath.Join(root, "missing")}
	bins, err := m.Discover()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		server string
		flavor target.Flavor
	}{
		{mariaReal(t, maria), target.FlavorMariaDB}, // 10.6 > 8.0: newest MySQL-family first
		{mysql, target.FlavorMySQL},
		{pg16, target.FlavorPostgres},
		{pg13, target.FlavorPostgres},
	}
	if len(bins) != len(want) {
		t.Fatalf("Discover() = %+v, want %d binaries (mysqld symlink listed once)", bins, len(want))
	}
	for i, w := range want {
		if bins[i].Server != w.server || bins[i].Flavor != w.flavor {
			t.Errorf("Discover()[%d] = %+v, want %s %s", i, bins[i], w.flavor, w.server)
		}
	}
	if bins[0].Basedir != filepath.Join(root, "maria") {
		t.Errorf("basedir = %q, want %q", bins[0].Basedir, filepath.Join(root, "maria"))
	}

	t.Run("default picks MySQL family first", func(t *testing.T) {
		m.SearchDirs = []string{filepath.Join(root, "pg16/bin"), filepath.Join(root, "mysql/bin")}
		rec := &record{Name: "default"}
		b, err := m.resolveBinary(rec, Spec{Name: "default"}, true)
		if err != nil || b.Flavor != target.FlavorMySQL {
			t.Fatalf("resolveBinary = %+v, %v; want the mysql binary", b, err)
		}
		b, err = m.resolveBinary(rec, Spec{Name: "default", Flavor: target.FlavorPostgres}, true)
		if err != nil || b.Server != pg16 {
			t.Fatalf("resolveBinary(postgres) = %+v, %v; want %s", b, err, pg16)
		}
		_, err = m.resolveBinary(rec, Spec{Name: "default", Flavor: target.FlavorPercona}, true)
		if err == nil || !strings.Contains(err.Error(), ErrNoServer.Error()) {
			t.Fatalf("resolveBinary(percona) error = %v, want ErrNoServer", err)
		}
	})
}

func mariaReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInspect(t *testing.T) {
	base := t.TempDir()
	fakeServer(t, filepath.Join(base, "bin"), "mysqld", "mysqld  Ver 8.0.36-28 for Linux on x86_64 (Percona Server (GPL), Release 28)")
	m := NewManager(t.TempDir())
	b, err := m.Inspect(base)
	if err != nil {
		t.Fatal(err)
	}
	if b.Flavor != target.FlavorPercona || b.Version != "8.0.36-28" || b.Basedir != base {
		t.Fatalf("Inspect = %+v, want percona 8.0.36-28 in %s", b, base)
	}
	if _, err := m.Inspect(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no mariadbd") {
		t.Fatalf("Inspect(empty dir) error = %v", err)
	}
}
