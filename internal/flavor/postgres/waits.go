package postgres

// SessionWaitsQuery returns the query the wait profile samples many times
// a second (package monitor, SessionWaitSource): one row per client
// backend connected to the database named by $1, other than the querying
// one, with its state, wait_event_type and wait_event ("" when the
// backend waits for nothing: on CPU when active). Backends idle for more
// than a second are left out: spare connections of a pool, not sessions
// between two transactions of the run.
func (Dialect) SessionWaitsQuery() string {
	return `SELECT COALESCE(state, ''), COALESCE(wait_event_type, ''), COALESCE(wait_event, '')
		FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'
			AND (state <> 'idle' OR state_change > now() - interval '1 second')`
}
