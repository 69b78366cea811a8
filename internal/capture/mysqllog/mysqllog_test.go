package mysqllog

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/capture"
)

func parse(t testing.TB, f func(r *strings.Reader, in *capture.Input, emit func(*capture.Record) error) error, log string, skip bool) ([]capture.Record, *capture.Stats, error) {
	var out []capture.Record
	st := &capture.Stats{}
	err := f(strings.NewReader(log), &capture.Input{Name: "x.log", SkipBad: skip, Stats: st}, func(r *capture.Record) error {
		out = append(out, *r)
		return nil
	})
	return out, st, err
}

func general(r *strings.Reader, in *capture.Input, emit func(*capture.Record) error) error {
	return ParseGeneral(r, in, emit)
}
func slow(r *strings.Reader, in *capture.Input, emit func(*capture.Record) error) error {
	return ParseSlow(r, in, emit)
}

const mysql8General = `/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock
Time                 Id Command    Argument
2024-11-22T22:50:01.000100Z	    8 Connect	app@localhost on shop using Socket
2024-11-22T22:50:01.000200Z	    8 Query	SELECT *
FROM t
WHERE a = 'x'
2024-11-22T22:50:01.000300Z	    8 Init DB	other
2024-11-22T22:50:01.000400Z	    8 Prepare	SELECT ? + 1
2024-11-22T22:50:01.000500Z	    8 Execute	SELECT 5 + 1
2024-11-22T22:50:01.000600Z	    8 Close stmt	
2024-11-22T22:50:01.000700+01:00	    8 Ping	
2024-11-22T22:50:02Z	    8 Quit	
2024-11-22T22:50:03Z	    8 Connect	app@localhost on shop using Socket
`

func TestGeneralMySQL8(t *testing.T) {
	recs, st, err := parse(t, general, mysql8General, false)
	if err != nil {
		t.Fatal(err)
	}
	kinds := ""
	for _, r := range recs {
		kinds += r.Kind + ","
	}
	if kinds != "connect,query,query,prepare,execute,quit,connect," {
		t.Fatalf("kinds %s", kinds)
	}
	if recs[1].SQL != "SELECT *\nFROM t\nWHERE a = 'x'" || recs[1].DB != "shop" || recs[1].User != "app" {
		t.Errorf("multi-line query %+v", recs[1])
	}
	if recs[2].SQL != "USE `other`" || recs[3].DB != "other" {
		t.Errorf("init db %+v %+v", recs[2], recs[3])
	}
	if recs[1].At != 1732315801000200 {
		t.Errorf("time %d", recs[1].At)
	}
	if recs[6].Session != "8.2" || recs[5].Session != "8" {
		t.Errorf("reused thread id: %s %s", recs[5].Session, recs[6].Session)
	}
	if st.Ignored["general log Close stmt"] != 1 || st.Ignored["general log Ping"] != 1 {
		t.Errorf("ignored %v", st.Ignored)
	}
}

const mariaGeneral = `/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian). started with:
Tcp port: 0  Unix socket: /tmp/s.sock
Time		    Id Command	Argument
241122  9:05:01	     5 Connect	root@localhost on  using Socket
		     5 Query	SET PASSWORD FOR 'a'@'%' = PASSWORD('hunter2')
241122  9:05:02	     6 Query	SELECT 1
`

func TestGeneralMariaDB(t *testing.T) {
	recs, _, err := parse(t, general, mariaGeneral, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[1].At != recs[0].At || recs[2].At-recs[0].At != 1e6 || recs[2].Session != "6" {
		t.Fatalf("%+v", recs)
	}
	if recs[0].At != 1732266301*1e6 {
		t.Errorf("time %d", recs[0].At)
	}
}

func TestGeneralMalformed(t *testing.T) {
	for name, log := range map[string]string{
		"garbage first": "hello\n",
		"bad time":      "2024-13-22T22:50:01Z\t 5 Query\tSELECT 1\n",
		"password":      "SET PASSWORD = 'hunter2'\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := parse(t, general, log, false)
			if err == nil || !strings.HasPrefix(err.Error(), "x.log:1: ") || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("want x.log:1 error, got %v", err)
			}
			_, st, err := parse(t, general, log, true)
			if err != nil || st.Skipped != 1 {
				t.Fatalf("--skip-bad: %v, skipped %d", err, st.Skipped)
			}
		})
	}
}

const mysql8Slow = `/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock
Time                 Id Command    Argument
# Time: 2024-11-22T22:50:02.000000Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 1.500000  Lock_time: 0.000010 Rows_sent: 3  Rows_examined: 10
use shop;
SET timestamp=1732315800;
SELECT * FROM t;
# Time: 2024-11-22T22:50:01.000000Z
# User@Host: app[app] @ localhost []  Id:     9
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0
SET timestamp=1732315800;
UPDATE t
SET a = 1;
# Time: 2024-11-22T22:50:03.000000Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 0.000000  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0
SET timestamp=1732315803;
# administrator command: Quit;
`

