package dumpload

import (
	"context"
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Table transactions (Options.Bulk, MySQL family): each table's run of
// data statements goes to one connection as one transaction (tables in
// parallel). MariaDB >= 10.7 then loads an empty InnoDB table in bulk
// when the dump has set unique_checks=0 and foreign_key_checks=0, as
// mysqldump does (MDEV-24621): no undo log per row, indexes built by
// sorting at COMMIT. Under autocommit only a table's first statement gets
// that. The price: a statement that fails at run time in bulk mode
// discards the table's earlier rows, so the load stops (ContinueOnError
// is refused), and a big table loads on one connection only. Measured on
// MariaDB 10.11 (bench/load-compare) it saved no server CPU: parsing the
// INSERTs dominates, not InnoDB. So it is off by default.

// maxLaneBytes bounds the statement text queued for table transactions:
// the reader runs ahead of a big table's connection by at most this much
// to reach the next tables.
const maxLaneBytes = 256 << 20

// lane is the queue of one table transaction.
type lane struct {
	ch chan job
	// key is the table's key; db its database.
	key, db string
	// txn: the dump's own transaction (txn.go), ended by op ("commit",
	// "rollback" at at, "" at the end of its file: rolled back); pend
	// counts its statements per table key. Written by the reader before
	// ch is closed, read by the worker after.
	txn  bool
	op   string
	at   string
	pend map[string]int
}

// bulkMode decides Options.Bulk: on for the MySQL family when asked.
func bulkMode(o Options, t target.Target) (bool, error) {
	switch o.Bulk {
	case "", "off":
		return false, nil
	case "on":
		if o.ContinueOnError {
			return false, errors.New("bulk table transactions and continue-on-error exclude each other: in bulk mode a failing row discards the table's earlier rows")
		}
		return SyntaxOf(t) == dump.MySQL, nil
	}
	return false, fmt.Errorf("bulk mode %q: want on or off", o.Bulk)
}

// bulkData routes a data statement to its table's transaction, opening
// one (and closing the previous table's) as needed; false when the load
// is stopping.
func (l *loader) bulkData(p *pool, ss *streamState, j job) bool {
	key := j.tc.key()
	if ss.lane != nil && ss.lane.key != key {
		ss.closeLane()
	}
	if ss.lane == nil {
		ln := &lane{ch: make(chan job, 4096), key: key, db: j.db}
		p.pending(key, 1)
		if !p.submit(job{lane: ln, db: j.db, tc: j.tc}) {
			return false
		}
		ss.lane = ln
	}
	if !p.reserve(int64(len(j.st.SQL))) {
		return false
	}
	select {
	case ss.lane.ch <- j:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// closeLane ends the open table transaction's queue.
func (ss *streamState) closeLane() {
	if ss.lane != nil {
		close(ss.lane.ch)
		ss.lane = nil
	}
}

// runLane runs one table's data statements on s in one transaction. A
// table whose transaction does not commit (an error, an interrupted load)
// counts no loaded rows and gets a note.
func (l *loader) runLane(ctx context.Context, p *pool, s *session, lj *job) (err error) {
	var rows int64
	var first *dump.Statement
	began, committed := false, false
	defer func() {
		if err != nil {
			p.setErr(err) // stops the reader before the queue is drained
		}
		// Free the queue: the reader may wait for room.
		for j := range lj.lane.ch {
			p.release(int64(len(j.st.SQL)))
		}
		if committed || first == nil {
			return
		}
		l.rows.Add(-rows)
		lj.tc.rows.Add(-rows)
		if began {
			l.note(fmt.Sprintf("table %s: its data (from %s) was rolled back: it was loaded in one transaction that did not commit (a non-transactional table, MyISAM or Aria, keeps the rows it got; they are not counted)", lj.tc.name, first.Where()))
		}
	}()
	for j := range lj.lane.ch {
		p.release(int64(len(j.st.SQL)))
		if ctx.Err() != nil {
			return nil
		}
		if first == nil {
			st := j.st
			first = &st
			if ok, err := l.beginLane(ctx, s, &j, "the table's transaction"); !ok {
				return err
			}
			began = true
		}
		j.inTx = true
		before := lj.tc.rows.Load()
		err := l.execIn(ctx, s, &j)
		rows += lj.tc.rows.Load() - before
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
	if first == nil {
		return nil
	}
	if _, err := s.c.exec(ctx, "COMMIT"); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		st := *first
		st.SQL = "COMMIT (the data of table " + lj.tc.name + " from " + first.Where() + ")"
		return l.fail(&st, err)
	}
	committed = true
	return nil
}

// note adds a line to Result.Notes.
func (l *loader) note(s string) {
	l.mu.Lock()
	l.res.Notes = append(l.res.Notes, s)
	l.mu.Unlock()
}

// reserve waits for room for n bytes of queued table data; false when
// the load is stopping.
func (p *pool) reserve(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.laneBytes > 0 && p.laneBytes+n > maxLaneBytes && p.err == nil && p.ctx.Err() == nil {
		p.cond.Wait()
	}
	if p.err != nil || p.ctx.Err() != nil {
		return false
	}
	p.laneBytes += n
	return true
}

// release frees n bytes of queued table data.
func (p *pool) release(n int64) {
	p.mu.Lock()
	p.laneBytes -= n
	p.cond.Broadcast()
	p.mu.Unlock()
}

// beginLane opens a lane's transaction on s for its first job j: j's
// database, the dump's session state, then BEGIN (what names the
// transaction in an error). Not ok: the lane ends with err, nil when the
// load was cancelled or the error is let go (--continue-on-error).
func (l *loader) beginLane(ctx context.Context, s *session, j *job, what string) (ok bool, err error) {
	if err := s.use(ctx, j.db, nil); err != nil {
		return false, fmt.Errorf("%s: use database %s: %w", j.st.Where(), j.db, err)
	}
	if err := s.catchUp(ctx, l, j.log); err != nil {
		return false, l.fail(&j.st, err)
	}
	if _, err := s.c.exec(ctx, "BEGIN"); err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		return false, l.fail(&j.st, fmt.Errorf("begin %s: %w", what, err))
	}
	return true, nil
}
