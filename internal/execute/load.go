package execute

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/data/dumpload"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// LoadRequest is one dump load (dbarena load): the run service's entry
// for loading, stored as a run of workload "load".
type LoadRequest struct {
	Target target.Target
	// Dump is the opened dump (dump.OpenAs), Options the load's options.
	Dump    *dump.Dump
	Options dumpload.Options
	// DeferAuto is --defer-indexes auto: secondary indexes are deferred
	// on the MySQL family when the dump is larger than the buffer pool.
	DeferAuto bool
	// Home is DBARENA_HOME: a sandbox target loads its privileged parts
	// through the sandbox's superuser account.
	Home string
	// Tags, Host, Version and Command are stored with the run (Command
	// for the target, its password masked).
	Tags    [][2]string
	Host    summary.Host
	Version string
	Command func(target.Target) []string
	// Interrupts, when set, returns a context cancelled on Ctrl-C, taken
	// once the server is checked, as the load starts.
	Interrupts func(context.Context) (context.Context, context.CancelFunc)
	// Began is told the session before the load starts (the opening line).
	Began func(s *Session)
}

// LoadOutcome is a load that started.
type LoadOutcome struct {
	Result *dumpload.Result
	// Run is the stored run (its ID 0 when StoreErr).
	Run *summary.Run
	// Err is the load's own error, stored with the run: control
	// characters escaped, errors.Is and errors.As see through it.
	Err error
	// StoreErr is set when the run could not be stored.
	StoreErr error
	// Target is the session's target (its flavor and version known).
	Target target.Target
}

// Load connects to the request's target, checks that the dump suits it
// (its syntax, the engines named), loads it and stores the load as a run.
// It returns an error (with its Kind) only when the load did not start.
func Load(ctx context.Context, st Store, r LoadRequest) (*LoadOutcome, error) {
	t, o := r.Target, r.Options
	if (r.Dump.Syntax == dump.Postgres) != (t.Family() == target.Postgres) {
		return nil, wrap(BadInput, fmt.Errorf("%s is a %s dump and the target is %s", o.Files[0], r.Dump.Format, t.Flavor))
	}
	if t.Sandbox != "" {
		if adm, err := sandbox.NewManager(r.Home).Admin(t.Sandbox); err == nil {
			o.Admin = &adm
		}
	}
	s, err := Connect(ctx, t, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := checkEngines(ctx, s, o.Rewrite); err != nil {
		return nil, err
	}
	if r.DeferAuto && s.Target.Family() == target.MySQL {
		o.DeferIndexes = deferAuto(ctx, s, r.Dump.Size)
	}
	if r.Interrupts != nil {
		var stop context.CancelFunc
		ctx, stop = r.Interrupts(ctx)
		defer stop()
	}
	if r.Began != nil {
		r.Began(s)
	}
	res, loadErr := dumpload.Load(ctx, s.Env(), o)
	if loadErr != nil {
		loadErr = printableError{loadErr}
	}
	if res == nil { // nothing started
		if dumpload.IsBadInput(loadErr) {
			return nil, wrap(BadInput, loadErr)
		}
		return nil, wrap(Failed, loadErr)
	}
	run := res.Summary(s.Target, loadErr)
	for _, kv := range r.Tags {
		run.Tags[kv[0]] = kv[1]
	}
	run.Host, run.Dbarena = r.Host, summary.Dbarena{Version: r.Version}
	if r.Command != nil {
		run.Dbarena.Command = r.Command(s.Target)
	}
	_, storeErr := st.SaveRun(context.WithoutCancel(ctx), run)
	return &LoadOutcome{Result: res, Run: run, Err: loadErr, StoreErr: storeErr, Target: s.Target}, nil
}

// checkEngines rejects --engine / --engine-map engines the server lacks.
func checkEngines(ctx context.Context, s *Session, rw dump.Rewrite) error {
	if rw.Engine == "" && len(rw.EngineMap) == 0 {
		return nil
	}
	if s.Target.Family() != target.MySQL {
		return wrap(BadInput, fmt.Errorf("--engine and --engine-map apply to MySQL-family servers; the target is %s", s.Target.Flavor))
	}
	have, err := dumpload.ServerEngines(ctx, s.DB)
	if err != nil {
		return wrap(Failed, err)
	}
	if rw.Engine != "" {
		if m := dumpload.MissingEngine(have, []string{rw.Engine}); m != "" {
			return wrap(BadInput, fmt.Errorf("--engine %s: the server has no such engine (it has %s)", m, strings.Join(have, ", ")))
		}
	}
	if m := dumpload.MissingEngine(have, rw.Engines()); m != "" {
		return wrap(BadInput, fmt.Errorf("--engine-map: the server has no engine %s (it has %s)", m, strings.Join(have, ", ")))
	}
	return nil
}

// deferAuto defers secondary indexes when the dump is larger than the
// InnoDB buffer pool, where maintaining them row by row means random I/O
// (170 MB dump: 73 s deferred against 115 s with a 128 MB buffer pool; with
// 1 GB the gain was smaller, 44 s against 50 s).
func deferAuto(ctx context.Context, s *Session, size int64) bool {
	var pool int64
	if err := s.DB.QueryRowContext(ctx, "SELECT @@innodb_buffer_pool_size").Scan(&pool); err != nil {
		return false
	}
	return size > pool
}

// printableError shows an error of a load with control characters
// escaped (text from a dump must not drive the terminal); errors.As and
// errors.Is still see the error.
type printableError struct{ err error }

func (e printableError) Error() string { return dumpload.Printable(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }
