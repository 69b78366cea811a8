package pglog

import (
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
)

// A PostgreSQL log through syslog (rsyslog's file): sequence numbers, a
// statement on several chunks (#011 is a tab), a line PostgreSQL split at
// its syslog limit, a HINT on a chunk of its own, another program's line,
// and a year boundary.
const syslogLog = `Dec 31 23:59:58 host postgres[10808]: [1-1] db=,user=,app=,client= LOG:  ending log output to stderr
Dec 31 23:59:58 host postgres[10808]: [1-2] db=,user=,app=,client= HINT:  Future log output will go to log destination "syslog".
Dec 31 23:59:59 host postgres[10819]: [7-1] db=shop,user=app,app=psql,client=[local] LOG:  duration: 13.997 ms  statement: SELECT a,
Dec 31 23:59:59 host postgres[10819]: [7-2] #011       b FROM t
Dec 31 23:59:59 host systemd[1]: Started PostgreSQL Cluster 11-main.
Jan  1 00:00:01 host postgres[10819]: [8-1] db=shop,user=app,app=psql,client=[local] LOG:  duration: 1.000 ms  statement: SELECT 'a long line split
Jan  1 00:00:01 host postgres[10819]: [8-2]  here'
Jan  1 00:00:02 host postgres[10822]: [9-1] db=shop,user=app,app=psql,client=[local] LOG:  duration: 1.000 ms  statement: SELECT 2
`

func syslogParse(o SyslogOptions) func(*strings.Reader, *capture.Input, func(*capture.Record) error) error {
	return func(r *strings.Reader, in *capture.Input, emit func(*capture.Record) error) error {
		return ParseSyslog(r, in, o, emit)
	}
}

func TestSyslog(t *testing.T) {
	for _, prefix := range []string{"", "db=%d,user=%u,app=%a,client=%h "} {
		recs, st, err := run(t, syslogParse(SyslogOptions{Year: 2019, Prefix: prefix}), syslogLog, false)
		if err != nil {
			t.Fatal(err)
		}
		byLine(recs)
		var got []string
		for _, r := range recs {
			got = append(got, r.Session+"|"+r.SQL+"|"+r.DB+"|"+r.User)
		}
		want := []string{"10819|SELECT a,\n       b FROM t|shop|app", "10819|SELECT 'a long line split here'|shop|app", "10822|SELECT 2|shop|app"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("prefix %q: got %q", prefix, got)
		}
		if at := time.UnixMicro(recs[2].At + *recs[2].DurUS).UTC().Format(time.RFC3339); at != "2020-01-01T00:00:02Z" {
			t.Errorf("year boundary: %s", at)
		}
		if recs[0].Line != 3 || recs[2].Line != 8 || st.Ignored["syslog line of another program"] != 1 || st.Ignored["pg HINT"] != 1 {
			t.Errorf("lines %d %d, ignored %v", recs[0].Line, recs[2].Line, st.Ignored)
		}
	}
	// A line that is not syslog's is malformed, at its number.
	_, _, err := run(t, syslogParse(SyslogOptions{Year: 2019}), syslogLog+"garbage\n", false)
	if err == nil || !strings.Contains(err.Error(), "pg.log:9:") {
		t.Errorf("want pg.log:9, got %v", err)
	}
}

func FuzzSyslog(f *testing.F) {
	f.Add(syslogLog)
	f.Fuzz(func(t *testing.T, log string) {
		recs, _, err := run(t, syslogParse(SyslogOptions{Year: 2020}), log, true)
		if err == nil {
			fuzzCheck(t, recs)
		}
	})
}
