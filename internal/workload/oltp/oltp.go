// Package oltp implements sysbench 1.0's OLTP workloads (oltp_read_write,
// oltp_read_only, oltp_write_only, oltp_point_select, oltp_update_index,
// oltp_update_non_index, oltp_insert, oltp_delete, select_random_points,
// select_random_ranges and bulk_insert) on sysbench's sbtest1..N tables.
// Flags, defaults, table layout, statement text and statement mix follow the
// Lua scripts of sysbench 1.0.20 (/usr/share/sysbench/*.lua), so sysbench and
// dbarena can run against each other's tables and server counters agree.
package oltp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/oltp/sbrand"
)

// spec is what sets one OLTP script apart from the others.
type spec struct {
	name, desc string
	flags      flagSet
	// minTableSize is the smallest valid --table-size.
	minTableSize int
	// kinds lists the statements prepared per table (prepare_statements()).
	kinds func(c *Config) []stmtKind
	// init sets up a worker beyond the per-table statements.
	init func(ctx context.Context, w *worker, wl *Workload, rebind func(string) string, id int, seed int64) error
	// event is the script's event().
	event func(ctx context.Context, w *worker, ev *workload.Event) error
	// preparesCustom: init prepares w.custom (select_random_*.lua).
	preparesCustom bool
	// singleTable: prepare and cleanup insist on --tables=1 (select_random_*.lua).
	singleTable bool
	// pointSelects overrides --point-selects when set (oltp_point_select.lua).
	pointSelects int
	// emptyWithoutAutoInc: prepare creates empty tables with --auto-inc=off
	// (oltp_insert.lua).
	emptyWithoutAutoInc bool
}

// Workload is one sysbench OLTP script. Its methods may be called from one
// goroutine at a time, except NewWorker, which is safe for concurrent use.
type Workload struct {
	spec *spec
	cfg  Config
	fs   *pflag.FlagSet

	mu      sync.Mutex
	threads int
	unique  *sbrand.Unique
	// texts caches stmtTexts by protocol family.
	texts map[target.Family][][numStmtKinds]string
	// part is this shard's share of the tables (Shard).
	part part
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Preparer = (*Workload)(nil)
	_ workload.Cleaner  = (*Workload)(nil)
	_ workload.Runner   = (*Workload)(nil)
)

func newWorkload(s *spec) *Workload { return &Workload{spec: s, cfg: DefaultConfig()} }

// Name implements workload.Workload.
func (wl *Workload) Name() string { return wl.spec.name }

// Description implements workload.Workload.
func (wl *Workload) Description() string { return wl.spec.desc }

// Config returns the workload's configuration for reading or changing
// before Prepare or NewWorker.
func (wl *Workload) Config() *Config { return &wl.cfg }

// Flags implements workload.Workload. It remembers fs so that the workload
// can read the run's --threads later where sysbench's scripts use it.
func (wl *Workload) Flags(fs *pflag.FlagSet) {
	wl.fs = fs
	wl.cfg.register(fs, wl.spec.flags)
}

// Validate implements workload.Workload.
func (wl *Workload) Validate() []error {
	return wl.cfg.validate(wl.spec.flags, wl.spec.minTableSize)
}

// Params implements workload.Workload.
func (wl *Workload) Params() map[string]any {
	p := wl.cfg.params(wl.spec.flags)
	if wl.spec.pointSelects > 0 {
		p["point_selects"] = wl.spec.pointSelects
	}
	return p
}

// PreparedStatements reports whether workers prepare statements on the
// server (--ps-mode=auto). With --ps-mode=disable they send statements as
// text, arguments interpolated by the driver.
func (wl *Workload) PreparedStatements() bool { return wl.cfg.PSMode == PSAuto }

var _ workload.ThreadSetter = (*Workload)(nil)

// SetThreads tells the workload the run's thread count, which
// select_random_points and select_random_ranges use to give each thread
// its own segment of k. Without it the workload reads a --threads flag from
// the flag set given to Flags, or assumes 1.
func (wl *Workload) SetThreads(n int) {
	wl.mu.Lock()
	wl.threads = n
	wl.mu.Unlock()
}

