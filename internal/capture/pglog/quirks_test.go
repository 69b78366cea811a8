package pglog

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
)

// Issue 34 item 9: PostgreSQL logs as servers write them for pgBadger,
// one small file per quirk.

// byLine sorts records in log order (each session's last one is emitted
// at its next message or at the end).
func byLine(recs []capture.Record) {
	slices.SortFunc(recs, func(a, b capture.Record) int { return cmp.Compare(a.Line, b.Line) })
}

// A statement log (log_min_duration_statement=0, no log_connections)
// with pgBadger's prefix: sessions are the lines' %p.
const statementLogPid = `2017-09-06 08:40:10 UTC [20]: [1-1] user=,db=,app=,client= LOG:  database system was shut down at 2017-09-06 08:40:08 UTC
2017-09-06 08:41:41 UTC [36]: [121-1] user=postgres,db=bench,app=pgbench,client=172.23.0.1 LOG:  duration: 2.280 ms  statement: BEGIN;
2017-09-06 08:41:41 UTC [37]: [122-1] user=app,db=shop,app=psql,client=[local] LOG:  duration: 0.168 ms  statement: SELECT 1;
2017-09-06 08:41:42 UTC [36]: [123-1] user=postgres,db=bench,app=pgbench,client=172.23.0.1 LOG:  duration: 0.100 ms  statement: END;
`

// The same with %c (Debian-like) in a csvlog of PostgreSQL 15, no
// connection lines.
const statementLogCSV = `2024-11-22 22:50:01.200 UTC,"app","shop",100,"[local]",6740f1a1.64,3,"idle",2024-11-22 22:50:01 UTC,3/2,0,LOG,00000,"duration: 1.000 ms  statement: SELECT 1",,,,,,,,,"psql",client backend,,0
2024-11-22 22:50:01.300 UTC,"app","shop",101,"[local]",6740f1a1.65,3,"idle",2024-11-22 22:50:01 UTC,3/2,0,LOG,00000,"duration: 1.000 ms  statement: SELECT 2",,,,,,,,,"psql",client backend,,0
`

func TestStatementLogWithoutConnections(t *testing.T) {
	for name, c := range map[string]struct {
		f        func(*strings.Reader, *capture.Input, func(*capture.Record) error) error
		log      string
		sessions []string
		warn     string
	}{
		"stderr %p, detected prefix": {stderrParse(""), statementLogPid, []string{"36", "37", "36"}, "process ids"},
		"csvlog":                     {csvParse, statementLogCSV, []string{"6740f1a1.64", "6740f1a1.65"}, "session ids"},
	} {
		t.Run(name, func(t *testing.T) {
			recs, st, err := run(t, c.f, c.log, false)
			if err != nil {
				t.Fatal(err)
			}
			byLine(recs)
			var got []string
			for _, r := range recs {
				if r.Kind != capture.KindQuery || r.DurUS == nil {
					t.Errorf("record %+v", r)
				}
				got = append(got, r.Session)
			}
			if strings.Join(got, ",") != strings.Join(c.sessions, ",") {
				t.Errorf("sessions %v, want %v", got, c.sessions)
			}
			if recs[0].DB == "" || recs[0].User == "" {
				t.Errorf("user and db from the prefix: %+v", recs[0])
			}
			if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], c.warn) {
				t.Errorf("warnings %q", st.Warnings)
			}
		})
	}
	// --pg-sessions connections keeps the old check; line warns of nothing.
	if _, _, err := run(t, stderrParseWith(StderrOptions{Sessions: SessionsConnections}), statementLogPid, false); err == nil || !strings.Contains(err.Error(), "log_connections=on") {
		t.Errorf("connections mode: %v", err)
	}
	if _, st, err := run(t, stderrParseWith(StderrOptions{Sessions: SessionsLine}), statementLogPid, false); err != nil || len(st.Warnings) != 0 {
		t.Errorf("line mode: %v %q", err, st.Warnings)
	}
}

