package tpcc

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/workload"
)

// Demand implements workload.Demander: one connection per terminal, each
// holding every statement of the five transactions prepared (the order
// line inserts for every line count included), on the nine TPC-C tables.
func (wl *Workload) Demand(threads int) workload.Demand {
	return workload.Demand{Connections: threads, PreparedPerConn: preparedPerTerminal(wl.cfg.Shape), Tables: len(allTables)}
}

// Ready implements workload.Readier: the nine tables are there, the load
// recorded in dbarena's load tables is complete (every unit in, indexes
// built), and they hold at least the warehouses --warehouses asks for
// (more is refused before the run). It remembers what it found (the
// warehouses, the schema, its foreign keys) for Params and Notes.
func (wl *Workload) Ready(ctx context.Context, env workload.Env) error {
	want := 0
	if wl.fs != nil && wl.fs.Changed("warehouses") {
		want = wl.cfg.Warehouses
	}
	var missing []string
	for _, t := range allTables {
		ok, err := tableExists(ctx, env, env.DB, t.name)
		if err != nil {
			return fmt.Errorf("look for table %s: %w", t.name, err)
		}
		if !ok {
			missing = append(missing, t.name)
		}
	}
	if len(missing) == len(allTables) {
		return &workload.NotReadyError{Problem: "no TPC-C tables here",
			Hint: prepareHint(max(want, wl.cfg.Warehouses), wl.cfg.Schema, 1)}
	}
	if len(missing) > 0 {
		return &workload.NotReadyError{Problem: "TPC-C tables missing: " + strings.Join(missing, ", "),
			Hint: "dbarena cleanup tpcc && " + prepareHint(max(want, wl.cfg.Warehouses), wl.cfg.Schema, 1)}
	}
	m, err := readMeta(ctx, env, env.DB)
	if err != nil {
		return err
	}
	have, schema := 0, SchemaStandard
	if m != nil {
		schema = m.schema
		// Loaded by dbarena: every unit recorded and every index built.
		done, err := doneUnits(ctx, env.DB)
		if err != nil {
			return fmt.Errorf("read completed load units: %w", err)
		}
		hint := prepareHint(m.warehouses, m.schema, m.seed)
		if n, all := len(done), 1+3*m.warehouses; n < all {
			return &workload.NotReadyError{Short: true, Hint: hint,
				Problem: fmt.Sprintf("the TPC-C load is incomplete: %d of its %d units are in", n, all)}
		}
		for _, ix := range allIndexes(m.schema) {
			ok, err := indexExists(ctx, env, ix)
			if err != nil {
				return fmt.Errorf("look for index %s: %w", ix.name, err)
			}
			if !ok {
				return &workload.NotReadyError{Short: true, Hint: hint,
					Problem: "the TPC-C load is incomplete: index " + ix.name + " is missing"}
			}
		}
		have = m.warehouses
	} else if err := env.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM warehouse").Scan(&have); err != nil {
		// Loaded by another tool (tpcc-mysql): the warehouse rows say.
		return err
	}
	if have < 1 {
		return &workload.NotReadyError{Problem: "the TPC-C tables hold no warehouse",
			Hint: "dbarena cleanup tpcc && " + prepareHint(max(want, wl.cfg.Warehouses), wl.cfg.Schema, 1)}
	}
	if want > have {
		// Home warehouses beyond those loaded have no rows: a run would
		// fail at its first transaction there.
		return &workload.NotReadyError{Refuse: true,
			Problem: fmt.Sprintf("--warehouses %d: the TPC-C tables hold %d", want, have),
			Hint:    "dbarena cleanup tpcc && " + prepareHint(want, wl.cfg.Schema, 1)}
	}
	fk, err := hasForeignKeys(ctx, env, env.DB)
	if err != nil {
		return fmt.Errorf("look for foreign keys: %w", err)
	}
	wl.mu.Lock()
	wl.prepared = have
	wl.found = &runInfo{warehouses: have, schema: schema, fk: fk}
	if m != nil {
		wl.found.seed = m.seed
	}
	wl.mu.Unlock()
	return nil
}

// prepareHint is the prepare command that loads w warehouses.
func prepareHint(w int, schema string, seed uint64) string {
	s := fmt.Sprintf("dbarena prepare tpcc --warehouses %d", w)
	if schema != SchemaStandard {
		s += " --schema " + schema
	}
	if seed != DefaultConfig().Seed {
		s += fmt.Sprintf(" --seed %d", seed)
	}
	return s
}

// Notes returns what a reader of a run on threads terminals must know
// before it starts: with --bind-warehouse and fewer terminals than
// warehouses, some warehouses are never a home warehouse. The warehouses
// are the run's, else --warehouses, else those Ready found; none is
// returned while they are unknown.
func (wl *Workload) Notes(threads int) []string {
	if !wl.cfg.BindWarehouse {
		return nil
	}
	wl.mu.Lock()
	w := wl.prepared
	if wl.fs != nil && wl.fs.Changed("warehouses") {
		w = wl.cfg.Warehouses
	}
	if wl.runInfo != nil {
		w = wl.runInfo.warehouses
	}
	wl.mu.Unlock()
	if threads < 1 || threads >= w {
		return nil
	}
	idle := "warehouse " + fmt.Sprint(w)
	if threads+1 < w {
		idle = fmt.Sprintf("warehouses %d-%d", threads+1, w)
	}
	return []string{fmt.Sprintf("--bind-warehouse with %d terminals and %d warehouses: %s are never a home "+
		"warehouse (only remote order lines and payments reach them); drop --bind-warehouse to draw the home "+
		"warehouse per transaction", threads, w, idle)}
}
