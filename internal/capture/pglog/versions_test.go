package pglog

import (
	"strings"
	"testing"
)

// csvlogs of one session (connection, a statement, an execute with its
// parameters, the disconnection) as PostgreSQL writes them: 10 (23
// columns, from a PostgreSQL 10.23 sandbox), 13 (24: backend_type added;
// the 10 lines with that column), 18 (26: leader_pid and query_id, and
// "Parameters:" capitalised from 17, from an 18.4 sandbox).
var csvByVersion = map[string]string{
	"10": `2026-11-27 22:28:19.458 UTC,,,8221,"127.0.0.1:47404",6b0a0403.201d,1,"",2026-11-27 22:28:19 UTC,,0,LOG,00000,"connection received: host=127.0.0.1 port=47404",,,,,,,,,""
2026-11-27 22:28:19.461 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,2,"authentication",2026-11-27 22:28:19 UTC,3/13,0,LOG,00000,"connection authorized: user=dbarena database=sbtest",,,,,,,,,""
2026-11-27 22:28:19.462 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,3,"idle",2026-11-27 22:28:19 UTC,3/14,0,LOG,00000,"statement: /*cap:1:1*/ SET work_mem = '2MB'",,,,,,,,,""
2026-11-27 22:28:19.466 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,17,"SELECT",2026-11-27 22:28:19 UTC,3/18,0,LOG,00000,"execute stmt_1: /*cap:1:6*/ SELECT v FROM cap_t WHERE id = $1","parameters: $1 = '2'",,,,,,,,""
2026-11-27 22:28:19.469 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,26,"idle",2026-11-27 22:28:19 UTC,,0,LOG,00000,"disconnection: session time: 0:00:00.010 user=dbarena database=sbtest host=127.0.0.1 port=47404",,,,,,,,,""
`,
	"13": `2026-11-27 22:28:19.458 UTC,,,8221,"127.0.0.1:47404",6b0a0403.201d,1,"",2026-11-27 22:28:19 UTC,,0,LOG,00000,"connection received: host=127.0.0.1 port=47404",,,,,,,,,"","client backend"
2026-11-27 22:28:19.461 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,2,"authentication",2026-11-27 22:28:19 UTC,3/13,0,LOG,00000,"connection authorized: user=dbarena database=sbtest",,,,,,,,,"","client backend"
2026-11-27 22:28:19.462 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,3,"idle",2026-11-27 22:28:19 UTC,3/14,0,LOG,00000,"statement: /*cap:1:1*/ SET work_mem = '2MB'",,,,,,,,,"","client backend"
2026-11-27 22:28:19.466 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,17,"SELECT",2026-11-27 22:28:19 UTC,3/18,0,LOG,00000,"execute stmt_1: /*cap:1:6*/ SELECT v FROM cap_t WHERE id = $1","parameters: $1 = '2'",,,,,,,,"","client backend"
2026-11-27 22:28:19.469 UTC,"dbarena","sbtest",8221,"127.0.0.1:47404",6b0a0403.201d,26,"idle",2026-11-27 22:28:19 UTC,,0,LOG,00000,"disconnection: session time: 0:00:00.010 user=dbarena database=sbtest host=127.0.0.1 port=47404",,,,,,,,,"","client backend"
`,
	"18": `2026-11-27 22:28:28.958 UTC,,,8635,"127.0.0.1:56182",6b0a040c.21bb,1,"",2026-11-27 22:28:28 UTC,,0,LOG,00000,"connection received: host=127.0.0.1 port=56182",,,,,,,,,"","not initialized",,0
2026-11-27 22:28:28.960 UTC,"dbarena","sbtest",8635,"127.0.0.1:56182",6b0a040c.21bb,2,"authentication",2026-11-27 22:28:28 UTC,3/1,0,LOG,00000,"connection authenticated: identity=""dbarena"" method=scram-sha-256 (/var/lib/dbarena/f810c7f0fbe4/v18log/data/pg_hba.conf:4)",,,,,,,,,"","client backend",,0
2026-11-27 22:28:28.960 UTC,"dbarena","sbtest",8635,"127.0.0.1:56182",6b0a040c.21bb,3,"authentication",2026-11-27 22:28:28 UTC,3/1,0,LOG,00000,"connection authorized: user=dbarena database=sbtest",,,,,,,,,"","client backend",,0
2026-11-27 22:28:28.967 UTC,"dbarena","sbtest",8635,"127.0.0.1:56182",6b0a040c.21bb,4,"idle",2026-11-27 22:28:28 UTC,3/2,0,LOG,00000,"statement: /*cap:1:1*/ SET work_mem = '2MB'",,,,,,,,,"","client backend",,0
2026-11-27 22:28:28.972 UTC,"dbarena","sbtest",8635,"127.0.0.1:56182",6b0a040c.21bb,18,"SELECT",2026-11-27 22:28:28 UTC,3/6,0,LOG,00000,"execute stmt_1: /*cap:1:6*/ SELECT v FROM cap_t WHERE id = $1","Parameters: $1 = '2'",,,,,,,,"","client backend",,0
2026-11-27 22:28:28.980 UTC,"dbarena","sbtest",8635,"127.0.0.1:56182",6b0a040c.21bb,27,"idle",2026-11-27 22:28:28 UTC,,0,LOG,00000,"disconnection: session time: 0:00:00.023 user=dbarena database=sbtest host=127.0.0.1 port=56182",,,,,,,,,"","client backend",,0
`,
}

func TestCSVByVersion(t *testing.T) {
	for v, log := range csvByVersion {
		t.Run(v, func(t *testing.T) {
			recs, st, err := run(t, csvParse, log, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Kind+" "+r.SQL)
			}
			want := []string{"connect ", "query /*cap:1:1*/ SET work_mem = '2MB'", "execute /*cap:1:6*/ SELECT v FROM cap_t WHERE id = $1", "quit "}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("got %q", got)
			}
			e := recs[2]
			if e.Name != "stmt_1" || len(e.Params) != 1 || e.Params[0] == nil || *e.Params[0] != "2" || e.User != "dbarena" || e.DB != "sbtest" {
				t.Errorf("execute %+v", e)
			}
			if st.Skipped != 0 {
				t.Errorf("bad lines: %+v", st)
			}
		})
	}
}