// Prefixes the common list lacks are read off the lines.
func TestDetectPrefixInferred(t *testing.T) {
	for want, line := range map[string]string{
		"%t:%r:%u@%d:[%p]:":                           "2021-05-27 17:00:00 UTC:10.1.91.65:user@my_db:[24743]:LOG:  statement: SELECT 1\n2020-03-11 20:40:43 UTC::@:[12760]:LOG:  checkpoint starting: time\n",
		"%m [%p] user=%u,db=%d ":                      "2021-12-03 07:14:48.591 UTC [4913] user=user1,db=mydb LOG:  duration: 0.032 ms  statement: BEGIN WORK\n",
		"%t [%p]: [%l-1] [%x] usr=%u,db=%d,appli=%a ": "2023-03-07 09:06:08 CET [130096]: [247-1] [0] usr=usr6,db=progdb,appli=76ae LOG:  statement: SELECT 1\n",
		"%m [%p] [queryid=%Q] %u@%d ":                 "2022-02-17 14:45:10.440 UTC [691] [queryid=1081270519976314062] postgres@stackoverflow LOG:  statement: SELECT 1\n",
	} {
		p, err := DetectPrefix([]byte(line))
		if err != nil || p.String() != want {
			t.Errorf("%q: got %v %v, want %q", line, p, err, want)
		}
	}
	// One space after the severity (as some hand-edited logs have).
	recs, _, err := run(t, stderrParse(""), "2021-05-27 17:00:00 UTC:10.1.91.65:user@my_db:[24743]:LOG: duration: 0.054 ms statement: SELECT * FROM t1;\n", false)
	if err != nil || len(recs) != 1 || recs[0].SQL != "SELECT * FROM t1;" || recs[0].User != "user" || recs[0].DB != "my_db" {
		t.Fatalf("%+v %v", recs, err)
	}
}

// Zone abbreviations: PostgreSQL's default set, or --time-zone's own.
func TestZoneAbbreviations(t *testing.T) {
	moscow, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Skip("no zone database")
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	for _, c := range []struct {
		in   string
		loc  *time.Location
		want string // UTC
	}{
		{"2019-10-21 12:03:31.311 MSK", nil, "2019-10-21T09:03:31Z"},
		{"2014-04-01 11:13:21 CEST", nil, "2014-04-01T09:13:21Z"},
		{"2014-01-01 11:13:21 CET", nil, "2014-01-01T10:13:21Z"},
		{"2020-01-01 10:00:00 EST", nil, "2020-01-01T15:00:00Z"},
		{"2020-07-01 10:00:00 EDT", nil, "2020-07-01T14:00:00Z"},
		{"2020-07-01 10:00:00 +0530", nil, "2020-07-01T04:30:00Z"},
		{"2012-07-01 10:00:00 MSK", moscow, "2012-07-01T06:00:00Z"}, // MSK was +4 then
		// The hour that exists twice when summer time ends.
		{"2021-10-31 02:30:00 CEST", paris, "2021-10-31T00:30:00Z"},
		{"2021-10-31 02:30:00 CET", paris, "2021-10-31T01:30:00Z"},
	} {
		var ts timeCache
		loc := c.loc
		if loc == nil {
			loc = time.UTC
		}
		us, n, ok := ts.parse([]byte(c.in+" rest"), loc)
		got := time.UnixMicro(us).UTC().Truncate(time.Second).Format(time.RFC3339)
		if !ok || n != len(c.in) || got != c.want {
			t.Errorf("%s in %v: %s (used %d, ok %v), want %s", c.in, loc, got, n, ok, c.want)
		}
	}
	// An unknown abbreviation is read in --time-zone, with a warning.
	recs, st, err := run(t, stderrParse("%m [%p] "), "2020-01-01 10:00:00.000 XYZT [5] LOG:  statement: SELECT 1\n", false)
	if err != nil || len(recs) != 1 || len(st.Warnings) < 1 || !strings.Contains(st.Warnings[0], `"XYZT"`) {
		t.Fatalf("%+v %v %q", recs, err, st.Warnings)
	}
}

// PostgreSQL 8.4's csvlog has 22 columns (no application_name).
func TestCSV84(t *testing.T) {
	log := `2010-12-31 10:59:26.155 UTC,,,16040,,4d1db78e.3ea8,1,,2010-12-31 10:59:26 UTC,,0,LOG,XX000,"could not create socket",,,,,,,,
2010-12-31 10:59:52.236 UTC,"postgres","postgres",16950,"[local]",4d1db7a8.4236,2,"authentication",2010-12-31 10:59:52 UTC,2/1,0,LOG,00000,"connection authorized: user=postgres database=postgres",,,,,,,,
2010-12-31 10:59:53.308 UTC,"postgres","postgres",16950,"[local]",4d1db7a8.4236,3,"INSERT",2010-12-31 10:59:52 UTC,2/2,0,LOG,00000,"execute <unnamed>: INSERT INTO t VALUES ($1)","parameters: $1 = '1'",,,,,,,
2010-12-31 10:59:55.866 UTC,"postgres","postgres",16950,"[local]",4d1db7a8.4236,4,"COPY",2010-12-31 10:59:52 UTC,2/3,0,LOG,00000,"statement: COPY runtest (id) FROM STDIN",,,,,,,,
2010-12-31 11:00:30.005 UTC,"postgres","postgres",16950,"[local]",4d1db7a8.4236,5,"idle",2010-12-31 10:59:52 UTC,,0,LOG,00000,"disconnection: session time: 0:00:37.770 user=postgres database=postgres host=[local]",,,,,,,,
`
	recs, st, err := run(t, csvParse, log, false)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
	}
	if strings.Join(kinds, ",") != "connect,execute,quit" || *recs[1].Params[0] != "1" {
		t.Errorf("%v %+v", kinds, recs)
	}
	if st.Ignored[IgnoredCopy] != 1 {
		t.Errorf("COPY FROM STDIN not counted: %v", st.Ignored)
	}
}