func TestSlowMySQL8(t *testing.T) {
	recs, _, err := parse(t, slow, mysql8Slow, false)
	if err != nil {
		t.Fatal(err)
	}
	// connect 8, query 8, connect 9, use 9? (db shop from the last use), query 9, quit 8
	var got []string
	for _, r := range recs {
		got = append(got, r.Session+" "+r.Kind+" "+r.SQL)
	}
	want := []string{"8 connect ", "8 query SELECT * FROM t", "9 connect ", "9 query UPDATE t\nSET a = 1", "8 quit "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
	if recs[1].At != 1732315800500000 || *recs[1].DurUS != 1500000 || *recs[1].Rows != 3 || recs[1].DB != "shop" {
		t.Errorf("start = end - Query_time: %+v", recs[1])
	}
}

const mariaSlow = `# Time: 241122 22:50:01
# User@Host: app[app] @ localhost []
# Thread_id: 5  Schema: shop  QC_hit: No
# Query_time: 0.000200  Lock_time: 0.000045  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 2  Bytes_sent: 52
SET timestamp=1732315801;
DELETE FROM t WHERE a < 3;
# User@Host: app[app] @ localhost []
# Thread_id: 5  Schema: other  QC_hit: No
# Query_time: 0.000100  Lock_time: 0.000045  Rows_sent: 1  Rows_examined: 0
# Rows_affected: 0  Bytes_sent: 52
SET timestamp=1732315801;
SELECT 1;
`

func TestSlowMariaDB(t *testing.T) {
	recs, _, err := parse(t, slow, mariaSlow, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Kind+" "+r.DB+" "+r.SQL)
	}
	want := []string{"connect shop ", "query shop DELETE FROM t WHERE a < 3", "query other USE `other`", "query other SELECT 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
	if *recs[1].Rows != 2 || *recs[3].Rows != 1 || recs[3].At < recs[1].At {
		t.Errorf("rows or session order: %+v %+v", recs[1], recs[3])
	}
}

func TestSlowMalformed(t *testing.T) {
	for name, c := range map[string]struct {
		log  string
		line string
	}{
		"sql first":     {"SELECT 1;\n", "x.log:1: "},
		"bad time":      {"# Time: 2024-99-22T22:50:01Z\n", "x.log:1: "},
		"no duration":   {"# Time: 241122 22:50:01\n# User@Host: a[a] @ h []  Id: 1\nSELECT 1;\n", "x.log:2: "},
		"huge duration": {"# Time: 241122 22:50:01\n# User@Host: a[a] @ h []  Id: 1\n# Query_time: 9000000000000000000000.5\nSELECT 1;\n", "x.log:2: Query_time of "},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := parse(t, slow, c.log, false)
			if err == nil || !strings.HasPrefix(err.Error(), c.line) {
				t.Fatalf("want %s error, got %v", c.line, err)
			}
			_, st, err := parse(t, slow, c.log, true)
			if err != nil || st.Skipped == 0 {
				t.Fatalf("--skip-bad: %v, skipped %d", err, st.Skipped)
			}
		})
	}
}

func FuzzGeneral(f *testing.F) {
	f.Add(mysql8General)
	f.Add(mariaGeneral)
	f.Fuzz(func(t *testing.T, log string) {
		recs, _, err := parse(t, general, log, true)
		if err != nil {
			return
		}
		for _, r := range recs {
			if err := r.Validate(); err != nil {
				t.Fatalf("invalid record %+v: %v", r, err)
			}
		}
	})
}

func FuzzSlow(f *testing.F) {
	f.Add(mysql8Slow)
	f.Add(mariaSlow)
	f.Fuzz(func(t *testing.T, log string) {
		recs, _, err := parse(t, slow, log, true)
		if err != nil {
			return
		}
		for _, r := range recs {
			if err := r.Validate(); err != nil {
				t.Fatalf("invalid record %+v: %v", r, err)
			}
		}
	})
}

// TestCutOffLastLine: a log whose last line has no newline (cut off while
// written) loses its last entry with a warning naming file:line; the cut
// text is never glued to the statement before (issue 33, item 13).
func TestCutOffLastLine(t *testing.T) {
	for name, c := range map[string]struct {
		f    func(*strings.Reader, *capture.Input, func(*capture.Record) error) error
		log  string
		want []string // the statements kept
		line string
	}{
		"general new entry": {general, "2024-11-22T22:50:01.000100Z\t    8 Query\tSELECT 1\n2024-11-22T22:50:01.000200Z\t    8 Query\tSELECT 2 FROM t WH",
			[]string{"SELECT 1"}, "x.log:2: "},
		"general continuation": {general, "2024-11-22T22:50:01.000100Z\t    8 Query\tSELECT 1\n2024-11-22T22:50:01.000200Z\t    8 Query\tSELECT 2\nFROM t WH",
			[]string{"SELECT 1"}, "x.log:3: "},
		"general whole": {general, "2024-11-22T22:50:01.000100Z\t    8 Query\tSELECT 1\n", []string{"SELECT 1"}, ""},
		"slow statement": {slow, "# Time: 2024-11-22T22:50:01.000100Z\n# User@Host: a[a] @ h []  Id: 1\n# Query_time: 1\nSELECT 1;\n" +
			"# Time: 2024-11-22T22:50:02.000100Z\n# User@Host: a[a] @ h []  Id: 1\n# Query_time: 1\nSELECT 2\nFROM t WH",
			[]string{"SELECT 1"}, "x.log:9: "},
		"slow header": {slow, "# Time: 2024-11-22T22:50:01.000100Z\n# User@Host: a[a] @ h []  Id: 1\n# Query_time: 1\nSELECT 1;\n" +
			"# Time: 2024-11-22T22:50:02.000100Z\n# User@Host: a[a] @ h []  Id: 1\n# Query_ti",
			[]string{"SELECT 1"}, "x.log:7: "},
	} {
		t.Run(name, func(t *testing.T) {
			recs, st, err := parse(t, c.f, c.log, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				if r.Kind == capture.KindQuery {
					got = append(got, r.SQL)
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("statements %q, want %q", got, c.want)
			}
			if c.line == "" {
				if len(st.Warnings) != 0 {
					t.Errorf("warnings %q for a whole log", st.Warnings)
				}
				return
			}
			if len(st.Warnings) != 1 || !strings.HasPrefix(st.Warnings[0], c.line) || !strings.Contains(st.Warnings[0], "cut off") {
				t.Errorf("warnings %q, want one at %s", st.Warnings, c.line)
			}
		})
	}
}
