package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

func TestCatalog(t *testing.T) {
	home := t.TempDir()
	c := Open(home)
	if list, err := c.List(); err != nil || len(list) != 0 {
		t.Fatalf("empty catalogue: %v %v", list, err)
	}
	for _, e := range []Entry{{Name: "b", Version: "1"}, {Name: "a", Version: "2"}, {Name: "b", Version: "3"}} {
		if err := c.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.List()
	if err != nil || len(list) != 2 || list[0].Name != "a" || list[1].Version != "3" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	fi, err := os.Stat(filepath.Join(home, FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("catalogue file mode: %v %v", fi.Mode(), err)
	}
	if _, err := c.Get("zz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(zz) = %v", err)
	}
	if err := c.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(Entry{Name: "bad name"}); err == nil {
		t.Error("bad name accepted")
	}
}

func TestFindBasedir(t *testing.T) {
	tests := []struct {
		name  string
		dirs  []string
		start string
		want  string
	}{
		{"basedir itself", []string{"bin"}, "", ""},
		{"tarball top directory", []string{"mariadb-11.4/bin"}, "", "mariadb-11.4"},
		{"ambiguous", []string{"x/bin", "y/bin"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if got := FindBasedir(root); got != filepath.Join(root, tt.want) {
				t.Errorf("FindBasedir = %s, want %s", got, filepath.Join(root, tt.want))
			}
		})
	}
	if !IsArchive("x.tar.gz") || IsArchive("x.zip") {
		t.Error("IsArchive")
	}
}

func TestSortEntriesByVersion(t *testing.T) {
	es := []Entry{
		{Name: "pg-16", Flavor: target.FlavorPostgres, Version: "16.14"},
		{Name: "mariadb-10.11.5", Flavor: target.FlavorMariaDB, Version: "10.11.5"},
		{Name: "mariadb-10.2.11", Flavor: target.FlavorMariaDB, Version: "10.2.11"},
		{Name: "mariadb-11.4.5", Flavor: target.FlavorMariaDB, Version: "11.4.5"},
	}
	sortEntries(es)
	var got []string
	for _, e := range es {
		got = append(got, e.Name)
	}
	want := "mariadb-10.2.11 mariadb-10.11.5 mariadb-11.4.5 pg-16"
	if strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
}
