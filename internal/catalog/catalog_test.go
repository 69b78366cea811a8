package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
