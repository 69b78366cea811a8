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
)

// OpenReadOnly opens the results store at loc for reading only: for a
// command that only reads (results list, show, export), so that a store
// file mode 0444, in a read-only directory or on a read-only file system
// can still be read. The file must exist (the error wraps fs.ErrNotExist
// otherwise) and have the current schema: a read-only store cannot be
// migrated, so an older one fails with a message saying to open it once
// with write access. A DSN is opened as Open does.
func OpenReadOnly(ctx context.Context, loc string) (*Store, error) {
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
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %w", loc, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open results store %s: not a file: %w", loc, fs.ErrInvalid)
	}
	// First as an ordinary reader (it sees a writer's WAL); then, when
	// SQLite cannot even make the WAL index beside a read-only file,
	// as immutable (nothing can be writing a file no one may write).
	var first error
	for _, immutable := range []bool{false, true} {
		s, err := openReadOnly(ctx, abs, immutable)
		if err == nil {
			return s, nil
		}
		var old *oldSchemaError
		if errors.As(err, &old) {
			return nil, fmt.Errorf("open results store %s: %w", loc, err)
		}
		if first == nil {
			first = err
		}
	}
	return nil, fmt.Errorf("open results store %s read-only: %w", loc, first)
}

// oldSchemaError: a read-only store's schema is older than this dbarena's.
type oldSchemaError struct{ have, want int }

func (e *oldSchemaError) Error() string {
	return fmt.Sprintf("schema version %d is older than this dbarena's %d and the store is opened read-only; open it once with write access to upgrade it", e.have, e.want)
}

func openReadOnly(ctx context.Context, abs string, immutable bool) (*Store, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		db.Close()
		return nil, err
	}
	// Reading the schema proves the file is readable; an empty file (a
	// store never written) has version 0.
	if _, err := db.ExecContext(ctx, "SELECT COUNT(*) FROM sqlite_master"); err != nil {
		db.Close()
		return nil, err
	}
	if n := len(migrations()); version != n {
		db.Close()
		if version > n {
			return nil, fmt.Errorf("schema version %d is newer than this dbarena understands (%d); upgrade dbarena", version, n)
		}
		return nil, &oldSchemaError{have: version, want: n}
	}
	return &Store{db: db, be: sqliteBackend, loc: abs, self: currentOwner()}, nil
}
