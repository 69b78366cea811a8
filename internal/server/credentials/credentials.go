// Package credentials finds the password of a target whose DSN has none,
// from the places a user keeps it off the command line: a password file,
// the environment, ~/.pgpass (PostgreSQL) and ~/.my.cnf-style option files
// (MySQL family). See docs/CLI.md, "Secrets".
package credentials

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Sources says where to look for a password, in this order: PasswordFile,
// the environment variable PasswordEnv, the family's conventional variable
// (MYSQL_PWD or PGPASSWORD), then the family's file (PGPASSFILE or
// ~/.pgpass; OptionFile or ~/.my.cnf).
type Sources struct {
	// PasswordFile is --password-file: its first line is the password.
	PasswordFile string
	// PasswordEnv is dbarena's own variable, normally DBARENA_PASSWORD.
	PasswordEnv string
	// OptionFile is --mysql-option-file; "" means ~/.my.cnf if it exists.
	OptionFile string
	// Getenv reads the environment (HOME, PGPASSFILE and the variables above).
	Getenv func(string) string
	// Warn receives one-line warnings: a password file ignored for its
	// permissions, as libpq and mysql ignore one.
	Warn func(string)
}

// DefaultEnv is the environment variable Sources.PasswordEnv normally names.
const DefaultEnv = "DBARENA_PASSWORD"

// Resolve fills t.Password when it is empty and returns a description of
// where it came from ("" when no source had one: the server may need none).
// A target that already has a password is left alone. Errors name the file
// (and line) at fault, never a password.
func Resolve(t *target.Target, s Sources) (string, error) {
	if t.Password != "" {
		return "", nil
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	warn := s.Warn
	if warn == nil {
		warn = func(string) {}
	}
	if s.PasswordFile != "" {
		pw, err := ReadPasswordFile(s.PasswordFile)
		if err != nil {
			return "", err
		}
		t.Password = pw
		return "--password-file " + s.PasswordFile, nil
	}
	d, err := dialect.Of(*t)
	if err != nil {
		return "", err
	}
	envs := []string{s.PasswordEnv, d.PasswordEnv()}
	for _, k := range envs {
		if k == "" {
			continue
		}
		if v := getenv(k); v != "" {
			t.Password = v
			return "$" + k, nil
		}
	}
	if d.PasswordFile() == flavor.PgPass {
		return fromPgpass(t, getenv, warn)
	}
	return fromOptionFile(t, s.OptionFile, getenv, warn)
}

// ReadPasswordFile returns the first line of path without its line end.
// An empty first line is an error: it is almost surely a mistake.
func ReadPasswordFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("--password-file %s:1: empty password line", path)
	}
	return line, nil
}

// pgpassHost is the host a password file entry is matched against: the
// socket directory for a socket, "localhost" for the default ones.
func pgpassHost(t *target.Target) string {
	if t.Socket == "" {
		if t.Host == "" {
			return "localhost"
		}
		return t.Host
	}
	dir := t.Socket
	if strings.HasPrefix(filepath.Base(dir), ".s.PGSQL.") {
		dir = filepath.Dir(dir)
	}
	switch dir {
	case "/tmp", "/var/run/postgresql", "/run/postgresql":
		return "localhost"
	}
	return dir
}

func fromPgpass(t *target.Target, getenv func(string) string, warn func(string)) (string, error) {
	path := getenv("PGPASSFILE")
	if path == "" {
		home := getenv("HOME")
		if home == "" {
			return "", nil
		}
		path = filepath.Join(home, ".pgpass")
	}
	f, ok, err := openPrivate(path, 0o077, "has group or world access; permissions should be u=rw (0600) or less", warn)
	if !ok {
		return "", err
	}
	defer f.Close()
	entries, err := ParsePgpass(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	user := t.User
	if user == "" {
		user = getenv("USER")
	}
	e, ok := LookupPgpass(entries, pgpassHost(t), strconv.Itoa(t.Port), t.Database, user)
	if !ok {
		return "", nil
	}
	t.Password = e.Password
	return path + ":" + strconv.Itoa(e.Line), nil
}

func fromOptionFile(t *target.Target, path string, getenv func(string) string, warn func(string)) (string, error) {
	explicit := path != ""
	if !explicit {
		home := getenv("HOME")
		if home == "" {
			return "", nil
		}
		path = filepath.Join(home, ".my.cnf")
	}
	f, ok, err := openPrivate(path, 0o002, "is world-writable", warn)
	if !ok {
		if err == nil && explicit {
			// An option file the user named must exist.
			if _, serr := os.Stat(path); serr != nil {
				return "", fmt.Errorf("--mysql-option-file: %w", serr)
			}
		}
		return "", err
	}
	defer f.Close()
	of, err := ParseOptionFile(f, path)
	if err != nil {
		return "", err
	}
	v, ok := of.Password()
	if !ok || v.Value == "" {
		return "", nil
	}
	t.Password = v.Value
	return path + ":" + strconv.Itoa(v.Line), nil
}

// openPrivate opens a password file unless it is missing (ok false, no
// error), not a regular file or has any of the mode bits in bad (ok false
// and a warning: the file is ignored, as libpq and mysql ignore it).
func openPrivate(path string, bad fs.FileMode, why string, warn func(string)) (*os.File, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("password file %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("password file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		warn(fmt.Sprintf("password file %s is not a plain file; ignored", path))
		return nil, false, nil
	}
	if st.Mode().Perm()&bad != 0 {
		f.Close()
		warn(fmt.Sprintf("password file %s %s; ignored", path, why))
		return nil, false, nil
	}
	return f, true, nil
}
