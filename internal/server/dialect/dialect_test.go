package dialect

import (
	"database/sql/driver"
	"fmt"
	"io"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbarena/dbarena/internal/server/target"
)

func TestClassify(t *testing.T) {
	my, pg := MySQLDialect{}, PostgresDialect{}
	tests := []struct {
		name string
		d    Dialect
		err  error
		want Class
	}{
		{"mysql deadlock", my, fmt.Errorf("wrapped: %w", &mysql.MySQLError{Number: 1213}), Class{Retry, "1213"}},
		{"mysql lock wait", my, &mysql.MySQLError{Number: 1205}, Class{Retry, "1205"}},
		{"mysql duplicate", my, &mysql.MySQLError{Number: 1062}, Class{Fatal, "1062"}},
		{"mysql gone away", my, &mysql.MySQLError{Number: 2006}, Class{ConnLost, "2006"}},
		{"mysql bad conn", my, driver.ErrBadConn, Class{ConnLost, "conn"}},
		{"mysql invalid conn", my, mysql.ErrInvalidConn, Class{ConnLost, "conn"}},
		{"mysql eof", my, io.ErrUnexpectedEOF, Class{ConnLost, "conn"}},
		{"pg deadlock", pg, &pgconn.PgError{Code: "40P01"}, Class{Retry, "40P01"}},
		{"pg serialization", pg, &pgconn.PgError{Code: "40001"}, Class{Retry, "40001"}},
		{"pg admin shutdown", pg, &pgconn.PgError{Code: "57P01"}, Class{ConnLost, "57P01"}},
		{"pg unique", pg, &pgconn.PgError{Code: "23505"}, Class{Retry, "23505"}},
		{"pg undefined table", pg, &pgconn.PgError{Code: "42P01"}, Class{Fatal, "42P01"}},
		{"pg bad conn", pg, driver.ErrBadConn, Class{ConnLost, "conn"}},
		{"nil", pg, nil, Class{Kind: None}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.Classify(tt.err); got != tt.want {
				t.Fatalf("Classify(%v) = %+v, want %+v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRebind(t *testing.T) {
	got := PostgresDialect{}.Rebind("SELECT c FROM t WHERE id BETWEEN ? AND ? AND c <> '?'")
	want := "SELECT c FROM t WHERE id BETWEEN $1 AND $2 AND c <> '?'"
	if got != want {
		t.Fatalf("Rebind = %q, want %q", got, want)
	}
	if q := (MySQLDialect{}).Rebind("a=?"); q != "a=?" {
		t.Fatalf("MySQL Rebind changed the query: %q", q)
	}
}

func TestQuoteIdent(t *testing.T) {
	if got := (MySQLDialect{}).QuoteIdent("a`b"); got != "`a``b`" {
		t.Fatal(got)
	}
	if got := (PostgresDialect{}).QuoteIdent(`a"b`); got != `"a""b"` {
		t.Fatal(got)
	}
}

func TestMySQLFlavor(t *testing.T) {
	tests := []struct {
		version, comment string
		want             target.Flavor
	}{
		{"10.11.6-MariaDB-0+deb12u1", "Debian 12", target.FlavorMariaDB},
		{"8.0.36", "MySQL Community Server - GPL", target.FlavorMySQL},
		{"8.0.35-27", "Percona Server (GPL), Release 27, Revision 2f8eeab2", target.FlavorPercona},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if got := mysqlFlavor(tt.version, tt.comment); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}