// runThreads is the thread count for scripts that depend on it.
func (wl *Workload) runThreads() int {
	wl.mu.Lock()
	n := wl.threads
	wl.mu.Unlock()
	return threadsOr1(n, wl.fs)
}

func threadsOr1(n int, fs *pflag.FlagSet) int {
	if n > 0 {
		return n
	}
	if fs != nil {
		if f := fs.Lookup("threads"); f != nil {
			if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
				return v
			}
		}
	}
	return 1
}

// Prepare implements workload.Preparer: cmd_prepare() of oltp_common.lua.
// Unlike sysbench's, it resumes an interrupted prepare: whole tables are
// kept, the missing rows of the others loaded, missing tables created; it
// refuses tables made with other options, naming the cleanup command.
func (wl *Workload) Prepare(ctx context.Context, env workload.Env, threads int, p workload.Progress) error {
	if wl.spec.singleTable && wl.cfg.Tables != 1 {
		return errors.New("this benchmark does not support --tables > 1")
	}
	return load(ctx, env, &wl.cfg, wl.loadRows(), threads, p, wl.cleanupHint())
}

// loadRows is the number of rows prepare loads into each table.
func (wl *Workload) loadRows() int {
	if wl.spec.emptyWithoutAutoInc && !wl.cfg.AutoInc {
		// oltp_insert.lua: ids generated on prepare could collide with
		// sysbench.rand.unique() ones later, so the tables start empty.
		return 0
	}
	return wl.cfg.TableSize
}

// Cleanup implements workload.Cleaner: cleanup() of oltp_common.lua.
func (wl *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	if wl.spec.singleTable && wl.cfg.Tables != 1 {
		return errors.New("this benchmark does not support --tables > 1")
	}
	return dropTables(ctx, env.DB, wl.cfg.Tables)
}

func dropTables(ctx context.Context, db *sql.DB, n int) error {
	for i := 1; i <= n; i++ {
		if _, err := db.ExecContext(ctx, dropTableSQL(i)); err != nil {
			return fmt.Errorf("drop %s: %w", tableName(i), err)
		}
	}
	return nil
}

