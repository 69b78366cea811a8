package dialect

import (
	"database/sql/driver"
	"fmt"
	"io"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestClassify(t *testing.T) {
	my, pg := MySQLDialect{}, PostgresDialect{}
	tests := []struct {
		name string
		d    Dialect
		err  error
		want Class
	}{
		{"mysql deadlock", my, fmt.Errorf("wrapped: %w", &mysql.MySQLError{Number: 1213}), Class{Kind: Retry, Code: "1213"}},
		{"mysql lock wait", my, &mysql.MySQLError{Number: 1205}, Class{Kind: Retry, Code: "1205"}},
		{"mysql duplicate", my, &mysql.MySQLError{Number: 1062}, Class{Kind: Fatal, Code: "1062"}},
		{"mysql gone away", my, &mysql.MySQLError{Number: 2006}, Class{Kind: ConnLost, Code: "2006"}},
		{"mysql bad conn", my, driver.ErrBadConn, Class{Kind: ConnLost, Code: "conn"}},
		{"mysql invalid conn", my, mysql.ErrInvalidConn, Class{Kind: ConnLost, Code: "conn"}},
		{"mysql eof", my, io.ErrUnexpectedEOF, Class{Kind: ConnLost, Code: "conn"}},
		{"pg deadlock", pg, &pgconn.PgError{Code: "40P01"}, Class{Kind: Retry, Code: "40P01"}},
		{"pg serialization", pg, &pgconn.PgError{Code: "40001"}, Class{Kind: Retry, Code: "40001"}},
		{"pg admin shutdown", pg, &pgconn.PgError{Code: "57P01"}, Class{Kind: ConnLost, Code: "57P01"}},
		{"pg unique", pg, &pgconn.PgError{Code: "23505"}, Class{Kind: Retry, Code: "23505"}},
		{"pg undefined table", pg, &pgconn.PgError{Code: "42P01"}, Class{Kind: Fatal, Code: "42P01"}},
		{"pg bad conn", pg, driver.ErrBadConn, Class{Kind: ConnLost, Code: "conn"}},
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
