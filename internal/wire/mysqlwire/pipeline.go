package mysqlwire

import "errors"

// errInPipeline refuses a call that needs its own round trip while a
// pipeline is open.
var errInPipeline = errors.New("mysqlwire: not allowed while a pipeline is open")

// Pipeline queues executions of prepared statements and sends them in one
// write, then reads their replies: one round trip for all of them. The
// server runs each as it comes, whatever the replies before it said: after
// an error the later statements still run. A deadlock rolls the open
// transaction back and later statements would then run in autocommit mode,
// so a caller that pipelines inside a transaction disables autocommit for
// the session (SET autocommit = 0) and rolls back after an error. Rows are
// skipped. This changes what is measured (one wait for several
// statements), so workloads leave it off unless asked.
type Pipeline struct {
	c *Conn
	n int // statements queued
}

// StartPipeline opens a pipeline on c: until its Sync, Stmt.Exec and
// Stmt.Query queue their statement (and return 0 and nil), and c's other
// calls are refused.
func (c *Conn) StartPipeline() *Pipeline {
	c.pipe = &Pipeline{c: c}
	c.pbuf = c.pbuf[:0]
	return c.pipe
}

// Exec queues s with args.
func (p *Pipeline) Exec(s *Stmt, args []any) error {
	if s.c != p.c {
		return errors.New("mysqlwire: statement of another connection")
	}
	return s.send(args)
}

// Len is the number of statements queued.
func (p *Pipeline) Len() int { return p.n }

// queue appends the command in c.wbuf to the pipeline's buffer.
func (c *Conn) queue() error {
	payload := len(c.wbuf) - 4
	if payload >= maxPayload {
		return errors.New("mysqlwire: statement too long for a pipeline")
	}
	b := c.wbuf
	b[0], b[1], b[2], b[3] = byte(payload), byte(payload>>8), byte(payload>>16), 0
	c.pbuf = append(c.pbuf, b...)
	c.pipe.n++
	return nil
}

// Sync sends the queued statements and reads every reply: each(i,
// affected, err) is called, in order, for each statement (i counts from
// 0). It returns the first error and closes the pipeline; a lost
// connection ends it at once. each may be nil.
func (p *Pipeline) Sync(each func(i int, affected int64, err error)) error {
	c := p.c
	c.pipe = nil
	if p.n == 0 {
		return nil
	}
	if c.stopped() {
		return ErrClosed
	}
	if err := c.write(c.pbuf); err != nil {
		return err
	}
	var first error
	for i := range p.n {
		affected, _, err := c.result()
		if each != nil {
			each(i, affected, err)
		}
		if err != nil {
			if first == nil {
				first = err
			}
			var se *Error
			if !errors.As(err, &se) {
				return first // out of step or lost: no more replies to read
			}
		}
	}
	return first
}
