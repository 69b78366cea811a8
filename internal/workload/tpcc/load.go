package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// unit is one load unit: a part of one warehouse (w = 0 for items). A unit
// is recorded in dbarena_tpcc_load when all its rows are in; a unit found
// unrecorded is deleted and loaded again, so an interrupted and resumed load
// ends with exactly the data of an uninterrupted one.
type unit struct {
	part string
	w    int
}

// job is one table of a unit and the generator of its rows.
type job struct {
	t   *table
	gen func(w *dialect.Rows) error
}

// jobs lists the tables of u with their generators.
func (g *generator) jobs(u unit) []job {
	w := u.w
	switch u.part {
	case PartItems:
		return []job{{tItem, func(rw *dialect.Rows) error { return g.items(rw, 1, nItems) }}}
	case PartWarehouse:
		return []job{
			{tWarehouse, func(rw *dialect.Rows) error { return g.warehouse(rw, w) }},
			{tDistrict, func(rw *dialect.Rows) error { return g.districts(rw, w) }},
			{tStock, func(rw *dialect.Rows) error { return g.stock(rw, w) }},
		}
	case PartCustomer:
		return []job{
			{tCustomer, func(rw *dialect.Rows) error { return g.customers(rw, w) }},
			{tHistory, func(rw *dialect.Rows) error { return g.history(rw, w) }},
		}
	case PartOrders:
		return []job{
			{tOrders, func(rw *dialect.Rows) error { return g.orders(rw, w) }},
			{tNewOrders, func(rw *dialect.Rows) error { return g.newOrders(rw, w) }},
			{tOrderLine, func(rw *dialect.Rows) error { return g.orderLines(rw, w) }},
		}
	}
	return nil
}

// rows is the number of rows of u.
func (g *generator) rows(u unit) int64 {
	switch u.part {
	case PartItems:
		return nItems
	case PartWarehouse:
		return 1 + nDist + nItems
	case PartCustomer:
		return 2 * nDist * nCust
	case PartOrders:
		return nDist*nOrders + nDist*(nOrders-firstNewOrder+1) + g.orderLineRows(u.w)
	}
	return 0
}

// cost orders units: the orders part first (its order_line index takes
// longest to build, and the build starts when the part is in), then the
// others biggest first.
//
// Measured and not kept (MariaDB 10.11, 4 warehouses, 2 cores): loading
// each table for all warehouses in one LOAD DATA into the empty table
// (bulk insert: no undo per row, indexes created first and built sorted
// at commit) used about 5% less server CPU but was no faster, as
// order_line alone (about 9 s on one core) became the critical path;
// concurrent loads into a table wait on the table lock the first one's
// bulk insert takes (so loaders keep unique_checks on, see unit). A single
// LOAD DATA of order_line with bulk insert also kept InnoDB's background
// statistics task busy for as long as the statement ran (gone with
// STATS_AUTO_RECALC=0). Keeping fkey_order_line_2 up to date during the
// load instead of building it after cost about 15% more server CPU.
func cost(u unit) int {
	switch u.part {
	case PartOrders:
		return 4
	case PartWarehouse:
		return 3
	case PartCustomer:
		return 2
	}
	return 1
}

// Load methods (Config.LoadMethod).
const (
	// LoadAuto streams LOAD DATA LOCAL INFILE (MySQL family) or COPY FROM
	// STDIN (PostgreSQL), falling back to multi-row INSERTs when the server
	// refuses local files.
	LoadAuto = "auto"
	// LoadInsert uses multi-row INSERTs only.
	LoadInsert = "insert"
)

// insertRows is the number of rows per multi-row INSERT.
const insertRows = 500

// loader loads units into one database.
type loader struct {
	env  workload.Env
	gen  *generator
	cols map[*table]string
	// sink sends the rows: LOAD DATA LOCAL INFILE or COPY, multi-row
	// INSERTs with --load-method insert or once the server refused
	// local files.
	sink *dialect.RowSink
}

