package dumpload

import (
	"context"
	"fmt"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// The dump's own transactions.
//
// Under autocommit=0 (mysqldump --no-autocommit, Sakila's data file) a
// MySQL-family dump's data statements up to its COMMIT form one
// transaction: they go, in order, to one data connection (a "txn lane"),
// which commits at the dump's COMMIT (or rolls back at its ROLLBACK).
// Different transactions run in parallel on different connections. A
// statement that is not data (DDL commits implicitly in MySQL) first
// waits for every open transaction to end, so dbarena's connections
// never wait on each other's locks; a transaction that writes a table
// another one still holds uncommitted waits for that one first. A
// transaction still open at the end of its file is rolled back, as the
// client's session would be, and its rows count as lost.
//
// An explicit BEGIN / START TRANSACTION ... COMMIT runs in order on the
// schema connection (DDL and data may share it, as in PostgreSQL).

// autocommitOff reports a session log whose last autocommit assignment
// turns it off.
func autocommitOff(log []string) bool {
	return isOff(dump.SessionValue(log, "AUTOCOMMIT"))
}

// fkChecksOff reports a session log whose last foreign_key_checks
// assignment turns the checks off.
func fkChecksOff(log []string) bool {
	return isOff(dump.SessionValue(log, "FOREIGN_KEY_CHECKS"))
}

func isOff(v string) bool { return v == "0" || v == "OFF" || v == "FALSE" }

// readSettings reads autocommit and foreign_key_checks from the session
// log, once per change of the log.
func (ss *streamState) readSettings() {
	if ss.settingsAt != len(ss.log) {
		ss.settingsAt = len(ss.log)
		ss.acOff, ss.fkOff = autocommitOff(ss.log), fkChecksOff(ss.log)
	}
}

// autocommitOff: autocommitOff of the session log so far.
func (ss *streamState) autocommitOff() bool {
	ss.readSettings()
	return ss.acOff
}

// fkChecksOff: fkChecksOff of the session log so far.
func (ss *streamState) fkChecksOff() bool {
	ss.readSettings()
	return ss.fkOff
}

// dataInOrder decides that a data statement runs in dump order on the
// schema connection: foreign keys were declared before the data and are
// checked (MySQL family: foreign_key_checks is not 0), so rows loaded in
// parallel could break them. Noted once.
func (l *loader) dataInOrder(ss *streamState) bool {
	if !ss.fk || (l.d.Syntax == dump.MySQL && ss.fkChecksOff()) {
		return false
	}
	l.noteOnce("fk-in-order", "foreign keys are declared before the data and checked (foreign_key_checks is on, or a PostgreSQL CREATE TABLE has REFERENCES): that data ran in dump order on one connection, as in parallel it could break them")
	return true
}

// noteOnce adds a note the first time key is seen.
func (l *loader) noteOnce(key, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.noted == nil {
		l.noted = map[string]bool{}
	}
	if !l.noted[key] {
		l.noted[key] = true
		l.res.Notes = append(l.res.Notes, msg)
	}
}

// skipDropDatabase notes a DROP DATABASE of the dump, which is not run.
func (l *loader) skipDropDatabase(st *dump.Statement) {
	l.noteOnce("dropdb\x00"+st.Name, fmt.Sprintf("%s: DROP DATABASE %s not run: a load never drops a database (--drop-existing drops each table the dump creates just before its CREATE TABLE)",
		printable(st.Where()), quoteText(st.Name)))
}

// inOrder runs a statement in dump order on the schema connection, after
// everything queued before it.
func (l *loader) inOrder(ctx context.Context, schema *session, p *pool, ss *streamState, st *dump.Statement) error {
	ss.closeLane()
	p.waitTxns()
	p.drainAll()
	if ctx.Err() != nil {
		return nil
	}
	if err := schema.catchUp(ctx, l, ss.log); err != nil {
		return l.fail(st, err)
	}
	if ss.cur != "" && ss.cur != ss.schemaDB {
		if err := schema.use(ctx, ss.cur, ss.log); err != nil {
			return l.fail(st, fmt.Errorf("use database %s: %w", ss.cur, err))
		}
		ss.schemaDB = ss.cur
	}
	j := job{st: *st, db: ss.cur, log: ss.log[:len(ss.log):len(ss.log)], inTx: ss.inTx}
	if st.Kind == dump.Data {
		j.tc = l.table(ss.cur, st.Table)
		l.current.Store(st.Table)
		if ss.cur != "" {
			l.addDatabase(ss.cur)
		}
	} else {
		defer l.schemaGen.Add(1)
	}
	return l.execIn(ctx, schema, &j)
}

// txn handles BEGIN, COMMIT and ROLLBACK of the dump.
func (l *loader) txn(ctx context.Context, schema *session, p *pool, ss *streamState, st *dump.Statement) error {
	switch st.TxnOp {
	case "begin":
		// BEGIN commits an open transaction (MySQL); the new one runs in
		// order on the schema connection.
		ss.closeLane()
		p.waitTxns()
		p.drainAll()
		ss.inTx = true
	default:
		if ss.lane != nil && ss.lane.txn {
			if st.TxnOp == "rollback" {
				ss.lane.op = "rollback"
				ss.lane.at = st.Where()
			}
			ss.closeLane()
		}
		ss.inTx = false
	}
	// The schema connection's own statements follow the dump's
	// transaction too.
	if err := schema.catchUp(ctx, l, ss.log); err != nil {
		return l.fail(st, err)
	}
	if ss.cur != "" && ss.cur != ss.schemaDB {
		if err := schema.use(ctx, ss.cur, ss.log); err != nil {
			return l.fail(st, fmt.Errorf("use database %s: %w", ss.cur, err))
		}
		ss.schemaDB = ss.cur
	}
	if _, err := schema.c.exec(ctx, st.SQL); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return l.fail(st, err)
	}
	l.statements.Add(1)
	return nil
}

