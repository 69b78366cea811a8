package dumpload

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// pgDumpSessionSettings are the settings pg_dump writes at the top of a
// dump (and before some objects) that only set the restoring session's
// defaults, with the release that added each. A server older than the
// pg_dump that wrote the dump lacks some of them; the objects the dump
// creates do not depend on them (a dump names what it needs explicitly),
// so a SET of one the server does not have is skipped with a note.
// default_table_access_method is harmless only as heap, the one table
// access method before PostgreSQL 12.
var pgDumpSessionSettings = map[string]string{
	"transaction_timeout":                 "17",
	"default_table_access_method":         "12",
	"default_toast_compression":           "14",
	"idle_in_transaction_session_timeout": "9.6",
	"row_security":                        "9.5",
	"lock_timeout":                        "9.3",
}

// pgSetRE reads `SET [SESSION] name = value` / `SET name TO value`.
var pgSetRE = regexp.MustCompile(`(?is)^\s*SET\s+(?:SESSION\s+)?"?([a-z_][a-z0-9_$]*)"?\s*(?:=|\s+TO\s)\s*(.*?)\s*;?\s*$`)

// pgSkipSetting reports whether st, a session statement of a PostgreSQL
// dump, sets one of pgDumpSessionSettings that the server does not have:
// it is then skipped with a note (once per setting). The check reads
// pg_settings on the schema connection, once per name.
func (l *loader) pgSkipSetting(ctx context.Context, s *session, st *dump.Statement) (bool, error) {
	m := pgSetRE.FindStringSubmatch(st.SQL)
	if m == nil {
		return false, nil
	}
	name := strings.ToLower(m[1])
	since, ok := pgDumpSessionSettings[name]
	if !ok {
		return false, nil
	}
	value := strings.ToLower(strings.Trim(m[2], `'"`))
	if name == "default_table_access_method" && value != "heap" {
		return false, nil // the server's own error says more than a note could
	}
	l.mu.Lock()
	has, known := l.pgSettings[name]
	l.mu.Unlock()
	if !known {
		q, ok := s.c.(interface {
			queryRow(ctx context.Context, q string, args ...any) row
		})
		if !ok {
			return false, nil
		}
		var n int
		if err := q.queryRow(ctx, "SELECT count(*) FROM pg_catalog.pg_settings WHERE name = $1", name).Scan(&n); err != nil {
			return false, fmt.Errorf("read pg_settings: %w", err)
		}
		has = n > 0
		l.mu.Lock()
		if l.pgSettings == nil {
			l.pgSettings = map[string]bool{}
		}
		l.pgSettings[name] = has
		l.mu.Unlock()
	}
	if has {
		return false, nil
	}
	server := "this server"
	if l.t.Version != "" {
		server = "PostgreSQL " + l.t.Version
	}
	l.noteOnce("pgset:"+name, fmt.Sprintf("%s: SET %s skipped: %s has no setting %s (PostgreSQL %s added it; the dump comes from a newer pg_dump, and it only sets the session's default)",
		printable(st.Where()), name, server, name, since))
	return true, nil
}

// pgFeatures name what a statement of a newer server's dump uses that an
// older PostgreSQL lacks, for the error of a statement it refused: the
// pattern, the feature, and the release that added it.
var pgFeatures = []struct {
	re      *regexp.Regexp
	feature string
	since   string
}{
	{regexp.MustCompile(`(?is)^\s*CREATE\s+(OR\s+REPLACE\s+)?PROCEDURE\b`), "procedures (CREATE PROCEDURE)", "11"},
	{regexp.MustCompile(`(?is)\bPARTITION\s+BY\s+HASH\b`), "hash partitioning", "11"},
	{regexp.MustCompile(`(?is)\bPARTITION\s+OF\b.*\bDEFAULT\s*;?\s*$`), "default partitions", "11"},
	{regexp.MustCompile(`(?is)^\s*CREATE\s+(UNIQUE\s+)?INDEX\b.*\)\s*INCLUDE\s*\(`), "covering indexes (INCLUDE)", "11"},
	{regexp.MustCompile(`(?is)\bGENERATED\s+ALWAYS\s+AS\s*\(.*\)\s*VIRTUAL\b`), "virtual generated columns", "18"},
	{regexp.MustCompile(`(?is)\bGENERATED\s+ALWAYS\s+AS\s*\(.*\)\s*STORED\b`), "generated columns", "12"},
	{regexp.MustCompile(`(?is)\bSET\s+default_table_access_method\b|\bUSING\s+heap\b|\bCREATE\s+ACCESS\s+METHOD\b.*\bTYPE\s+TABLE\b`), "table access methods", "12"},
	{regexp.MustCompile(`(?is)\bCOMPRESSION\s+(pglz|lz4)\b`), "column compression methods", "14"},
	{regexp.MustCompile(`(?is)\bmultirange\b`), "multirange types", "14"},
	{regexp.MustCompile(`(?is)\bNULLS\s+NOT\s+DISTINCT\b`), "UNIQUE NULLS NOT DISTINCT", "15"},
	{regexp.MustCompile(`(?is)\bWITHOUT\s+OVERLAPS\b|\bPERIOD\s*\(`), "temporal constraints (WITHOUT OVERLAPS, PERIOD)", "18"},
	{regexp.MustCompile(`(?is)\bNOT\s+ENFORCED\b`), "NOT ENFORCED constraints", "18"},
	{regexp.MustCompile(`(?is)^\s*SET\s+transaction_timeout\b`), "transaction_timeout", "17"},
}

// pgFeatureHint names the feature of stmt that needs a newer PostgreSQL
// than version ("" when none is known, or the server has it).
func pgFeatureHint(stmt, version string) string {
	for _, f := range pgFeatures {
		if f.re.MatchString(stmt) {
			if version != "" && pgMajorAtLeast(version, f.since) {
				continue
			}
			server := "this server"
			if version != "" {
				server = "PostgreSQL " + version
			}
			return fmt.Sprintf("the dump uses %s, which PostgreSQL %s added: %s cannot load it; load into a newer server, or dump without it", f.feature, f.since, server)
		}
	}
	return ""
}

// pgMajorAtLeast compares a server version ("10.23", "9.6.24") with a
// release ("11", "9.6").
func pgMajorAtLeast(version, since string) bool {
	var v1, v2, s1, s2 int
	fmt.Sscanf(version, "%d.%d", &v1, &v2)
	fmt.Sscanf(since, "%d.%d", &s1, &s2)
	if v1 >= 10 {
		v2 = 0 // from 10, the major is one number
	}
	if v1 != s1 {
		return v1 > s1
	}
	return v2 >= s2
}

// pgOlderServerCode reports the SQLSTATEs an older server answers a newer
// feature with: a syntax error, an unknown object, function or setting,
// an unsupported feature.
func pgOlderServerCode(code string) bool {
	switch code {
	case "42601", "42704", "42883", "0A000", "22023":
		return true
	}
	return false
}