// Prepare implements workload.Preparer: tpcc-mysql's create_table.sql, the
// initial data of clause 4.3.3.1 for --parts and --warehouse-range, loaded
// in parallel on up to threads connections, then add_fkey_idx.sql's indexes
// (and foreign keys with --fk) once every unit of the database is in.
func (wl *Workload) Prepare(ctx context.Context, env workload.Env, threads int, p workload.Progress) error {
	c := &wl.cfg
	for _, t := range allTables {
		if _, err := env.DB.ExecContext(ctx, createTableSQL(env.Dialect, c.Schema, t)); err != nil {
			return fmt.Errorf("create table %s: %w", t.name, err)
		}
	}
	for _, q := range metaDDL() {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create dbarena's load tables: %w", err)
		}
	}
	m, err := wl.prepareMeta(ctx, env)
	if err != nil {
		return err
	}
	g := &generator{seed: m.seed, now: m.loadTime, c: m.c}
	done, err := doneUnits(ctx, env.DB)
	if err != nil {
		return fmt.Errorf("read completed load units: %w", err)
	}

	var todo []unit
	from, to := c.warehouseRange()
	for _, part := range c.Parts {
		if part == PartItems {
			// ITEM belongs to the whole database: a split load
			// (--warehouse-range) loads it with warehouse 1 only.
			if from == 1 && !done[unit{PartItems, 0}] {
				todo = append(todo, unit{PartItems, 0})
			}
			continue
		}
		for w := from; w <= to; w++ {
			if u := (unit{part, w}); !done[u] {
				todo = append(todo, u)
			}
		}
	}
	sort.SliceStable(todo, func(i, j int) bool { return cost(todo[i]) > cost(todo[j]) })
	var total int64
	for _, u := range todo {
		total += g.rows(u)
	}
	p.SetTotal(total)

	ld := &loader{env: env, gen: g, cols: map[*table]string{},
		sink: dialect.NewRowSink(env.Dialect, insertRows, c.LoadMethod == LoadInsert, p.Add)}
	for _, t := range allTables {
		ld.cols[t] = strings.Join(t.colNames(), ", ")
	}
	// Units not recorded may hold rows of an interrupted load: delete them
	// first, one at a time, so that no delete waits on a concurrent load.
	if len(done) > 0 || len(todo) > 0 {
		for _, u := range todo {
			if err := ld.clear(ctx, u); err != nil {
				return err
			}
		}
	}
	// When this prepare completes the database, each part's indexes are
	// built as soon as the part is in, beside the rest of the load.
	complete := len(done)+len(todo) == 1+3*c.Warehouses
	left := map[string]int{}
	for _, u := range todo {
		left[u.part]++
	}
	var (
		mu       sync.Mutex
		builds   sync.WaitGroup
		buildErr error
	)
	buildCtx, stopBuilds := context.WithCancel(ctx)
	defer stopBuilds()
	err = workload.Parallel(ctx, threads, len(todo), func(ctx context.Context, i int) error {
		u := todo[i]
		if err := ld.unit(ctx, u); err != nil {
			return err
		}
		mu.Lock()
		left[u.part]--
		last := left[u.part] == 0
		mu.Unlock()
		if complete && last {
			builds.Add(1)
			go func() {
				defer builds.Done()
				if err := createIndexes(buildCtx, env, 1, partIndexes(c.Schema, u.part)); err != nil {
					mu.Lock()
					buildErr = errors.Join(buildErr, err)
					mu.Unlock()
				}
			}()
		}
		return nil
	})
	if err != nil {
		stopBuilds()
	}
	builds.Wait()
	if err != nil {
		return err
	}
	if buildErr != nil {
		return buildErr
	}

	done, err = doneUnits(ctx, env.DB)
	if err != nil {
		return err
	}
	if len(done) < 1+3*c.Warehouses {
		return nil // the rest of the database is loaded elsewhere or later
	}
	return wl.postLoad(ctx, env, threads)
}

