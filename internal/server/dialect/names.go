package dialect

import (
	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/flavor/mysql"
	"github.com/dbarena/dbarena/internal/flavor/postgres"
	"github.com/dbarena/dbarena/internal/server/target"
)

// The names below are package flavor's (and its flavors'), kept here so
// that the packages that ask the registry for a dialect find the types
// they use in the same place.

// Dialect is one flavor's SQL and driver behaviour (flavor.Dialect).
type Dialect = flavor.Dialect

// Kind, Class, OpenOptions and Counters are flavor's.
type (
	Kind        = flavor.Kind
	Class       = flavor.Class
	OpenOptions = flavor.OpenOptions
	Counters    = flavor.Counters
)

// Error kinds (flavor.Kind).
const (
	None     = flavor.None
	Retry    = flavor.Retry
	ConnLost = flavor.ConnLost
	Fatal    = flavor.Fatal
)

// Bulk loading and socket tracking (package flavor).
type (
	BulkTable = flavor.BulkTable
	Rows      = flavor.Rows
	RowSink   = flavor.RowSink
	Sockets   = flavor.Sockets
)

// NewRows, NewRowSink and NewSockets are flavor's.
var (
	NewRows    = flavor.NewRows
	NewRowSink = flavor.NewRowSink
	NewSockets = flavor.NewSockets
)

// MySQLDialect and PostgresDialect are the two families' flavors.
type (
	MySQLDialect    = mysql.Dialect
	PostgresDialect = postgres.Dialect
)

// MySQL DSN parameters that configure TLS (package mysql).
const (
	ParamTLS     = mysql.ParamTLS
	ParamTLSCA   = mysql.ParamTLSCA
	ParamTLSCert = mysql.ParamTLSCert
	ParamTLSKey  = mysql.ParamTLSKey
)

// MySQLTLS is mysql.TLS.
var MySQLTLS = mysql.TLS

// WireSupported reports whether t can be reached through d's lean wire
// client; false for a nil dialect.
func WireSupported(d Dialect, t target.Target) bool { return d != nil && d.WireSupported(t) }

// RefusesLocalFiles reports whether err is a MySQL-family server's refusal
// of LOAD DATA LOCAL INFILE (mysql.Dialect.RefusesBulk).
func RefusesLocalFiles(err error) bool { return mysql.Dialect{}.RefusesBulk(err) }
