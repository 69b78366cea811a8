package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// roMount makes dir read-only (a read-only bind mount of itself) until the
// test ends; it skips when mounts are not allowed (not root), except in CI.
func roMount(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bind mount (CI runs as root): %v", err)
		}
		t.Skipf("cannot bind mount: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
}

// TestOpenReadOnly: a store on a read-only file system cannot be opened
// for writing, but is read whole read-only.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "r.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id := save(t, s, richRun(0))
	want := mustRun(t, s, id)
	s.Close()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	roMount(t, dir)
	if s, err := Open(ctx, path); err == nil {
		s.Close()
		t.Fatal("Open for writing succeeded on a read-only file system")
	}
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	defer ro.Close()
	rows, err := ro.List(ctx, Filter{})
	if err != nil || len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("List = %+v, %v", rows, err)
	}
	sameRun(t, "read-only", mustRun(t, ro, id), want)
	if _, err := ro.SaveRun(ctx, richRun(1)); err == nil {
		t.Error("SaveRun succeeded on a read-only store")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("read-only open left files: %v", entries)
	}
}

func TestOpenReadOnlyErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := OpenReadOnly(ctx, filepath.Join(dir, "none.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A store of schema version 1 cannot be upgraded read-only.
	old := filepath.Join(dir, "old.db")
	db, err := sql.Open("sqlite", old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV1 + "PRAGMA user_version = 1;"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = OpenReadOnly(ctx, old)
	if err == nil || !strings.Contains(err.Error(), "schema version 1 is older") || !strings.Contains(err.Error(), "write access") {
		t.Errorf("old schema: %v", err)
	}
}
