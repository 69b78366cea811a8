package dialect

import "github.com/dbarena/dbarena/internal/server/target"

// WireSupported reports whether t can be reached through d's lean wire
// client (MySQLDialect's or PostgresDialect's WireSupported); false for
// any other dialect.
func WireSupported(d Dialect, t target.Target) bool {
	switch d := d.(type) {
	case MySQLDialect:
		return d.WireSupported(t)
	case PostgresDialect:
		return d.WireSupported(t)
	}
	return false
}
