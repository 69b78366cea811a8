package dumpload

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

// TestMySQLFeatureHint: each feature a MySQL 5.5 server refuses is named
// with the release that added it, for the error code the server answers
// it with; a server that has it, or another error, gets no hint.
func TestMySQLFeatureHint(t *testing.T) {
	my, maria := target.FlavorMySQL, target.FlavorMariaDB
	cases := []struct {
		stmt, code string
		flavor     target.Flavor
		version    string
		want       string // "" for no hint
	}{
		{"CREATE TABLE ft (id INT, t TEXT, FULLTEXT KEY f (t)) ENGINE=InnoDB", "1214", my, "5.5.9", "FULLTEXT indexes on InnoDB tables, which MySQL 5.6.4 added: MySQL 5.5.9 cannot load it"},
		{"CREATE TABLE ft (id INT, t TEXT, FULLTEXT KEY f (t)) ENGINE=InnoDB", "1214", maria, "5.5.68", "FULLTEXT indexes on InnoDB tables, which MariaDB 10.0.5 added: MariaDB 5.5.68 cannot load it"},
		{"CREATE TABLE sp (g GEOMETRY NOT NULL, SPATIAL KEY s (g)) ENGINE=InnoDB", "1464", my, "5.5.9", "SPATIAL indexes on InnoDB tables, which MySQL 5.7.5 added"},
		{"CREATE TABLE dt (id INT, d DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP)", "1067", my, "5.5.9", "DEFAULT or ON UPDATE CURRENT_TIMESTAMP on DATETIME columns, which MySQL 5.6.5 added"},
		{"CREATE TABLE dt (id INT, d DATETIME NULL ON UPDATE CURRENT_TIMESTAMP)", "1294", my, "5.5.9", "on DATETIME columns, which MySQL 5.6.5 added"},
		{"CREATE TABLE ts (a TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,\n b TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)", "1293", my, "5.5.9", "more than one TIMESTAMP column with CURRENT_TIMESTAMP, which MySQL 5.6.5 added"},
		{"CREATE TABLE fs (id INT, d DATETIME(6))", "1064", my, "5.5.9", "fractional seconds (DATETIME(n), TIMESTAMP(n), TIME(n)), which MySQL 5.6.4 added"},
		{"CREATE TABLE gc (a INT, b INT GENERATED ALWAYS AS (a*2) VIRTUAL)", "1064", my, "5.5.9", "generated columns, which MySQL 5.7.6 added"},
		{"CREATE TABLE gc (a INT, b INT AS (a*2) PERSISTENT)", "1064", my, "5.5.9", "generated columns, which MySQL 5.7.6 added"},
		{"CREATE TABLE js (id INT, `j` JSON NOT NULL)", "1064", my, "5.5.9", "the JSON column type, which MySQL 5.7.8 added"},
		{"CREATE TABLE p (id INT, g POINT NOT NULL SRID 4326)", "1064", my, "5.7.30", "SRID column attributes, which MySQL 8.0.3 added: MySQL 5.7.30 cannot"},
		{"CREATE TABLE i (a INT, KEY ka (a) INVISIBLE)", "1064", my, "5.5.9", "invisible indexes or columns, which MySQL 8.0.0 added"},
		{"CREATE TABLE d (v INT DEFAULT (1+1))", "1064", my, "5.5.9", "expressions as column defaults (DEFAULT (expr)), which MySQL 8.0.13 added"},
		{"CREATE OR REPLACE TABLE c (id INT)", "1064", my, "5.5.9", "CREATE OR REPLACE TABLE, which only MariaDB has (from 10.0.8): MySQL 5.5.9 cannot load it"},
		{"CREATE SEQUENCE s START WITH 1", "1064", my, "5.5.9", "sequences (CREATE SEQUENCE), which only MariaDB has (from 10.3.1)"},
		{"CREATE TABLE u (id INT, u UUID)", "1064", my, "5.5.9", "the UUID, INET6 and INET4 column types, which only MariaDB has (from 10.7.1)"},
		{"CREATE TABLE c (v TEXT) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci", "1273", my, "5.5.9", "the utf8mb4_0900 collations, which MySQL 8.0.1 added"},
		{"CREATE TABLE c (v TEXT) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_uca1400_ai_ci", "1273", my, "5.5.9", "the UCA 14.0 (uca1400) collations, which only MariaDB has (from 10.10.1)"},
		{"CREATE TABLE c (v TEXT) DEFAULT CHARSET=utf8mb4", "1115", my, "5.5.2", "the utf8mb4 character set, which MySQL 5.5.3 added: MySQL 5.5.2 cannot"},
		{"CREATE TABLE c (v TEXT) DEFAULT CHARSET=utf8mb3", "1115", my, "5.5.2", "the utf8mb3 character set name, which MySQL 5.5.3 added"},
		// the server has the feature: its own error says more
		{"CREATE TABLE c (v TEXT) DEFAULT CHARSET=utf8mb4", "1115", my, "5.5.9", ""},
		{"CREATE TABLE ft (t TEXT, FULLTEXT KEY f (t)) ENGINE=InnoDB", "1214", my, "5.6.10", ""},
		{"CREATE TABLE fs (d DATETIME(6))", "1064", maria, "10.11.6-MariaDB", ""},
		// another error
		{"CREATE TABLE fs (d DATETIME(6))", "1050", my, "5.5.9", ""},
		{"CREATE TABLE x (a INT", "1064", my, "5.5.9", ""},
	}
	for _, c := range cases {
		got := mysqlFeatureHint(c.stmt, c.code, c.flavor, c.version)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("mysqlFeatureHint(%q, %s, %s %s)\n = %q\nwant %q", c.stmt, c.code, c.flavor, c.version, got, c.want)
		}
	}
	// every feature is covered above
	for _, f := range mysqlFeatures {
		seen := false
		for _, c := range cases {
			if c.want != "" && strings.Contains(c.want, f.feature) {
				seen = true
			}
		}
		if !seen {
			t.Errorf("feature %q has no case", f.feature)
		}
	}
}
