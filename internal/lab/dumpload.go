package lab

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/data/dumpload"
	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// DumpLoader is the Loader of real loads: a plan's data loaded with
// package load as `dbarena load` loads it, each load stored in Store as a
// run of workload load.
type DumpLoader struct {
	Store Store
	// Host and Dbarena are stored with each load, as Steps stores them.
	Host    summary.Host
	Version string
	Command func(t target.Target) []string
}

var _ Loader = DumpLoader{}

// Tags of a plan load's run, besides the lab's: what was loaded where, so
// that reload: never finds it again. The place is the sandbox, or the
// masked DSN of a server dbarena does not manage.
const (
	tagLoadDump  = "load.dump"
	tagLoadPlace = "load.place"
)

// DefaultLoadThreads is a plan load's parallelism without data: threads.
const DefaultLoadThreads = 2

// Load implements lab.Loader.
func (pl DumpLoader) Load(ctx context.Context, j LoadJob) (*summary.Run, error) {
	file, err := filepath.Abs(j.Dump)
	if err != nil {
		return nil, err
	}
	s, err := execute.Connect(ctx, j.Target, dialect.OpenOptions{MaxConns: 2})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	engine := j.Engine
	if engine == "" {
		engine = "as-dumped"
	}
	place := j.Target.Sandbox
	if place == "" {
		place = j.Target.MaskedDSN()
	}
	tags := map[string]string{tagLoadDump: file, tagLoadPlace: place, "engine": engine}
	if j.KeepLoaded {
		if kept, err := pl.loaded(ctx, s.DB, s.Target, tags); err != nil || kept {
			return nil, err
		}
	}
	if j.Engine != "" {
		have, err := dumpload.ServerEngines(ctx, s.DB)
		if err != nil {
			return nil, err
		}
		if m := dumpload.MissingEngine(have, []string{j.Engine}); m != "" {
			return nil, fmt.Errorf("engine %s is not available on %s %s (it has %s)", m, s.Target.Flavor, s.Target.Version, strings.Join(have, ", "))
		}
	}
	res, err := dumpload.Load(ctx, s.Env(), LoadOptions(file, j))
	if res == nil {
		if err == nil {
			err = errors.New("load returned nothing")
		}
		return nil, errors.New(s.Target.Mask(err.Error()))
	}
	run := res.Summary(s.Target, err)
	run.Error = s.Target.Mask(run.Error)
	run.Plan = j.Ref()
	for k, v := range tags {
		run.Tags[k] = v
	}
	for _, kv := range j.Tags() {
		run.Tags[kv[0]] = kv[1]
	}
	run.Host = pl.Host
	run.Dbarena = summary.Dbarena{Version: pl.Version}
	if pl.Command != nil {
		run.Dbarena.Command = pl.Command(s.Target)
	}
	if _, serr := pl.Store.SaveRun(context.WithoutCancel(ctx), run); serr != nil {
		return run, serr
	}
	return run, nil
}

// LoadOptions are a plan load's options: dbarena load's defaults, the
// plan's threads (default 2) and engine.
func LoadOptions(file string, j LoadJob) dumpload.Options {
	o := dumpload.DefaultOptions()
	o.Files = []string{file}
	o.Threads = DefaultLoadThreads
	if j.Data != nil && j.Data.Threads > 0 {
		o.Threads = j.Data.Threads
	}
	o.Rewrite = dump.Rewrite{Engine: j.Engine}
	return o
}

// loaded reports whether the place holds a complete load of the same dump
// and engine: the latest load stored there is that one, and its database
// still has tables.
func (pl DumpLoader) loaded(ctx context.Context, db *sql.DB, t target.Target, tags map[string]string) (bool, error) {
	runs, err := pl.Store.List(ctx, store.Filter{Workload: dumpload.Workload, Tags: map[string]string{tagLoadPlace: tags[tagLoadPlace]}, Limit: 1})
	if err != nil || len(runs) == 0 || runs[0].Status != summary.StatusComplete ||
		runs[0].Tags[tagLoadDump] != tags[tagLoadDump] || runs[0].Tags["engine"] != tags["engine"] {
		return false, err
	}
	d, err := dialect.Of(t)
	if err != nil {
		return false, err
	}
	q := d.UserTables()
	var n int
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}