// A memory-context dump, a tool's output after an error, a continuation
// whose tab became spaces.
func TestNoise(t *testing.T) {
	log := `2010-12-31 11:00:27.985 UTC|postgres|postgres|4d1db7a8.4227|LOG:  statement: SELECT pg_sleep(10)
2010-12-31 11:00:28.486 UTC|postgres|postgres|4d1db7a8.4227|ERROR:  out of memory
2010-12-31 11:00:28.486 UTC|postgres|postgres|4d1db7a8.4227|STATEMENT:  SELECT big()
TopMemoryContext: 101672 total in 12 blocks; 5232 free (18 chunks); 96440 used
  TopTransactionContext: 8192 total in 1 blocks; 7840 free (1 chunks); 352 used
    ExecutorState: 336608 total in 15 blocks; 121648 free (6 chunks); 214960 used
  2 more child contexts containing 16384 total in 2 blocks; 9984 free (4 chunks); 6400 used
Grand total: 1507272 total in 122 blocks; 439880 free (138 chunks); 1067392 used
2010-12-31 11:00:29.000 UTC|||4d1db78e.3ea8|FATAL:  configuration file contains errors
pg_ctl: could not start server
Examine the log output.
2010-12-31 11:00:29.489 UTC|postgres|postgres|4d1db7a8.4236|LOG:  statement: SELECT a
        FROM t
2010-12-31 11:00:29.500 UTC|postgres|postgres|4d1db7a8.4236|LOG:  statement: SELECT 2
`
	recs, st, err := run(t, stderrParse(""), log, false)
	if err != nil {
		t.Fatal(err)
	}
	byLine(recs)
	if len(recs) != 3 || recs[1].SQL != "SELECT a\n        FROM t" {
		t.Fatalf("%+v", recs)
	}
	if st.Ignored[IgnoredMemoryDump] != 5 || st.Ignored[IgnoredNoise] != 2 || st.Skipped != 0 {
		t.Errorf("ignored %v skipped %d", st.Ignored, st.Skipped)
	}
	// A line without the prefix inside a statement is still malformed.
	_, _, err = run(t, stderrParse("%m|%u|%d|%c|"), "2010-12-31 11:00:29.489 UTC|u|d|4d1db7a8.4236|LOG:  statement: SELECT a\nFROM t\n", false)
	if err == nil || !strings.Contains(err.Error(), "pg.log:2:") {
		t.Errorf("want pg.log:2, got %v", err)
	}
}

func TestCopyFromStdinSkipped(t *testing.T) {
	log := "2010-12-31 10:59:55.866 UTC|u|d|4d1db7a8.4236|LOG:  statement: /* load */ copy runtest (id, c) from stdin with (format csv)\n" +
		"2010-12-31 10:59:55.900 UTC|u|d|4d1db7a8.4236|LOG:  duration: 5.000 ms\n" +
		"2010-12-31 10:59:56.866 UTC|u|d|4d1db7a8.4236|LOG:  statement: COPY runtest TO STDOUT\n"
	recs, st, err := run(t, stderrParse(""), log, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].SQL != "COPY runtest TO STDOUT" || recs[0].DurUS != nil || st.Ignored[IgnoredCopy] != 1 {
		t.Fatalf("%+v %v", recs, st.Ignored)
	}
}

// Columns a later release appends after the 26th are not read.
func TestCSVLaterColumns(t *testing.T) {
	log := strings.ReplaceAll(statementLogCSV, ",,0\n", ",,0,extra\n")
	recs, _, err := run(t, csvParse, log, false)
	// Sessions that end together (at the end of the log) come in no set order.
	slices.SortFunc(recs, func(a, b capture.Record) int { return cmp.Compare(a.Line, b.Line) })
	if err != nil || len(recs) != 2 || recs[0].SQL != "SELECT 1" {
		t.Fatalf("%+v %v", recs, err)
	}
}
