// Package store is the results store: runs kept in a SQLite file (pure Go,
// no cgo) or, given a DSN, in a MySQL-family or PostgreSQL database shared
// by a team. The schema, the transactions and the masking of passwords are
// the same on every backend.
//
// A run is written either at once (SaveRun) or as it goes: BeginRun stores
// its parameters with status "running", AppendIntervals adds each report
// interval as it ends, Checkpoint replaces its totals and histograms with
// the figures so far, and FinishRun stores the final content. Every write is
// one transaction, so a kill -9, an OOM or a power cut at any moment leaves
// the store consistent, earlier runs intact, and the interrupted run as it
// was at its last write; readers report a running run whose process is gone
// with status "aborted" (see owner.go).
//
// The schema is versioned and grows through the ordered migration steps in
// schema.go; a store written by a newer dbarena is refused rather than
// misread.
//
// Concurrency: a *Store is safe for concurrent use by multiple goroutines,
// and several processes (or machines, for a database store) may use the
// same store at once. SQLite writes start with BEGIN IMMEDIATE and wait
// (busy_timeout) for one another instead of failing; reads never block
// writes (WAL).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/dbarena/dbarena/internal/secret"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// ErrNotFound is returned (wrapped) when a run does not exist; test for it
// with errors.Is.
var ErrNotFound = errors.New("run not found")

// ErrNoDir is returned (wrapped) by Open when the directory of a store file
// does not exist: a mistyped path is an error, not a new empty store.
var ErrNoDir = errors.New("no such directory")

// ErrBadLocation is returned (wrapped) by Open for a DSN it cannot use (an
// unknown scheme, no database name).
var ErrBadLocation = errors.New("bad results store location")

// busyTimeout is how long a statement waits for another connection or
// process holding the write lock before it fails with SQLITE_BUSY. A
// write holds the lock for milliseconds, so this is generous.
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
	db *sql.DB
	be backend
	// loc is the file path or the DSN with its password masked.
	loc string
	// self identifies this process as the owner of the runs it begins.
	self owner

	// beforeCommit, when set (by tests only), runs inside SaveRun's
	// transaction just before COMMIT.
	beforeCommit func()
}

// Open opens the results store at loc and brings its schema up to date. loc
// is either a file path, for a SQLite store, or a DSN
// (mysql://USER:PASS@HOST:PORT/DB, postgres:// or postgresql://) naming an
// existing database, for a shared store.
//
// A file is created (mode 0600) if missing, but its directory must exist:
// otherwise the error wraps ErrNoDir and nothing is created. Every SQLite
// connection runs in WAL mode with synchronous=FULL, foreign keys on and a
// busy timeout, so concurrent writers wait instead of failing. Errors never
// contain a DSN's password.
func Open(ctx context.Context, loc string) (*Store, error) {
	if loc == "" {
		return nil, fmt.Errorf("open results store: empty path: %w", ErrBadLocation)
	}
	if strings.Contains(loc, "://") {
		return openDSN(ctx, loc)
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", loc, err)
	}
	dir := filepath.Dir(abs)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open results store %s: %w: %s", loc, ErrNoDir, dir)
	case err != nil:
		return nil, fmt.Errorf("open results store %s: %w", loc, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("open results store %s: %w: %s is not a directory", loc, ErrNoDir, dir)
	}
	return openFile(ctx, loc, abs)
}

// OpenDefault opens the SQLite store at path like Open, but first creates
// its missing parent directories (mode 0700): for the default store under
// $DBARENA_HOME (see DefaultPath).
func OpenDefault(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("open results store: empty path: %w", ErrBadLocation)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open results store %s: create directory: %w", path, err)
	}
	return openFile(ctx, path, abs)
}

// openFile opens the SQLite file at abs (path as the user gave it).
func openFile(ctx context.Context, path, abs string) (*Store, error) {
	// Create the file ourselves so it gets mode 0600; SQLite creates the
	// -wal and -shm files with the database file's permissions.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs))
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	s := &Store{db: db, be: sqliteBackend, loc: abs, self: currentOwner()}
	if err := s.migrateRetrying(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: %w", path, err)
	}
	return s, nil
}

// Location returns where the store is, for messages: the absolute file
// path, or the DSN with its password masked.
func (s *Store) Location() string { return s.loc }

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
		if poller.Sleep(ctx, wait) != nil {
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

// sqliteDSN builds the driver name for the file at abs: a file: URI (so
// that any character in the path is escaped) carrying the per-connection
// settings. _txlock=immediate makes every read-write transaction BEGIN
// IMMEDIATE, so a writer takes the write lock up front and waits on
// busy_timeout rather than failing to upgrade a read lock later.
func sqliteDSN(abs string) string {
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
		return fmt.Errorf("close results store %s: %w", s.loc, err)
	}
	return nil
}

// maskLoc masks a DSN's password in text meant for messages.
func maskLoc(loc string) string { return secret.MaskURL(loc) }
