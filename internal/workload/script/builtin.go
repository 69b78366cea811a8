package script

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// builtinScripts are pgbench's built-in scripts, verbatim (pgbench.c).
var builtinScripts = map[string]string{
	"tpcb-like": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"simple-update": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"select-only": `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
}

// pgbench's tables (pgbench -i): rows per scale unit.
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100000
	// loadBatch is the number of rows per INSERT when the server
	// refuses local files.
	loadBatch = 2000
)

var tables = []string{"pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches"}

func ddl(d dialect.Dialect) []string {
	pk := " PRIMARY KEY"
	tail := ""
	if o := d.TableOptions("InnoDB"); o != "" {
		tail = " " + o
	}
	return []string{
		"CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp NULL, filler char(22))" + tail,
		"CREATE TABLE pgbench_tellers (tid int NOT NULL" + pk + ", bid int, tbalance int, filler char(84))" + tail,
		"CREATE TABLE pgbench_accounts (aid int NOT NULL" + pk + ", bid int, abalance int, filler char(84))" + tail,
		"CREATE TABLE pgbench_branches (bid int NOT NULL" + pk + ", bbalance int, filler char(88))" + tail,
	}
}

// Prepare implements workload.Preparer as `pgbench -i` does: the four
// tables at --scale, accounts loaded in parallel through dialect.RowSink
// (COPY on PostgreSQL, LOAD DATA LOCAL INFILE on the MySQL family,
// multi-row INSERTs when the server refuses local files).
//
// On PostgreSQL, prepare is pgbench -i itself (Init): the same statements,
// fillfactor, filler and steps, so that the tables have pgbench's sizes.
func (wl *Workload) Prepare(ctx context.Context, env workload.Env, threads int, p workload.Progress) error {
	if !mysqlSyntax(env.Dialect) { // PostgreSQL: pgbench -i's own statements
		o := wl.initOptions()
		p.SetTotal(int64(wl.scale) * (accountsPerScale + tellersPerScale + branchesPerScale))
		if err := Init(ctx, env.DB, o, nil, func(n int64) { p.Add(n, n*100) }); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		return nil
	}
	if err := wl.Cleanup(ctx, env); err != nil {
		return err
	}
	for _, q := range ddl(env.Dialect) {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
	}
	n := int64(wl.scale) * accountsPerScale
	p.SetTotal(n + int64(wl.scale)*(branchesPerScale+tellersPerScale))
	sink := dialect.NewRowSink(env.Dialect, loadBatch, false, p.Add)
	small := func(table string, rows int64, row func(w *dialect.Rows, i int64)) error {
		return load(ctx, env, sink, table, 1, rows, row)
	}
	if err := small("pgbench_branches", int64(wl.scale)*branchesPerScale, func(w *dialect.Rows, i int64) { w.Int(i); w.Int(0) }); err != nil {
		return err
	}
	if err := small("pgbench_tellers", int64(wl.scale)*tellersPerScale, func(w *dialect.Rows, i int64) { w.Int(i); w.Int((i-1)/tellersPerScale + 1); w.Int(0) }); err != nil {
		return err
	}
	if threads < 1 {
		threads = 1
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, threads)
	per := (n + int64(threads) - 1) / int64(threads)
	for t := 0; t < threads; t++ {
		lo, hi := int64(t)*per+1, min(int64(t+1)*per, n)
		if lo > hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[t] = load(gctx, env, sink, "pgbench_accounts", lo, hi, func(w *dialect.Rows, i int64) { w.Int(i); w.Int((i-1)/accountsPerScale + 1); w.Int(0) })
			if errs[t] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, q := range env.Dialect.AnalyzeAll("pgbench_branches", "pgbench_tellers", "pgbench_accounts") {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
	}
	return nil
}

var columns = map[string][]string{
	"pgbench_branches": {"bid", "bbalance"},
	"pgbench_tellers":  {"tid", "bid", "tbalance"},
	"pgbench_accounts": {"aid", "bid", "abalance"},
}

// load writes rows lo..hi of table through sink, on a connection of its
// own.
func load(ctx context.Context, env workload.Env, sink *dialect.RowSink, table string, lo, hi int64, row func(w *dialect.Rows, i int64)) error {
	conn, err := env.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	defer conn.Close()
	err = sink.Load(ctx, conn, dialect.BulkTable{Table: table, Columns: strings.Join(columns[table], ", ")}, func(w *dialect.Rows) error {
		for i := lo; i <= hi; i++ {
			row(w, i)
			if err := w.End(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load %s rows %d..%d: %w", table, lo, hi, err)
	}
	return nil
}

// Cleanup implements workload.Cleaner.
func (wl *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	for _, t := range tables {
		if _, err := env.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("cleanup %s: %w", t, err)
		}
	}
	return nil
}

// Ready implements workload.Readier: with a --builtin script, pgbench's
// tables must hold --scale branches (pgbench reads its scale from them).
func (wl *Workload) Ready(ctx context.Context, env workload.Env) error {
	if len(wl.builtins) == 0 {
		return nil
	}
	hint := fmt.Sprintf("dbarena prepare script --scale %d", wl.scale)
	var n int64
	err := env.DB.QueryRowContext(ctx, "SELECT count(*) FROM pgbench_branches").Scan(&n)
	if err != nil {
		var cnt int
		if e := env.DB.QueryRowContext(ctx, "SELECT count(*) FROM pgbench_accounts WHERE aid = 1").Scan(&cnt); e != nil {
			return &workload.NotReadyError{Problem: "pgbench's tables are missing", Hint: hint}
		}
		return fmt.Errorf("ready: %w", err)
	}
	if n != int64(wl.scale) {
		return &workload.NotReadyError{Problem: fmt.Sprintf("pgbench_branches has %d rows, --scale %d wants %d", n, wl.scale, wl.scale), Hint: hint, Short: n < int64(wl.scale)}
	}
	var acc int64
	if err := env.DB.QueryRowContext(ctx, "SELECT max(aid) FROM pgbench_accounts").Scan(&acc); err != nil {
		return fmt.Errorf("ready: %w", err)
	}
	if acc != int64(wl.scale)*accountsPerScale {
		return &workload.NotReadyError{Problem: fmt.Sprintf("pgbench_accounts ends at aid %d, --scale %d wants %d", acc, wl.scale, int64(wl.scale)*accountsPerScale), Hint: hint, Short: true}
	}
	return nil
}

// Demand implements workload.Demander.
func (wl *Workload) Demand(threads int) workload.Demand {
	d := workload.Demand{Connections: threads, Tables: len(tables)}
	switch wl.protocol {
	case Prepared:
		d.PreparedPerConn = wl.stmts
	case Extended:
		d.PreparedPerConn = 1
	}
	return d
}
