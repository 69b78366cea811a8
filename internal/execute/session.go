package execute

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// connectTimeout bounds the first round trip to a target.
const connectTimeout = 15 * time.Second

// Session is an open connection pool to a target, with the server's flavor
// and version filled in.
type Session struct {
	Target  target.Target
	Dialect dialect.Dialect
	DB      *sql.DB
	// Sockets are the pool's connections, closed to abort a run at once.
	Sockets *dialect.Sockets
	// NoDatabase marks a Standalone session: no DB, Dialect or Sockets.
	NoDatabase bool
}

// Env is the workload environment of the session.
func (s *Session) Env() workload.Env {
	return workload.Env{DB: s.DB, Dialect: s.Dialect, Target: s.Target, Sockets: s.Sockets}
}

// Close closes the pool.
func (s *Session) Close() error {
	if s.DB == nil {
		return nil
	}
	return s.DB.Close()
}

// Standalone is a session without a database, for a workload.Detached run
// on its own (an HTTP run without --db-target): its monitor samples the
// host and dbarena only, and the run is stored against a target whose
// flavor is kind and whose DSN is address.
func Standalone(kind, address string) *Session {
	return &Session{Target: target.Target{Flavor: target.Flavor(kind), Host: address}, NoDatabase: true}
}

// Connect opens a pool on t, checks that the server answers and fills in
// its flavor and version. Errors are BadInput (the DSN) or Unreachable.
func Connect(ctx context.Context, t target.Target, o dialect.OpenOptions) (*Session, error) {
	d, err := dialect.For(t.Family())
	if err != nil {
		return nil, wrap(BadInput, fmt.Errorf("--target: %w", err))
	}
	o.Sockets = dialect.NewSockets()
	db, err := d.Open(t, o)
	if err != nil {
		return nil, wrap(BadInput, fmt.Errorf("--target %s: %s", t.MaskedDSN(), t.Mask(err.Error())))
	}
	pctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	flavor, version, err := d.ServerVersion(pctx, db)
	if err != nil {
		db.Close()
		return nil, wrap(Unreachable, fmt.Errorf("cannot reach %s: %s", t.MaskedDSN(), t.Mask(err.Error())))
	}
	t.Flavor, t.Version = flavor, version
	return &Session{Target: t, Dialect: d, DB: db, Sockets: o.Sockets}, nil
}