// NewWorker implements workload.Runner: thread_init() of the script.
func (wl *Workload) NewWorker(ctx context.Context, env workload.Env, conn *sql.Conn, id int, seed int64) (workload.Worker, error) {
	x := &sqlExecutor{conn: conn, prepared: wl.cfg.PSMode == PSAuto}
	w, err := wl.newWorker(ctx, x, env.Dialect, id, seed)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// newWorker builds a worker on any executor (tests use a recorder).
func (wl *Workload) newWorker(ctx context.Context, x executor, d dialect.Dialect, id int, seed int64) (*worker, error) {
	rebind := d.Rebind
	w := &worker{
		cfg:       &wl.cfg,
		spec:      wl.spec,
		rnd:       wl.cfg.Rand.New(seed),
		x:         x,
		begin:     stmt{text: "BEGIN", other: true},
		commit:    stmt{text: "COMMIT", other: true},
		pgAutoInc: wl.cfg.AutoInc && !d.AutoValueOnZero(),
		cbuf:      make([]byte, 0, 128),
		part:      wl.part,
	}
	if wl.spec.kinds != nil {
		texts := wl.stmtTexts(d.Family(), rebind, wl.cfg.Tables)
		if err := w.prepareTables(ctx, texts, wl.spec.kinds(&wl.cfg)); err != nil {
			_ = w.Close()
			return nil, err
		}
	}
	if wl.spec.init != nil {
		if err := wl.spec.init(ctx, w, wl, rebind, id, seed); err != nil {
			_ = w.Close()
			return nil, err
		}
	}
	return w, nil
}

// stmtTexts returns the text of every statement kind for tables 1..n in
// the placeholder style of fam (rebind), built once and shared by the
// workload's workers: at 2048 workers, 36 strings each add up.
func (wl *Workload) stmtTexts(fam target.Family, rebind func(string) string, n int) [][numStmtKinds]string {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if wl.texts == nil {
		wl.texts = map[target.Family][][numStmtKinds]string{}
	}
	ts := wl.texts[fam]
	for t := len(ts); t <= n; t++ {
		var row [numStmtKinds]string
		if t > 0 {
			for k, def := range stmtDefs {
				row[k] = rebind(def.text(t))
			}
		}
		ts = append(ts, row)
	}
	wl.texts[fam] = ts
	return ts
}

// sharedUnique is the run's sysbench.rand.unique() sequence, shared by all
// workers as sysbench shares it between threads.
func (wl *Workload) sharedUnique(seed int64) *sbrand.Unique {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if wl.unique == nil {
		wl.unique = sbrand.NewUnique(seed)
	}
	return wl.unique
}

// All returns constructors for the eleven workloads, for workload.NewRegistry.
func All() []func() workload.Workload {
	return []func() workload.Workload{
		func() workload.Workload { return NewReadWrite() },
		func() workload.Workload { return NewReadOnly() },
		func() workload.Workload { return NewWriteOnly() },
		func() workload.Workload { return NewPointSelect() },
		func() workload.Workload { return NewUpdateIndex() },
		func() workload.Workload { return NewUpdateNonIndex() },
		func() workload.Workload { return NewInsert() },
		func() workload.Workload { return NewDelete() },
		func() workload.Workload { return NewSelectRandomPoints() },
		func() workload.Workload { return NewSelectRandomRanges() },
		func() workload.Workload { return NewBulkInsert() },
	}
}

// Statement lists of prepare_statements() per script.

func rangeKinds(c *Config) []stmtKind {
	if !c.RangeSelects {
		return nil
	}
	return []stmtKind{simpleRanges, sumRanges, orderRanges, distinctRanges}
}

func writeKinds() []stmtKind { return []stmtKind{indexUpdates, nonIndexUpdates, deletes, inserts} }

// NewReadWrite returns oltp_read_write (oltp_read_write.lua).
func NewReadWrite() *Workload {
	return newWorkload(&spec{
		name: "oltp_read_write", desc: "sysbench OLTP read/write transactions: point and range SELECTs, UPDATEs, DELETE+INSERT",
		flags: flagsCommon, minTableSize: 1,
		kinds: func(c *Config) []stmtKind {
			k := append([]stmtKind{pointSelects}, rangeKinds(c)...)
			return append(k, writeKinds()...)
		},
		event: func(ctx context.Context, w *worker, ev *workload.Event) error {
			if err := w.beginTrx(ctx, ev); err != nil {
				return err
			}
			if err := w.reads(ctx, ev); err != nil {
				return err
			}
			if err := w.writes(ctx, ev); err != nil {
				return err
			}
			return w.commitTrx(ctx, ev)
		},
	})
}

// NewReadOnly returns oltp_read_only (oltp_read_only.lua).
func NewReadOnly() *Workload {
	return newWorkload(&spec{
		name: "oltp_read_only", desc: "sysbench OLTP read-only transactions: point and range SELECTs",
		flags: flagsCommon, minTableSize: 1,
		kinds: func(c *Config) []stmtKind { return append([]stmtKind{pointSelects}, rangeKinds(c)...) },
		event: func(ctx context.Context, w *worker, ev *workload.Event) error {
			if err := w.beginTrx(ctx, ev); err != nil {
				return err
			}
			if err := w.reads(ctx, ev); err != nil {
				return err
			}
			return w.commitTrx(ctx, ev)
		},
	})
}

// NewWriteOnly returns oltp_write_only (oltp_write_only.lua).
func NewWriteOnly() *Workload {
	return newWorkload(&spec{
		name: "oltp_write_only", desc: "sysbench OLTP write-only transactions: UPDATEs and DELETE+INSERT",
		flags: flagsCommon, minTableSize: 1,
		kinds: func(*Config) []stmtKind { return writeKinds() },
		event: func(ctx context.Context, w *worker, ev *workload.Event) error {
			if err := w.beginTrx(ctx, ev); err != nil {
				return err
			}
			if err := w.writes(ctx, ev); err != nil {
				return err
			}
			return w.commitTrx(ctx, ev)
		},
	})
}

// NewPointSelect returns oltp_point_select (oltp_point_select.lua): one
// point SELECT per event whatever --point-selects says.
func NewPointSelect() *Workload {
	return newWorkload(&spec{
		name: "oltp_point_select", desc: "sysbench point SELECT by primary key, one per event",
		flags: flagsCommon, minTableSize: 1, pointSelects: 1,
		kinds: func(*Config) []stmtKind { return []stmtKind{pointSelects} },
		event: func(ctx context.Context, w *worker, ev *workload.Event) error {
			return w.pointSelects(ctx, ev, 1)
		},
	})
}

// NewUpdateIndex returns oltp_update_index (oltp_update_index.lua).
func NewUpdateIndex() *Workload {
	return newWorkload(&spec{
		name: "oltp_update_index", desc: "sysbench UPDATE of the indexed column k",
		flags: flagsCommon, minTableSize: 1,
		kinds: func(*Config) []stmtKind { return []stmtKind{indexUpdates} },
		event: func(ctx context.Context, w *worker, ev *workload.Event) error { return w.indexUpdates(ctx, ev) },
	})
}

// NewUpdateNonIndex returns oltp_update_non_index (oltp_update_non_index.lua).
func NewUpdateNonIndex() *Workload {
	return newWorkload(&spec{
		name: "oltp_update_non_index", desc: "sysbench UPDATE of the non-indexed column c",
		flags: flagsCommon, minTableSize: 1,
		kinds: func(*Config) []stmtKind { return []stmtKind{nonIndexUpdates} },
		event: func(ctx context.Context, w *worker, ev *workload.Event) error { return w.nonIndexUpdates(ctx, ev) },
	})
}

// NewDelete returns oltp_delete (oltp_delete.lua): one DELETE by id per
// event, nothing re-inserted.
func NewDelete() *Workload {
	return newWorkload(&spec{
		name: "oltp_delete", desc: "sysbench DELETE by primary key",
		flags: flagsCommon, minTableSize: 1,
		kinds: func(*Config) []stmtKind { return []stmtKind{deletes} },
		event: func(ctx context.Context, w *worker, ev *workload.Event) error {
			st := w.tables[w.tableNum()][deletes]
			st.setInt(0, w.id())
			return w.do(ctx, st, ev)
		},
	})
}

// NewInsert returns oltp_insert (oltp_insert.lua): one INSERT per event,
// sent as text as sysbench does (con:query, no prepared statement).
func NewInsert() *Workload {
	return newWorkload(&spec{
		name: "oltp_insert", desc: "sysbench INSERT of a new row",
		flags: flagsCommon, minTableSize: 0, emptyWithoutAutoInc: true,
		init: func(_ context.Context, w *worker, wl *Workload, _ func(string) string, _ int, seed int64) error {
			if !w.cfg.AutoInc {
				w.unique = wl.sharedUnique(seed)
			}
			w.buf = make([]byte, 0, 512)
			return nil
		},
		event: func(ctx context.Context, w *worker, ev *workload.Event) error { return w.insertEvent(ctx, ev) },
	})
}

// insertEvent is oltp_insert.lua's event().
func (w *worker) insertEvent(ctx context.Context, ev *workload.Event) error {
	tnum := w.tableNum()
	k := w.rnd.Default(1, int64(w.cfg.TableSize))
	b := append(w.buf[:0], "INSERT INTO sbtest"...)
	b = strconv.AppendInt(b, int64(tnum), 10)
	if w.pgAutoInc {
		// "INSERT INTO %s (k, c, pad) VALUES (%d, '%s', '%s')"
		b = append(b, " (k, c, pad) VALUES ("...)
	} else {
		// "INSERT INTO %s (id, k, c, pad) VALUES (%d, %d, '%s', '%s')" with
		// id 0 (let AUTO_INCREMENT pick) or sysbench.rand.unique() - 2^31.
		var id int64
		if w.unique != nil {
			id = int64(w.unique.Next()) - 2147483648
		}
		b = append(b, " (id, k, c, pad) VALUES ("...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ", "...)
	}
	b = strconv.AppendInt(b, k, 10)
	b = append(b, ", '"...)
	b = w.rnd.AppendStr(b, cTemplate)
	b = append(b, "', '"...)
	b = w.rnd.AppendStr(b, padTemplate)
	b = append(b, "')"...)
	w.buf = b
	w.custom.text = string(b)
	return w.do(ctx, &w.custom, ev)
}

// reads is the read part of oltp_read_write.lua and oltp_read_only.lua:
// execute_point_selects() and, with --range-selects, the four range groups.
func (w *worker) reads(ctx context.Context, ev *workload.Event) error {
	if err := w.pointSelects(ctx, ev, w.cfg.PointSelects); err != nil {
		return err
	}
	return w.rangeSelects(ctx, ev)
}

// writes is the write part of oltp_read_write.lua and oltp_write_only.lua.
func (w *worker) writes(ctx context.Context, ev *workload.Event) error {
	if err := w.indexUpdates(ctx, ev); err != nil {
		return err
	}
	if err := w.nonIndexUpdates(ctx, ev); err != nil {
		return err
	}
	return w.deleteInserts(ctx, ev)
}

// NewSelectRandomPoints returns select_random_points
// (select_random_points.lua): SELECT rows whose k is IN a list of random
// values drawn from this thread's segment of [0, table_size].
func NewSelectRandomPoints() *Workload {
	return newWorkload(&spec{
		name: "select_random_points", desc: "sysbench SELECT by a random IN() list on the secondary index k",
		flags: flagsCommon | flagsRandomPoints, minTableSize: 1, singleTable: true, preparesCustom: true,
		init: func(ctx context.Context, w *worker, wl *Workload, rebind func(string) string, id int, _ int64) error {
			w.segment(wl.runThreads(), id)
			points := strings.Repeat("?, ", w.cfg.RandomPoints-1) + "?"
			text := "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (" + points + ")\n        "
			w.custom = *newStmt(rebind, text, w.cfg.RandomPoints, true)
			return w.x.prepare(ctx, &w.custom)
		},
		event: func(ctx context.Context, w *worker, ev *workload.Event) error {
			for i := range w.custom.args {
				w.custom.setInt(i, w.rnd.Default(w.rmin, w.rmax))
			}
			return w.do(ctx, &w.custom, ev)
		},
	})
}

// NewSelectRandomRanges returns select_random_ranges
// (select_random_ranges.lua): SELECT count(k) over OR-ed random BETWEEN
// ranges of k within this thread's segment.
func NewSelectRandomRanges() *Workload {
	return newWorkload(&spec{
		name: "select_random_ranges", desc: "sysbench SELECT count(k) over random BETWEEN ranges of k",
		flags: flagsCommon | flagsRandomRanges, minTableSize: 1, singleTable: true, preparesCustom: true,
		init: func(ctx context.Context, w *worker, wl *Workload, rebind func(string) string, id int, _ int64) error {
			w.segment(wl.runThreads(), id)
			ranges := strings.Repeat("k BETWEEN ? AND ? OR ", w.cfg.NumberOfRanges-1) + "k BETWEEN ? AND ?"
			text := "        SELECT count(k)\n          FROM sbtest1\n          WHERE " + ranges
			w.custom = *newStmt(rebind, text, 2*w.cfg.NumberOfRanges, true)
			return w.x.prepare(ctx, &w.custom)
		},
		event: func(ctx context.Context, w *worker, ev *workload.Event) error {
			delta := int64(w.cfg.Delta)
			for i := 0; i < len(w.custom.args); i += 2 {
				v := w.rnd.Default(w.rmin, w.rmax)
				w.custom.setInt(i, v)
				w.custom.setInt(i+1, v+delta)
			}
			return w.do(ctx, &w.custom, ev)
		},
	})
}

// segment sets [rmin, rmax] as select_random_*.lua compute them: rlen =
// table_size / threads (a Lua float), rmin = rlen * (tid % threads),
// rmax = rmin + rlen, both truncated to integers when passed to sb_rand.
func (w *worker) segment(threads, id int) {
	rlen := float64(w.cfg.TableSize) / float64(threads)
	rmin := rlen * float64(id%threads)
	w.rmin, w.rmax = int64(rmin), int64(rmin+rlen)
}