// endPart ends a part: a table transaction commits, the dump's own
// transaction still open is rolled back (as the client's session is at
// the end of its input).
func (ss *streamState) endPart() {
	if ss.lane != nil && ss.lane.txn {
		ss.lane.op = ""
	}
	ss.closeLane()
}

// txnData routes a data statement under autocommit=0 to the dump's open
// transaction, opening one as needed; false when the load is stopping.
func (l *loader) txnData(p *pool, ss *streamState, j job) bool {
	key := j.tc.key()
	if ss.lane != nil && !ss.lane.txn {
		ss.closeLane()
	}
	if ss.lane == nil || ss.lane.pend[key] == 0 {
		// Rows of this table queued or uncommitted elsewhere come
		// first: two transactions writing one table may lock each other.
		p.drain(key)
	}
	if ss.lane == nil {
		ln := &lane{ch: make(chan job, 4096), txn: true, op: "commit", pend: map[string]int{}, db: j.db}
		p.txnStart()
		if !p.submit(job{lane: ln, db: j.db}) {
			return false
		}
		ss.lane = ln
	}
	if ss.lane.pend[key] == 0 {
		p.holdTxn(key, 1)
	}
	ss.lane.pend[key]++
	p.pending(key, 1)
	if !p.reserve(int64(len(j.st.SQL) + len(j.st.Copy))) {
		return false
	}
	select {
	case ss.lane.ch <- j:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// runTxn runs one of the dump's transactions on s: its data statements
// in order, then COMMIT or ROLLBACK as the dump says. Rows of a
// transaction that does not commit are not counted as loaded.
func (l *loader) runTxn(ctx context.Context, p *pool, s *session, lj *job) (err error) {
	ln := lj.lane
	loaded := map[*tableCount]int64{}
	sent := map[*tableCount]int64{}
	var first *dump.Statement
	began, ended := false, false
	defer func() {
		if err != nil {
			p.setErr(err)
		}
		for j := range ln.ch {
			p.release(int64(len(j.st.SQL) + len(j.st.Copy)))
		}
		// The channel is closed: ln.op is final.
		if began && !ended {
			rolledBack := 0
			for tc, n := range loaded {
				l.rows.Add(-n)
				tc.rows.Add(-n)
				rolledBack += int(n)
				if ln.op == "rollback" {
					tc.sent.Add(-sent[tc])
				}
			}
			switch {
			case ln.op == "rollback" && err == nil:
				l.note(fmt.Sprintf("%s: the dump's ROLLBACK undid %d rows (from %s); they are not counted", printable(ln.at), rolledBack, printable(first.Where())))
			case ln.op == "" && err == nil && ctx.Err() == nil:
				l.note(fmt.Sprintf("%s: the dump set autocommit=0 and ended without COMMIT: its %d rows from there were rolled back, as the client's session would be", printable(first.Where()), rolledBack))
			}
		}
		p.txnDone(ln)
	}()
	for j := range ln.ch {
		p.release(int64(len(j.st.SQL) + len(j.st.Copy)))
		if ctx.Err() != nil {
			return nil
		}
		if first == nil {
			st := j.st
			first = &st
			if ok, err := l.beginLane(ctx, s, &j, "the dump's transaction"); !ok {
				return err
			}
			began = true
		}
		j.inTx = true
		beforeRows, beforeSent := j.tc.rows.Load(), j.tc.sent.Load()
		err := l.execIn(ctx, s, &j)
		loaded[j.tc] += j.tc.rows.Load() - beforeRows
		sent[j.tc] += j.tc.sent.Load() - beforeSent
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
	if first == nil {
		return nil
	}
	end := "COMMIT"
	if ln.op != "commit" {
		end = "ROLLBACK"
	}
	if _, err := s.c.exec(ctx, end); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		st := *first
		st.SQL = end + " (the dump's transaction from " + first.Where() + ")"
		return l.fail(&st, err)
	}
	ended = ln.op == "commit"
	return nil
}

// txnStart counts an open transaction lane.
func (p *pool) txnStart() {
	p.mu.Lock()
	p.txns++
	p.mu.Unlock()
}

// holdTxn counts the transaction lanes holding table key.
func (p *pool) holdTxn(key string, n int) {
	p.mu.Lock()
	if p.txnTables == nil {
		p.txnTables = map[string]int{}
	}
	p.txnTables[key] += n
	if p.txnTables[key] <= 0 {
		delete(p.txnTables, key)
	}
	p.mu.Unlock()
}

// inTxn reports whether a transaction lane holds table key.
func (p *pool) inTxn(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.txnTables[key] > 0
}

// txnDone ends a transaction lane: its tables' data is no longer pending.
func (p *pool) txnDone(ln *lane) {
	for key, n := range ln.pend {
		p.holdTxn(key, -1)
		p.pending(key, -n)
	}
	p.mu.Lock()
	p.txns--
	p.cond.Broadcast()
	p.mu.Unlock()
}

// waitTxns waits until every transaction lane has ended.
func (p *pool) waitTxns() {
	p.mu.Lock()
	for p.txns > 0 && p.err == nil && p.ctx.Err() == nil {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

// drainAll waits until no data statement is queued or running.
func (p *pool) drainAll() {
	p.mu.Lock()
	for len(p.queued) > 0 && p.err == nil && p.ctx.Err() == nil {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

// dropDatabase drops database name before the dump creates it again
// (its DROP DATABASE at where, under --drop-existing), as the loading
// account, with a fixed statement on the validated name.
func (l *loader) dropDatabase(ctx context.Context, name, where string) error {
	if err := checkDatabaseName(name, l.flavor()); err != nil {
		return &dump.BadInputError{Msg: where + ": " + err.Error()}
	}
	q := l.flavor().DropDatabase(name)
	c, err := l.dl.dial(ctx, "")
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.close()
	if _, err := c.exec(ctx, q); err != nil {
		if code, _ := serverError(err); code == "1044" {
			// The account has no rights on the database (a first load
			// into a new sandbox): nothing there is its to drop, and
			// the CREATE DATABASE that follows says whether it exists.
			l.note(fmt.Sprintf("%s: %s not run: the loading account has no rights on that database, so nothing in it is the load's to drop", printable(where), printable(q)))
			return nil
		}
		return fmt.Errorf("%s: --drop-existing: %s: %w", printable(where), printable(q), err)
	}
	l.note(fmt.Sprintf("%s: ran %s: the dump drops and creates the database, and --drop-existing was given", printable(where), printable(q)))
	return nil
}
