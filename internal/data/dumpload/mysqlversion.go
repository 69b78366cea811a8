package dumpload

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/target"
)

// mysqlFeatures name what a statement of a newer server's dump uses that
// an older MySQL-family server lacks, for the error of a statement it
// refused (the MySQL counterpart of pgFeatures): the pattern, the error
// codes the older server answers it with, the feature, and the first
// MySQL and MariaDB releases that have it ("" when none does).
var mysqlFeatures = []struct {
	re      *regexp.Regexp
	codes   []string
	feature string
	mysql   string
	mariadb string
}{
	{regexp.MustCompile(`(?is)\bFULLTEXT\b`), []string{"1214"}, "FULLTEXT indexes on InnoDB tables", "5.6.4", "10.0.5"},
	{regexp.MustCompile(`(?is)\bSPATIAL\b`), []string{"1464"}, "SPATIAL indexes on InnoDB tables", "5.7.5", "10.2.2"},
	{regexp.MustCompile(`(?is)\bDATETIME\b(\s*\(\s*\d\s*\))?[^,]*\b(DEFAULT|ON\s+UPDATE)\s+(CURRENT_TIMESTAMP|NOW|LOCALTIME(STAMP)?)\b`), []string{"1067", "1294"},
		"DEFAULT or ON UPDATE CURRENT_TIMESTAMP on DATETIME columns", "5.6.5", "10.0.1"},
	{regexp.MustCompile(`(?is)\bTIMESTAMP\b[^,]*\bCURRENT_TIMESTAMP\b.*,.*\bTIMESTAMP\b[^,]*\bCURRENT_TIMESTAMP\b`), []string{"1293"},
		"more than one TIMESTAMP column with CURRENT_TIMESTAMP", "5.6.5", "10.0.1"},
	{regexp.MustCompile(`(?is)\b(DATETIME|TIMESTAMP|TIME|CURRENT_TIMESTAMP|NOW)\s*\(\s*[1-6]\s*\)`), []string{"1064"}, "fractional seconds (DATETIME(n), TIMESTAMP(n), TIME(n))", "5.6.4", "5.3"},
	{regexp.MustCompile(`(?is)\bGENERATED\s+ALWAYS\s+AS\b|\bAS\s*\(.*\)\s*(VIRTUAL|STORED|PERSISTENT)\b`), []string{"1064"}, "generated columns", "5.7.6", "5.2"},
	{regexp.MustCompile("(?is)^\\s*CREATE\\s+.*\\bTABLE\\b.*[\\w`]\\s+JSON\\b"), []string{"1064"}, "the JSON column type", "5.7.8", "10.2.7"},
	{regexp.MustCompile(`(?is)\bSRID\s+\d`), []string{"1064"}, "SRID column attributes", "8.0.3", ""},
	{regexp.MustCompile(`(?is)\bINVISIBLE\b`), []string{"1064"}, "invisible indexes or columns", "8.0.0", "10.3.3"},
	{regexp.MustCompile(`(?is)\bDEFAULT\s*\(`), []string{"1064"}, "expressions as column defaults (DEFAULT (expr))", "8.0.13", "10.2.1"},
	{regexp.MustCompile(`(?is)^\s*CREATE\s+OR\s+REPLACE\s+(TEMPORARY\s+)?TABLE\b`), []string{"1064"}, "CREATE OR REPLACE TABLE", "", "10.0.8"},
	{regexp.MustCompile(`(?is)^\s*CREATE\s+(OR\s+REPLACE\s+)?(TEMPORARY\s+)?SEQUENCE\b`), []string{"1064"}, "sequences (CREATE SEQUENCE)", "", "10.3.1"},
	{regexp.MustCompile("(?is)[\\w`]\\s+(UUID|INET6|INET4)\\b"), []string{"1064"}, "the UUID, INET6 and INET4 column types", "", "10.7.1"},
	{regexp.MustCompile(`(?is)\butf8mb4_0900_\w+`), []string{"1273"}, "the utf8mb4_0900 collations", "8.0.1", "11.4.5"},
	{regexp.MustCompile(`(?is)\b\w+_uca1400_\w+`), []string{"1273"}, "the UCA 14.0 (uca1400) collations", "", "10.10.1"},
	{regexp.MustCompile(`(?is)\butf8mb4\b`), []string{"1115", "1273"}, "the utf8mb4 character set", "5.5.3", "5.5.20"},
	{regexp.MustCompile(`(?is)\butf8mb3\b`), []string{"1115", "1273"}, "the utf8mb3 character set name", "5.5.3", "5.5.20"},
}

// mysqlFeatureHint names the feature of stmt that the server (flavor,
// version) refused with code as one a newer release added ("" when none
// is known, or the server has it).
func mysqlFeatureHint(stmt, code string, flavor target.Flavor, version string) string {
	product := "MySQL"
	if flavor == target.FlavorMariaDB {
		product = "MariaDB"
	}
	for _, f := range mysqlFeatures {
		if !slices.Contains(f.codes, code) || !f.re.MatchString(stmt) {
			continue
		}
		since := f.mysql
		if product == "MariaDB" {
			since = f.mariadb
		}
		if since != "" && version != "" && target.CompareVersions(version, since) >= 0 {
			continue
		}
		server := "this server"
		if version != "" {
			server = product + " " + version
		}
		added, remedy := product+" "+since+" added", "load into a newer server"
		if since == "" {
			other, otherSince := "MariaDB", f.mariadb
			if product == "MariaDB" {
				other, otherSince = "MySQL", f.mysql
			}
			added = fmt.Sprintf("only %s has (from %s)", other, otherSince)
			remedy = "load into " + other + " " + otherSince + " or newer"
		}
		return fmt.Sprintf("the dump uses %s, which %s: %s cannot load it; %s, or dump without it", f.feature, added, server, remedy)
	}
	return ""
}

// refusedCreate records a refused CREATE TABLE (MySQL family) and, for a
// later statement on that table that fails because it does not exist
// (1146), returns the text that says where its creation was refused.
func (l *loader) refusedCreate(st *dump.Statement, code string) string {
	if st.Table == "" {
		return ""
	}
	_, name := dump.SplitQualified(st.Table)
	if st.Creates {
		l.refusedCreates.LoadOrStore(name, printable(st.Where()))
		return ""
	}
	if code != "1146" {
		return ""
	}
	if where, ok := l.refusedCreates.Load(name); ok {
		return fmt.Sprintf(" (its CREATE TABLE at %s was refused)", where)
	}
	return ""
}
