package execute

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/preflight"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/workload"
)

// limitsTimeout bounds the server-limit check.
const limitsTimeout = 30 * time.Second

// checkLimits makes sure the server can take the run: a sandbox dbarena
// started (recorded in home) has its limits raised through its superuser
// connection, the workload account having no right to SET GLOBAL (with
// notes saying so); on another server a limit the run would hit is a
// BadInput error naming the setting and the value needed.
func checkLimits(ctx context.Context, s *Session, w workload.Workload, threads int, home string) ([]string, error) {
	need := workload.Demand{Connections: threads}
	if d, ok := w.(workload.Demander); ok {
		need = d.Demand(threads)
	}
	lctx, cancel := context.WithTimeout(ctx, limitsTimeout)
	defer cancel()
	var notes []string
	var err error
	if s.Target.Sandbox != "" {
		admin, closeAdmin := adminDB(s, home)
		defer closeAdmin()
		notes, err = preflight.Raise(lctx, s.DB, admin, s.Target.Flavor, need, extraConns)
	} else {
		err = preflight.Check(lctx, s.DB, s.Target.Flavor, need, extraConns)
	}
	var le *preflight.LimitError
	switch {
	case err == nil:
		return notes, nil
	case errors.As(err, &le):
		return nil, wrap(BadInput, fmt.Errorf("server limit on %s: %s", s.Target.MaskedDSN(),
			strings.ReplaceAll(err.Error(), "\n", "; ")))
	case ctx.Err() != nil:
		return nil, wrap(Failed, errors.New("interrupted while checking the server's limits"))
	}
	kind := Failed
	if s.Dialect.Classify(err).Kind == dialect.ConnLost {
		kind = Unreachable
	}
	return nil, wrap(kind, fmt.Errorf("check the server's limits on %s: %s", s.Target.MaskedDSN(), s.Target.Mask(err.Error())))
}

// adminDB opens the sandbox's superuser connection; when the sandbox is
// not recorded in home it falls back to the session's pool, which may not
// raise anything (Raise then says which setting to change).
func adminDB(s *Session, home string) (*sql.DB, func()) {
	admin, err := sandbox.NewManager(home).Admin(s.Target.Sandbox)
	if err != nil {
		return s.DB, func() {}
	}
	db, err := s.Dialect.Open(admin, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return s.DB, func() {}
	}
	return db, func() { db.Close() }
}
