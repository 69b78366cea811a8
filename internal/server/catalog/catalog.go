// Package catalog keeps the server catalogue: server installations
// registered by name (dbarena server import, scripts/fetch-servers) beside
// the system-installed ones, in $DBARENA_HOME/servers.json (mode 0600).
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
)

// FileName is the catalogue file inside DBARENA_HOME.
const FileName = "servers.json"

// ErrNotFound is returned (wrapped) for a name the catalogue does not hold.
var ErrNotFound = errors.New("no such server in the catalogue")

// Entry is one registered server installation.
type Entry struct {
	Name    string        `json:"name"`
	Flavor  target.Flavor `json:"flavor"`
	Version string        `json:"version"`
	// Basedir is the unpacked installation (bin/, share/, ...).
	Basedir string `json:"basedir"`
	// Server is the path of mariadbd, mysqld or postgres.
	Server string `json:"server"`
	// Source is what was imported: the directory or tarball given.
	Source     string    `json:"source"`
	ImportedAt time.Time `json:"imported_at"`
}

// Catalog is the catalogue file of one DBARENA_HOME. It reads and writes
// the file on every call; concurrent writers in several processes may lose
// one another's update, not corrupt the file (writes go through a rename).
type Catalog struct {
	Path string
}

// Open returns the catalogue of home.
func Open(home string) *Catalog { return &Catalog{Path: filepath.Join(home, FileName)} }

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

// ValidName reports whether name can name a catalogue entry.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("server name %q: want 1-64 of [a-zA-Z0-9_.-]", name)
	}
	return nil
}

// List returns the entries by name; a missing file is an empty catalogue.
func (c *Catalog) List() ([]Entry, error) {
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server catalogue: %w", err)
	}
	var doc struct {
		Servers []Entry `json:"servers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("server catalogue %s: %w", c.Path, err)
	}
	sortEntries(doc.Servers)
	return doc.Servers, nil
}

// Get returns the entry called name.
func (c *Catalog) Get(name string) (Entry, error) {
	list, err := c.List()
	if err != nil {
		return Entry{}, err
	}
	for _, e := range list {
		if e.Name == name {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("server %q: %w", name, ErrNotFound)
}

// Put adds e, replacing an entry of the same name.
func (c *Catalog) Put(e Entry) error {
	if err := ValidName(e.Name); err != nil {
		return err
	}
	list, err := c.List()
	if err != nil {
		return err
	}
	out := []Entry{e}
	for _, old := range list {
		if old.Name != e.Name {
			out = append(out, old)
		}
	}
	sortEntries(out)
	return c.write(out)
}

// Remove deletes the entry called name (its files stay).
func (c *Catalog) Remove(name string) error {
	list, err := c.List()
	if err != nil {
		return err
	}
	var out []Entry
	for _, e := range list {
		if e.Name != name {
			out = append(out, e)
		}
	}
	if len(out) == len(list) {
		return fmt.Errorf("server %q: %w", name, ErrNotFound)
	}
	return c.write(out)
}

func (c *Catalog) write(list []Entry) error {
	if list == nil {
		list = []Entry{}
	}
	data, err := json.MarshalIndent(struct {
		Servers []Entry `json:"servers"`
	}{list}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
		return fmt.Errorf("server catalogue: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.Path), ".servers-*.json")
	if err != nil {
		return fmt.Errorf("server catalogue: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("server catalogue: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("server catalogue: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("server catalogue: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.Path); err != nil {
		return fmt.Errorf("server catalogue: %w", err)
	}
	return nil
}

// IsArchive reports whether path names a tarball Unpack understands.
func IsArchive(path string) bool {
	for _, suf := range []string{".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tar.zst"} {
		if strings.HasSuffix(strings.ToLower(path), suf) {
			return true
		}
	}
	return false
}

// FindBasedir returns dir if it has bin/, sbin/ or libexec/, else its only
// subdirectory that has one (a tarball's top directory), else dir.
func FindBasedir(dir string) string {
	has := func(d string) bool {
		for _, sub := range []string{"bin", "sbin", "libexec"} {
			if fi, err := os.Stat(filepath.Join(d, sub)); err == nil && fi.IsDir() {
				return true
			}
		}
		return false
	}
	if has(dir) {
		return dir
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dir
	}
	var subs []string
	for _, e := range entries {
		if e.IsDir() && has(filepath.Join(dir, e.Name())) {
			subs = append(subs, filepath.Join(dir, e.Name()))
		}
	}
	if len(subs) == 1 {
		return subs[0]
	}
	return dir
}

// sortEntries orders entries by flavor, then version (10.2 before 10.11),
// then name.
func sortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if c := strings.Compare(string(a.Flavor), string(b.Flavor)); c != 0 {
			return c < 0
		}
		if c := target.CompareVersions(a.Version, b.Version); c != 0 {
			return c < 0
		}
		return a.Name < b.Name
	})
}
