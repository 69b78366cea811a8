package mysql

import "strings"

// WaitsEnabledQuery returns a query of one row and one column saying
// whether performance_schema collects waits ("1"/"ON" when it does).
func (Dialect) WaitsEnabledQuery() string { return "SELECT @@global.performance_schema" }

// WaitSummaryQuery returns the query of the cumulative wait time by
// instrument (package monitor, WaitSummarySource): rows of event name and
// SUM_TIMER_WAIT in picoseconds, summed over the foreground threads
// (client sessions) other than the querying one, instruments that waited
// only. Background threads (timers, purge, page cleaners) wait most of
// their life, and that waiting delays no session.
func (Dialect) WaitSummaryQuery() string {
	return `SELECT w.EVENT_NAME, SUM(w.SUM_TIMER_WAIT)
		FROM performance_schema.events_waits_summary_by_thread_by_event_name w
		JOIN performance_schema.threads t ON t.THREAD_ID = w.THREAD_ID
		WHERE t.TYPE = 'FOREGROUND' AND (t.PROCESSLIST_ID IS NULL OR t.PROCESSLIST_ID <> CONNECTION_ID())
			AND w.SUM_TIMER_WAIT > 0 AND w.EVENT_NAME <> 'idle'
		GROUP BY w.EVENT_NAME`
}

// RowLockTimeQuery returns a query of one row: the name and the value of
// the cumulative time, in milliseconds, sessions spent waiting for InnoDB
// row locks (the fallback without performance_schema).
func (Dialect) RowLockTimeQuery() string { return "SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_time'" }

// RowLockWaitsQuery returns a query of rows of name and value: the
// number of sessions waiting for an InnoDB row lock now
// (Innodb_row_lock_current_waits) and the number of row-lock waits begun
// so far (Innodb_row_lock_waits), which the wait profile reads many times
// a second while sessions wait and once a second while none does.
func (Dialect) RowLockWaitsQuery() string {
	return "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_current_waits', 'Innodb_row_lock_waits')"
}

// WaitClass returns the class of a performance_schema wait instrument:
// "io" (file I/O), "mutex", "rwlock" (rwlock and sxlock), "cond"
// (condition waits), "lock" (table and metadata locks), "network"
// (socket I/O: a session waiting for its client), "table_io" (storage-engine handler calls, timed as waits
// but mostly CPU) or "other".
func (Dialect) WaitClass(event string) string {
	switch {
	case strings.HasPrefix(event, "wait/io/file/"):
		return "io"
	case strings.HasPrefix(event, "wait/io/socket/"):
		return "network"
	case strings.HasPrefix(event, "wait/io/table/"):
		return "table_io"
	case strings.HasPrefix(event, "wait/synch/mutex/"):
		return "mutex"
	case strings.HasPrefix(event, "wait/synch/rwlock/"), strings.HasPrefix(event, "wait/synch/sxlock/"):
		return "rwlock"
	case strings.HasPrefix(event, "wait/synch/cond/"):
		return "cond"
	case strings.HasPrefix(event, "wait/lock/"):
		return "lock"
	}
	return "other"
}
