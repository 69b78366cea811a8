package oltp

import (
	"context"
	"fmt"

	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

var (
	_ executor      = (*pgExecutor)(nil)
	_ batchPreparer = (*pgExecutor)(nil)
)

// pgExecutor runs statements on a lean PostgreSQL connection (package
// pgwire): prepared statements send Bind, Execute and Sync in one write
// with binary parameters, and their rows are skipped undecoded. It ignores
// ctx: a run aborts statements in flight through workload.Env.Sockets.
type pgExecutor struct {
	conn     *pgwire.Conn
	prepared bool // --ps-mode=auto
}

func (x *pgExecutor) prepare(_ context.Context, st *stmt) error {
	if !x.prepared || st.other {
		return nil // BEGIN and COMMIT: the simple protocol, one message
	}
	ps, err := x.conn.Prepare(st.text)
	if err != nil {
		return fmt.Errorf("prepare %q: %w", st.text, err)
	}
	st.pps, st.byRef = ps, true
	return nil
}

func (x *pgExecutor) prepareAll(_ context.Context, sts []*stmt) error {
	if !x.prepared {
		return nil
	}
	texts := make([]string, len(sts))
	for i, st := range sts {
		texts[i] = st.text
	}
	pss, err := x.conn.PrepareAll(texts)
	if pe, ok := err.(*pgwire.PrepareError); ok {
		return fmt.Errorf("prepare %q: %w", texts[pe.Index], pe.Err)
	}
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	for i, st := range sts {
		st.pps, st.byRef = pss[i], true
	}
	return nil
}

func (x *pgExecutor) query(_ context.Context, st *stmt) error {
	if st.pps != nil {
		return st.pps.Query(st.args)
	}
	return x.conn.Query(st.text, st.args)
}

func (x *pgExecutor) exec(_ context.Context, st *stmt) (int64, error) {
	if st.pps != nil {
		return st.pps.Exec(st.args)
	}
	return x.conn.Exec(st.text, st.args)
}

func (x *pgExecutor) close(st *stmt) error {
	if st.pps == nil {
		return nil
	}
	err := st.pps.Close()
	st.pps = nil
	return err
}
