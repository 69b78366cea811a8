// Package store is the results store: every run is kept in a SQLite file
// (pure Go, no cgo), one transaction per run, so that a crash or kill -9
// never leaves a half-written run and never damages earlier ones.
//
// The schema is versioned with PRAGMA user_version and grows through the
// ordered migration steps in schema.go; a file written by a newer dbarena
// is refused rather than misread.
//
// Concurrency: a *Store is safe for concurrent use by multiple goroutines,
// and several processes may open the same file at once. Writes start with
// BEGIN IMMEDIATE and wait (busy_timeout) for one another instead of
// failing; reads never block writes (WAL).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// ErrNotFound is returned (wrapped) when a run does not exist; test for it
// with errors.Is.
var ErrNotFound = errors.New("run not found")

// busyTimeout is how long a statement waits for another connection or
// process holding the write lock before it fails with SQLITE_BUSY. A
// SaveRun holds the lock for milliseconds, so this is generous.
const busyTimeout = 30 * time.Second

// FileName is the name of the SQLite file inside DBARENA_HOME.
const FileName = "results.db"

// DefaultPath returns the default results store file:
// $DBARENA_HOME/results.db, where DBARENA_HOME defaults to
// $HOME/.local/share/dbarena. env looks up an environment variable (pass
// os.Getenv); when HOME is unset too, the path is relative to the working
// directory.
func DefaultPath(env func(string) string) string {
	if home := env("DBARENA_HOME"); home != "" {
		return filepath.Join(home, FileName)
	}
	return filepath.Join(env("HOME"), ".local", "share", "dbarena", FileName)
}

// Store is an open results store. Its methods are safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string

	// beforeCommit, when set (by tests only), runs inside SaveRun's
	// transaction just before COMMIT.
	beforeCommit func()
}

// Open opens the results store at path, creating the file (mode 0600) and
// its parent directories (mode 0700) if needed, and brings its schema up to
// date. Every connection runs in WAL mode with synchronous=FULL, foreign keys
// on and a busy timeout, so concurrent writers wait instead of failing.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open results store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open results store %s: create directory: %w", path, err)
	}
	// Create the file ourselves so it gets mode 0600; SQLite creates the
	// -wal and -shm files with the database file's permissions.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}

	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	s := &Store{db: db, path: abs}
	if err := s.migrateRetrying(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	return s, nil
}

// migrateRetrying runs migrate, again after SQLITE_BUSY for up to
// busyTimeout: while another process creates the file or switches it to
// WAL mode, SQLite can report busy without calling the busy handler.
func (s *Store) migrateRetrying(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeout)
	wait := 10 * time.Millisecond
	for {
		err := s.migrate(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// isBusy reports SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// dsn builds the driver name for the file at abs: a file: URI (so that any
// character in the path is escaped) carrying the per-connection settings.
// _txlock=immediate makes every read-write transaction BEGIN IMMEDIATE, so
// a writer takes the write lock up front and waits on busy_timeout rather
// than failing to upgrade a read lock later.
func dsn(abs string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// Close closes the store. In-flight calls should have returned first.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close results store %s: %w", s.path, err)
	}
	return nil
}
