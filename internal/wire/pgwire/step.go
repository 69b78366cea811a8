package pgwire

import ()

// Stepping: a caller that serves many connections from one thread, handling
// each socket that signals on its own stack as pgbench's threads do, sends
// a statement with Send (or Stmt.Send) and calls Poll at each signal of the
// socket until Poll reports the reply complete. Neither ever waits for the
// server (a send that finds the socket full waits for room, as Exec does).

// CanStep reports whether Poll can serve the Conn: a raw socket that waits
// through a rawsock.Waiter (Dial's context carried one), without TLS.
func (c *Conn) CanStep() bool { return c.s.Shared() && !c.s.TLS() && !c.s.Netpoll() }

// Send sends an unprepared statement like Query (its rows are skipped) and
// returns without reading the reply: Poll does.
func (c *Conn) Send(query string, args []any) error { return c.SendFunc(query, args, nil) }

// SendFunc is Send for a caller that reads the rows: Poll hands each to fn
// (if not nil) as QueryFunc does.
func (c *Conn) SendFunc(query string, args []any, fn func(r *Row) error) error {
	if c.pipe != nil {
		return errInPipeline
	}
	if err := c.unprepared(query, args, fn != nil); err != nil {
		return err
	}
	return c.sendStep(nil, fn)
}

// Send sends the statement with args like Query (its rows are skipped) and
// returns without reading the reply: Poll does.
func (s *Stmt) Send(args []any) error { return s.SendFunc(args, nil) }

// SendFunc is Send for a caller that reads the rows: Poll hands each to fn
// (if not nil) as QueryFunc does.
func (s *Stmt) SendFunc(args []any, fn func(r *Row) error) error {
	if s.c.pipe != nil {
		return errInPipeline
	}
	if err := s.bind(args); err != nil {
		return err
	}
	return s.c.sendStep(s.cols, fn)
}

// sendStep sends the queued request, whose reply Poll reads, handing its
// rows to fn with the columns cols (or the reply's own).
func (c *Conn) sendStep(cols []column, fn func(*Row) error) error {
	c.step = replyState{cols: cols, fn: fn}
	return c.send()
}

// Poll reads what the socket holds of the reply to what Send sent, without
// waiting. Once the reply's ReadyForQuery came it reports done, with the
// rows the statement changed and its error, as Exec would; until then it
// reports not done and nil. An error that breaks the connection is done
// too.
func (c *Conn) Poll() (done bool, affected int64, err error) {
	for {
		t, p, ok, err := c.buffered()
		if err == nil && !ok {
			if ok, err = c.s.FillNow(); err == nil {
				if !ok {
					return false, 0, nil
				}
				continue
			}
		}
		if err == nil {
			var end bool
			if end, err = c.take(&c.step, t, p); !end && err == nil {
				continue
			}
		} else {
			err = firstErr(c.step.first, err)
		}
		c.busy.Store(false)
		affected, err = c.step.result(err)
		return true, affected, err
	}
}
