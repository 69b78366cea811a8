package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
)

// Binary is a server binary found on this machine or in an unpacked basedir.
type Binary struct {
	// Flavor is detected from the binary's --version output.
	Flavor target.Flavor `json:"flavor"`
	// Version is the server version, e.g. "10.11.19", "8.0.36-28" or "15.18".
	Version string `json:"version"`
	// Server is the path of mariadbd, mysqld or postgres.
	Server string `json:"server"`
	// Basedir is the installation directory (the parent of bin/ or sbin/).
	Basedir string `json:"basedir"`
}

// serverNames are the server executables looked for, MySQL family first.
var serverNames = []string{"mariadbd", "mysqld", "postgres"}

// defaultSearchDirs are searched after $PATH. Entries may be glob patterns.
var defaultSearchDirs = []string{
	"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin", "/usr/local/mariadb/bin",
	"/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin", "/usr/pgsql-*/bin",
}

// Discover lists the server binaries found in m.SearchDirs: MySQL family
// first, then PostgreSQL, newest version first within a family. Symlinks to
// the same binary (mysqld -> mariadbd) are listed once, by their real path.
func (m *Manager) Discover() ([]Binary, error) {
	seen := map[string]bool{}
	var bins []Binary
	var errs []error
	for _, pattern := range m.SearchDirs {
		dirs, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("search dir %q: %w", pattern, err)
		}
		for _, dir := range dirs {
			for _, name := range serverNames {
				path := filepath.Join(dir, name)
				real, err := filepath.EvalSymlinks(path)
				if err != nil || seen[real] {
					continue
				}
				if fi, err := os.Stat(real); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
					continue
				}
				seen[real] = true
				b, err := inspectBinary(real)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				bins = append(bins, b)
			}
		}
	}
	sortBinaries(bins)
	if len(bins) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return bins, nil
}

// sortBinaries orders MySQL family before PostgreSQL, then newest first.
func sortBinaries(bins []Binary) {
	sort.SliceStable(bins, func(i, j int) bool {
		fi, fj := bins[i].Flavor.Family(), bins[j].Flavor.Family()
		if fi != fj {
			return fi == target.MySQL
		}
		return target.CompareVersions(bins[i].Version, bins[j].Version) > 0
	})
}

// Inspect detects the flavor and version of the server in an unpacked
// basedir from its binary's --version output.
func (m *Manager) Inspect(basedir string) (Binary, error) {
	abs, err := filepath.Abs(basedir)
	if err != nil {
		return Binary{}, fmt.Errorf("basedir %q: %w", basedir, err)
	}
	for _, sub := range []string{"bin", "sbin", "libexec"} {
		for _, name := range serverNames {
			path := filepath.Join(abs, sub, name)
			if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
				b, err := inspectBinary(path)
				if err != nil {
					return Binary{}, err
				}
				b.Basedir = abs
				return b, nil
			}
		}
	}
	return Binary{}, fmt.Errorf("basedir %q: no mariadbd, mysqld or postgres under bin/, sbin/ or libexec/: %w", basedir, ErrNoServer)
}

// inspectBinary runs `SERVER --version` and parses its output.
func inspectBinary(path string) (Binary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return Binary{}, fmt.Errorf("%s --version: %w: %s", path, err, firstLine(string(out)))
	}
	flavor, version, err := parseVersion(string(out))
	if err != nil {
		return Binary{}, fmt.Errorf("%s: %w", path, err)
	}
	return Binary{Flavor: flavor, Version: version, Server: path, Basedir: filepath.Dir(filepath.Dir(path))}, nil
}

var versionRE = regexp.MustCompile(`(\d+(?:\.\d+){0,2})(-\d+)?`)

// parseVersion reads the flavor and version from --version output such as
//
//	mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)
//	mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)
//	mysqld  Ver 8.0.36-28 for Linux on x86_64 (Percona Server (GPL), Release 28, ...)
//	postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)
func parseVersion(out string) (target.Flavor, string, error) {
	line := firstLine(out)
	lower := strings.ToLower(line)
	var flavor target.Flavor
	rest := line
	switch {
	case strings.Contains(lower, "(postgresql)"):
		flavor = target.FlavorPostgres
		rest = line[strings.Index(lower, "(postgresql)")+len("(postgresql)"):]
	case strings.Contains(lower, " ver "):
		rest = line[strings.Index(lower, " ver ")+len(" ver "):]
		switch {
		case strings.Contains(lower, "mariadb"):
			flavor = target.FlavorMariaDB
		case strings.Contains(lower, "percona"):
			flavor = target.FlavorPercona
		default:
			flavor = target.FlavorMySQL
		}
	default:
		return "", "", fmt.Errorf("unrecognised --version output %q", line)
	}
	m := versionRE.FindStringSubmatch(rest)
	if m == nil {
		return "", "", fmt.Errorf("no version number in %q", line)
	}
	v := m[1]
	if flavor == target.FlavorPercona {
		v += m[2] // Percona's release suffix, e.g. 8.0.36-28
	}
	return flavor, v, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// versionAtLeast reports whether v >= min.
func versionAtLeast(v, min string) bool { return target.CompareVersions(v, min) >= 0 }