// clear deletes whatever rows unit u may hold.
func (ld *loader) clear(ctx context.Context, u unit) error {
	for _, j := range ld.gen.jobs(u) {
		q := "DELETE FROM " + j.t.name
		var args []any
		if j.t.wcol != "" {
			q += " WHERE " + j.t.wcol + " = ?"
			args = append(args, u.w)
		}
		if _, err := ld.env.DB.ExecContext(ctx, ld.env.Dialect.Rebind(q), args...); err != nil {
			return fmt.Errorf("clear %s w=%d of an interrupted load: %w", j.t.name, u.w, err)
		}
	}
	return nil
}

// unit loads u on its own connection and records it.
func (ld *loader) unit(ctx context.Context, u unit) error {
	conn, err := ld.env.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err = conn.ExecContext(ctx, ld.env.Dialect.LoadSession()); err != nil {
		return fmt.Errorf("load %s w=%d: session settings: %w", u.part, u.w, err)
	}
	for _, j := range ld.gen.jobs(u) {
		if err := ld.table(ctx, conn, j); err != nil {
			return fmt.Errorf("load %s w=%d: %w", j.t.name, u.w, err)
		}
	}
	q := ld.env.Dialect.Rebind("INSERT INTO " + unitsTable + " (part, w_id) VALUES (?, ?)")
	if _, err := conn.ExecContext(ctx, q, u.part, u.w); err != nil {
		return fmt.Errorf("record load unit %s w=%d: %w", u.part, u.w, err)
	}
	return nil
}

// table loads one table of a unit through the fastest path the server allows.
func (ld *loader) table(ctx context.Context, conn *sql.Conn, j job) error {
	return ld.sink.Load(ctx, conn, dialect.BulkTable{Table: j.t.name, Columns: ld.cols[j.t]}, j.gen)
}

// postLoad adds the indexes (and foreign keys) that are cheaper to build
// after the data, when missing, and refreshes the optimizer statistics.
func (wl *Workload) postLoad(ctx context.Context, env workload.Env, threads int) error {
	if err := createIndexes(ctx, env, threads, partIndexes(wl.cfg.Schema, "")); err != nil {
		return err
	}
	if wl.cfg.FK {
		for _, q := range foreignKeys {
			name := strings.Fields(q)[5]
			var n int
			qq := env.Dialect.Rebind("SELECT COUNT(*) FROM information_schema.table_constraints WHERE constraint_name = ? AND " + schemaPredicate(env))
			if err := env.DB.QueryRowContext(ctx, qq, name).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			if _, err := env.DB.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("add foreign key %s: %w", name, err)
			}
		}
	}
	names := make([]string, len(allTables))
	for i, t := range allTables {
		names[i] = t.name
	}
	for _, q := range env.Dialect.AnalyzeAll(names...) {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// createIndexes creates those of ixs that do not exist yet, on up to
// threads connections.
func createIndexes(ctx context.Context, env workload.Env, threads int, ixs []index) error {
	return workload.Parallel(ctx, threads, len(ixs), func(ctx context.Context, i int) error {
		ix := ixs[i]
		ok, err := indexExists(ctx, env, ix)
		if err != nil || ok {
			return err
		}
		if _, err := env.DB.ExecContext(ctx, createIndexSQL(ix)); err != nil {
			if ok, _ := indexExists(ctx, env, ix); ok { // built by a concurrent loader
				return nil
			}
			return fmt.Errorf("create index %s: %w", ix.name, err)
		}
		return nil
	})
}

func schemaPredicate(env workload.Env) string {
	return "table_schema = " + env.Dialect.CurrentDatabase()
}

func indexExists(ctx context.Context, env workload.Env, ix index) (bool, error) {
	var n int
	err := env.DB.QueryRowContext(ctx, env.Dialect.IndexExists(), ix.table, ix.name).Scan(&n)
	return n > 0, err
}

// Cleanup implements workload.Cleaner: it drops the TPC-C tables and
// dbarena's load records.
func (wl *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	names := []string{unitsTable, metaTable}
	for _, t := range allTables {
		names = append(names, t.name)
	}
	for _, n := range names {
		if _, err := env.DB.ExecContext(ctx, env.Dialect.DropTable(n)); err != nil {
			return fmt.Errorf("drop %s: %w", n, err)
		}
	}
	return dropProcs(ctx, env, env.DB)
}
