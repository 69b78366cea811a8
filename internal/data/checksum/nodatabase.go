package checksum

import (
	"fmt"
	"strings"
)

// NoDatabase tells whether a connection failed because its database does
// not exist or the account may not use it: PostgreSQL 3D000 (no such
// database) and 42501 (no CONNECT privilege), MySQL 1049 (unknown
// database) and 1044 (access denied to the database).
func NoDatabase(err error) bool {
	m := err.Error()
	for _, code := range []string{"SQLSTATE 3D000", "SQLSTATE 42501", "Error 1049 ", "Error 1049:", "Error 1044 ", "Error 1044:"} {
		if strings.Contains(m, code) {
			return true
		}
	}
	return false
}

// NoDatabaseMessage is the one-line error of `dbarena checksum`
// on a database that does not exist or cannot be read: flag is the
// --database value ("" when the target's own database was meant), dflt
// the target's database, dsn the masked target.
func NoDatabaseMessage(flag, dflt, dsn string, err error) string {
	name, what := flag, "--database "+flag
	if flag == "" {
		name, what = dflt, "the target's database"
	}
	if name == "" {
		return fmt.Sprintf("no database selected on %s: give --database", dsn)
	}
	reason := "it does not exist, or this account cannot read it"
	if m := err.Error(); strings.Contains(m, "SQLSTATE 3D000") || strings.Contains(m, "Error 1049") {
		reason = "it does not exist"
	}
	return fmt.Sprintf("%s: no database %q on %s (%s)", what, name, dsn, reason)
}
