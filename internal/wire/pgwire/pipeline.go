package pgwire

import "errors"

// errInPipeline refuses a call that needs its own round trip while a
// pipeline is open.
var errInPipeline = errors.New("pgwire: not allowed while a pipeline is open")

// pipeFlush is how many queued bytes a pipeline sends before its Sync, so
// that a long pipeline does not grow the write buffer without end.
const pipeFlush = 64 << 10

// Pipeline queues statements (Bind and Execute, or Parse, Bind and Execute
// for unprepared ones) and sends them with a single Sync: one round trip
// for all of them. The server runs them in order as they come; after an
// error it skips the rest until the Sync. Without an explicit BEGIN, the
// statements of one Sync form one implicit transaction (an error rolls
// them all back). Rows are skipped but for QueryFunc's. This changes what is measured (one
// latency for several statements, fewer waits), so workloads leave it off
// unless asked (pgbench's \startpipeline).
type Pipeline struct {
	c    *Conn
	n    int        // statements queued
	read []pipeRead // statements whose rows are read (QueryFunc)
	segs []int      // statements queued at each SyncPoint
}

// pipeRead is a queued statement whose rows go to fn.
type pipeRead struct {
	i    int
	cols []column
	fn   func(*Row) error
}

// StartPipeline opens a pipeline on c: until its Sync, statements are
// queued with its Exec, QueryFunc and ExecQuery, and c's own calls are
// refused.
func (c *Conn) StartPipeline() *Pipeline {
	c.pipe = &Pipeline{c: c}
	c.wbuf = c.wbuf[:0]
	return c.pipe
}

// Exec queues s with args.
func (p *Pipeline) Exec(s *Stmt, args []any) error {
	if err := s.bind(args); err != nil {
		return err
	}
	return p.spill()
}

// QueryFunc queues s with args; at Sync, fn is called for each of its
// rows (r valid during the call), and an error from fn is Sync's.
func (p *Pipeline) QueryFunc(s *Stmt, args []any, fn func(r *Row) error) error {
	if err := s.bind(args); err != nil {
		return err
	}
	p.read = append(p.read, pipeRead{i: p.n - 1, cols: s.cols, fn: fn})
	return p.spill()
}

// ExecQuery queues an unprepared statement (Parse of the unnamed
// statement, Bind, Execute; arguments as Conn.Exec sends them).
func (p *Pipeline) ExecQuery(query string, args []any) error {
	if err := p.c.unprepared(query, args, false); err != nil {
		return err
	}
	return p.spill()
}

// SyncPoint queues a Sync after the statements queued so far, without
// sending anything (libpq's PQsendPipelineSync, pgbench's \syncpipeline):
// those statements form an implicit transaction of their own, and after
// an error the server skips statements only up to this point, then runs
// the next ones. Sync reads the results of every segment.
func (p *Pipeline) SyncPoint() error {
	p.c.sync()
	p.segs = append(p.segs, p.n)
	return p.spill()
}

// Len is the number of statements queued.
func (p *Pipeline) Len() int { return p.n }

// spill sends what is queued once it is long; the server starts on it.
func (p *Pipeline) spill() error {
	if len(p.c.wbuf) < pipeFlush {
		return nil
	}
	return p.c.send()
}

// Sync sends the queued statements and a Sync, and reads every result:
// each(i, affected, err) is called, in order, for each statement that ran
// (i counts from 0) and for the first that failed; the statements skipped
// after a failure (up to the next SyncPoint) get no call. It returns the
// first error and closes the pipeline. each may be nil.
func (p *Pipeline) Sync(each func(i int, affected int64, err error)) error {
	c := p.c
	c.pipe = nil
	c.sync()
	if err := c.send(); err != nil {
		return err
	}
	defer c.busy.Store(false)
	var first error
	i := 0
	read, segs := p.read, p.segs
	for {
		t, m, err := c.readMsg()
		if err != nil {
			return firstErr(first, err)
		}
		switch t {
		case 'D':
			for len(read) > 0 && read[0].i < i {
				read = read[1:]
			}
			if len(read) == 0 || read[0].i != i || first != nil {
				continue
			}
			if err := c.row.parse(read[0].cols, m); err != nil {
				first = err
				continue
			}
			if err := read[0].fn(&c.row); err != nil {
				first = err
			}
		case 'C', 'I':
			if each != nil {
				each(i, commandTag(m), nil)
			}
			i++
		case 'E':
			err := parseError(m)
			if first == nil && each != nil && i < p.n {
				each(i, 0, err)
			}
			first = firstErr(first, err)
		case 'Z':
			c.readyFor(m)
			if len(segs) > 0 { // a SyncPoint's: the next segment's results follow
				i, segs = segs[0], segs[1:]
				continue
			}
			return first
		case '1', '2', '3', 'n', 'T', 's', 'N', 'A', 'S', 't':
		default:
			return c.outOfStep(t, "a pipeline's reply")
		}
	}
}
