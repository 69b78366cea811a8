package mysqllog

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
)

var update = flag.Bool("update", false, "rewrite testdata/logs/*.want from the parsers' output")

// TestLogQuirks converts each testdata/logs/*.log (one file per quirk of a
// server version: MySQL 5.0/5.1 general logs padded with spaces, entries
// without a timestamp, slow logs without Id, "# Time" and "# User@Host" on
// one line, no "# Time", Windows banners, "# Client:", Percona's empty
// Schema, MySQL 5.7 ISO times, administrator commands, a cut-off file, a
// MariaDB general log of SQL-level PREPARE/EXECUTE) and compares every
// record, warning and ignored entry with X.want (reviewed by hand; -update
// rewrites them).
func TestLogQuirks(t *testing.T) {
	files, _ := filepath.Glob("testdata/logs/*.log")
	if len(files) < 20 {
		t.Fatalf("%d quirk files", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			got := describe(t, f)
			want := strings.TrimSuffix(f, ".log") + ".want"
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(w) {
				t.Errorf("%s: got\n%s\nwant\n%s", f, got, w)
			}
		})
	}
}

// describe converts file f (general or slow by its name) with default
// options and lists what came out.
func describe(t *testing.T, f string) string {
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	fn := general
	if strings.HasPrefix(filepath.Base(f), "slow-") {
		fn = slow
	}
	recs, st, err := parse(t, fn, string(b), false)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	var out strings.Builder
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			t.Errorf("invalid record %+v: %v", r, err)
		}
		fmt.Fprintf(&out, "line %d: %s %s at=%d db=%q user=%q", r.Line, r.Session, r.Kind, r.At, r.DB, r.User)
		if r.DurUS != nil {
			fmt.Fprintf(&out, " dur=%d rows=%d", *r.DurUS, *r.Rows)
		}
		if r.SQL != "" {
			fmt.Fprintf(&out, " sql=%q", r.SQL)
		}
		out.WriteByte('\n')
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(&out, "warning: %s\n", w)
	}
	var ig []string
	for k, n := range st.Ignored {
		ig = append(ig, fmt.Sprintf("ignored: %s: %d\n", k, n))
	}
	sort.Strings(ig)
	out.WriteString(strings.Join(ig, ""))
	return out.String()
}

// TestSlowNoIDSkipBad: a stock MySQL 5.1 slow log (no Id) with one corrupt
// entry converts with --skip-bad to the other statements (it yielded none).
func TestSlowNoIDSkipBad(t *testing.T) {
	log := "# Time: 090127  1:23:34\n# User@Host: a[a] @ h []\n# Query_time: 1  Lock_time: 0 Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n" +
		"# Time: 0901x7  1:23:35\n# User@Host: a[a] @ h []\n# Lock_time: 0 Rows_sent: 0  Rows_examined: 0\nSELECT 2;\n" +
		"# User@Host: b[b] @ h []\n# Query_time: 0  Lock_time: 0 Rows_sent: 0  Rows_examined: 0\nSELECT 3;\n"
	if _, _, err := parse(t, slow, log, false); err == nil || !strings.HasPrefix(err.Error(), "x.log:5: bad slow log time") {
		t.Fatalf("want x.log:5 error, got %v", err)
	}
	recs, st, err := parse(t, slow, log, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if r.Kind == capture.KindQuery {
			got = append(got, r.Session+" "+r.SQL)
		}
	}
	if strings.Join(got, "|") != "a@h SELECT 1|b@h SELECT 3" || st.Skipped != 2 {
		t.Fatalf("got %q, skipped %d", got, st.Skipped)
	}
}

// TestGeneralHeldExecute: a SQL-level EXECUTE with no Execute line after it
// (it failed) is kept, also as a session's last entry of the log, before a
// reconnect of its thread id, and from mysql.general_log rows (End).
func TestGeneralHeldExecute(t *testing.T) {
	log := "241122  9:05:01\t 5 Query\tEXECUTE nosuch\n\t 6 Query\tEXECUTE s USING 1\n\t 6 Execute\tSELECT 1\n" +
		"\t 6 Query\tEXECUTE s USING 2\n\t 7 Query\tEXECUTE IMMEDIATE 'SELEC 1'\n\t 7 Connect\tu@h on d using TCP/IP\n"
	recs, st, err := parse(t, general, log, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Session+" "+r.Kind+" "+r.SQL)
	}
	want := "6 execute SELECT 1|7 query EXECUTE IMMEDIATE 'SELEC 1'|7.2 connect |5 query EXECUTE nosuch|6 query EXECUTE s USING 2"
	if strings.Join(got, "|") != want || st.Ignored["general log SQL-level EXECUTE query (its Execute line is kept)"] != 1 {
		t.Fatalf("got %q, ignored %v", got, st.Ignored)
	}
	var rows []capture.Record
	g := NewGeneral(&capture.Input{Name: "table"}, func(r *capture.Record) error { rows = append(rows, *r); return nil })
	if err := g.Entry(1, "9", "Query", "EXECUTE s"); err != nil || len(rows) != 0 {
		t.Fatalf("held: %v %v", err, rows)
	}
	if err := g.End(); err != nil || len(rows) != 1 || rows[0].SQL != "EXECUTE s" {
		t.Fatalf("End: %v %+v", err, rows)
	}
}
