package sandbox

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltinAllocator: MariaDB 10.1.23 from the catalogue has jemalloc
// linked in, so a preloaded allocator is refused before the server starts
// (with jemalloc it crashed at start: signal 11 in its own free; tcmalloc
// was silently unused); MySQL 5.5.9 and the system MariaDB take one.
func TestBuiltinAllocator(t *testing.T) {
	m101 := Binary{Flavor: "mariadb", Version: "10.1.23", Server: filepath.Join(catalogued(t, "mariadb-10.1.23"), "bin", "mysqld")}
	if got := builtinAllocator(m101.Server); got != "jemalloc" {
		t.Errorf("mariadb 10.1.23: built-in allocator %q, want jemalloc", got)
	}
	err := checkPreload("m", "tcmalloc", m101)
	if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), `sandbox "m": allocator tcmalloc: mariadb 10.1.23 (`) || !strings.Contains(err.Error(), "has jemalloc linked in") {
		t.Errorf("preload into mariadb 10.1.23: %v", err)
	}
	if err := checkPreload("m", "", m101); err != nil {
		t.Errorf("no allocator asked: %v", err)
	}
	m55 := filepath.Join(catalogued(t, "mysql-5.5.9"), "bin", "mysqld")
	for _, path := range []string{m55, "/usr/sbin/mariadbd"} {
		if got := builtinAllocator(path); got != "" {
			t.Errorf("%s: built-in allocator %q, want none", path, got)
		}
		if err := checkPreload("m", "jemalloc", Binary{Server: path}); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	if got := builtinAllocator("/nonexistent"); got != "" {
		t.Errorf("no file: %q", got)
	}
}
