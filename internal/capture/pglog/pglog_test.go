package pglog

import (
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
)

func run(t testing.TB, f func(*strings.Reader, *capture.Input, func(*capture.Record) error) error, log string, skip bool) ([]capture.Record, *capture.Stats, error) {
	var out []capture.Record
	st := &capture.Stats{}
	err := f(strings.NewReader(log), &capture.Input{Name: "pg.log", SkipBad: skip, Stats: st}, func(r *capture.Record) error {
		out = append(out, *r)
		return nil
	})
	return out, st, err
}

func csvParse(r *strings.Reader, in *capture.Input, emit func(*capture.Record) error) error {
	return ParseCSV(r, in, emit)
}

func stderrParseWith(o StderrOptions) func(*strings.Reader, *capture.Input, func(*capture.Record) error) error {
	return func(r *strings.Reader, in *capture.Input, emit func(*capture.Record) error) error {
		return ParseStderr(r, in, o, emit)
	}
}

func stderrParse(prefix string) func(*strings.Reader, *capture.Input, func(*capture.Record) error) error {
	return func(r *strings.Reader, in *capture.Input, emit func(*capture.Record) error) error {
		var o StderrOptions
		if prefix != "" {
			p, err := CompilePrefix(prefix)
			if err != nil {
				return err
			}
			o.Prefix = p
		}
		return ParseStderr(r, in, o, emit)
	}
}

// PostgreSQL 15 csvlog (26 columns).
const csv15 = `2024-11-22 22:50:01.100 UTC,,,100,"[local]",6740f1a1.64,1,"",2024-11-22 22:50:01 UTC,,0,LOG,00000,"connection received: host=[local]",,,,,,,,,"",not initialized,,0
2024-11-22 22:50:01.101 UTC,"app","shop",100,"[local]",6740f1a1.64,2,"authentication",2024-11-22 22:50:01 UTC,3/1,0,LOG,00000,"connection authorized: user=app database=shop application_name=psql",,,,,,,,,"",client backend,,0
2024-11-22 22:50:01.200 UTC,"app","shop",100,"[local]",6740f1a1.64,3,"idle",2024-11-22 22:50:01 UTC,3/2,0,LOG,00000,"statement: SELECT 'a ""quoted"", multi
line'",,,,,,,,,"psql",client backend,,0
2024-11-22 22:50:01.300 UTC,"app","shop",100,"[local]",6740f1a1.64,4,"SELECT",2024-11-22 22:50:01 UTC,3/3,0,LOG,00000,"execute S_1: SELECT $1::int + $2","parameters: $1 = '5', $2 = NULL",,,,,,,,"psql",client backend,,0
2024-11-22 22:50:01.400 UTC,"app","shop",100,"[local]",6740f1a1.64,5,"ALTER ROLE",2024-11-22 22:50:01 UTC,3/4,0,LOG,00000,"duration: 2.500 ms  statement: ALTER ROLE app PASSWORD 'x'",,,,,,,,,"psql",client backend,,0
2024-11-22 22:50:01.500 UTC,"app","shop",100,"[local]",6740f1a1.64,6,"idle",2024-11-22 22:50:01 UTC,,0,LOG,00000,"disconnection: session time: 0:00:00.400 user=app database=shop host=[local]",,,,,,,,,"psql",client backend,,0
`

func TestCSV(t *testing.T) {
	recs, _, err := run(t, csvParse, csv15, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Kind+" "+r.Name+" "+r.SQL)
	}
	want := []string{"connect  ", "query  SELECT 'a \"quoted\", multi\nline'", "execute S_1 SELECT $1::int + $2", "query  ALTER ROLE app PASSWORD 'x'", "quit  "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
	e := recs[2]
	if len(e.Params) != 2 || *e.Params[0] != "5" || e.Params[1] != nil || e.User != "app" || e.DB != "shop" || e.Session != "6740f1a1.64" {
		t.Errorf("execute %+v", e)
	}
	if *recs[3].DurUS != 2500 || recs[3].At != 1732315801400000-2500 {
		t.Errorf("duration %+v", recs[3])
	}
}

const stderrDebian = `2024-11-22 22:50:01.000 UTC [99] LOG:  checkpoint starting: time
2024-11-22 22:50:01.100 UTC [100] [unknown]@[unknown] LOG:  connection received: host=[local]
2024-11-22 22:50:01.101 UTC [100] app@shop LOG:  connection authorized: user=app database=shop application_name=psql
2024-11-22 22:50:01.200 UTC [100] app@shop LOG:  statement: SELECT 1,
	2
2024-11-22 22:50:01.300 UTC [100] app@shop LOG:  execute <unnamed>: SELECT $1
2024-11-22 22:50:01.300 UTC [100] app@shop DETAIL:  parameters: $1 = 'it''s'
2024-11-22 22:50:01.350 UTC [100] app@shop LOG:  duration: 0.050 ms
2024-11-22 22:50:01.400 UTC [100] app@shop ERROR:  relation "x" does not exist at character 15
2024-11-22 22:50:01.400 UTC [100] app@shop STATEMENT:  SELECT * FROM x
2024-11-22 22:50:01.500 UTC [100] app@shop LOG:  disconnection: session time: 0:00:00.400 user=app database=shop host=[local]
2024-11-22 22:50:02.100 UTC [100] [unknown]@[unknown] LOG:  connection received: host=[local]
2024-11-22 22:50:02.101 UTC [100] app@shop LOG:  connection authorized: user=app database=shop
2024-11-22 22:50:02.200 UTC [100] app@shop LOG:  statement: SELECT 2
`

func TestStderr(t *testing.T) {
	for _, prefix := range []string{"%m [%p] %q%u@%d ", ""} {
		recs, st, err := run(t, stderrParse(prefix), stderrDebian, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Session+" "+r.Kind+" "+r.SQL)
		}
		want := []string{"100 connect ", "100 query SELECT 1,\n2", "100 execute SELECT $1", "100 quit ", "100.2 connect ", "100.2 query SELECT 2"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("prefix %q: got %q", prefix, got)
		}
		if *recs[2].Params[0] != "it's" || *recs[2].DurUS != 50 {
			t.Errorf("execute %+v", recs[2])
		}
		if st.Ignored["pg ERROR"] != 1 {
			t.Errorf("ignored %v", st.Ignored)
		}
	}
}

func TestMissingSettings(t *testing.T) {
	for name, c := range map[string]struct{ log, want string }{
		"no statements":  {"2024-11-22 22:50:01.101 UTC [100] app@shop LOG:  connection authorized: user=app database=shop\n", "log_statement=all"},
		"no connections": {"2024-11-22 22:50:01.101 UTC [100] app@shop LOG:  statement: SELECT 1\n", "log_connections=on and log_disconnections=on"},
		"no disconnections": {"2024-11-22 22:50:01.101 UTC [100] app@shop LOG:  connection authorized: user=app database=shop\n" +
			"2024-11-22 22:50:01.101 UTC [100] app@shop LOG:  statement: SELECT 1\n", "needs log_disconnections=on"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, stderrParseWith(StderrOptions{Sessions: SessionsConnections}), c.log, false)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error naming %s, got %v", c.want, err)
			}
		})
	}
	if _, err := CompilePrefix("%m [%u] "); err == nil || !strings.Contains(err.Error(), "%c") {
		t.Errorf("a prefix without a session: %v", err)
	}
}

func TestMalformed(t *testing.T) {
	bad := "2024-11-22 22:50:01.101 UTC [100] app@shop LOG:  statement: SELECT 1\ngarbage here\n"
	_, _, err := run(t, stderrParse("%m [%p] %q%u@%d "), bad, false)
	if err == nil || !strings.HasPrefix(err.Error(), "pg.log:2: ") {
		t.Fatalf("want pg.log:2, got %v", err)
	}
	_, _, err = run(t, csvParse, "2024-11-22 22:50:01.100 UTC,a,b\n", false)
	if err == nil || !strings.HasPrefix(err.Error(), "pg.log:1: ") {
		t.Fatalf("want pg.log:1, got %v", err)
	}
	lines := strings.Split(csv15, "\n")
	withBad := strings.Join(lines[:2], "\n") + "\nnot,a,record\n" + strings.Join(lines[2:], "\n")
	_, _, err = run(t, csvParse, withBad, false)
	if err == nil || !strings.HasPrefix(err.Error(), "pg.log:3: ") {
		t.Fatalf("want pg.log:3, got %v", err)
	}
	_, st, err := run(t, csvParse, withBad, true)
	if err != nil || st.Skipped != 1 {
		t.Fatalf("--skip-bad: %v %d", err, st.Skipped)
	}
}

func fuzzCheck(t *testing.T, recs []capture.Record) {
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			t.Fatalf("invalid record %+v: %v", r, err)
		}
	}
}

func FuzzCSV(f *testing.F) {
	f.Add(csv15)
	f.Fuzz(func(t *testing.T, log string) {
		recs, _, err := run(t, csvParse, log, true)
		if err == nil {
			fuzzCheck(t, recs)
		}
	})
}

func FuzzStderr(f *testing.F) {
	f.Add(stderrDebian)
	f.Fuzz(func(t *testing.T, log string) {
		recs, _, err := run(t, stderrParse(""), log, true)
		if err == nil {
			fuzzCheck(t, recs)
		}
	})
}

func FuzzParams(f *testing.F) {
	f.Add("$1 = '5', $2 = NULL, $3 = 'it''s'")
	f.Fuzz(func(t *testing.T, s string) {
		parseParams(s)
	})
}

func FuzzPrefix(f *testing.F) {
	for _, p := range CommonPrefixes {
		f.Add(p, "2024-11-22 22:50:01.101 UTC [100] app@shop LOG:  statement: SELECT 1")
	}
	f.Fuzz(func(t *testing.T, prefix, line string) {
		p, err := CompilePrefix(prefix)
		if err != nil {
			return
		}
		var ts timeCache
		var fl fields
		if p.match([]byte(line), &ts, time.UTC, &fl) && fl.restOffset > len(line) {
			t.Fatalf("rest offset %d beyond the line (%d)", fl.restOffset, len(line))
		}
	})
}

// TestCutOffLastLine: a PostgreSQL log whose last line has no newline
// loses its last message with a warning naming file:line (issue 33, item
// 13): a cut continuation, parameters or csv record is not kept.
func TestCutOffLastLine(t *testing.T) {
	head := "2024-11-22 22:50:01.100 UTC [100] app@shop LOG:  connection authorized: user=app database=shop\n" +
		"2024-11-22 22:50:01.200 UTC [100] app@shop LOG:  statement: SELECT 1\n"
	csvCut := strings.TrimSuffix(csv15, "\n")
	csvCut = csvCut[:strings.LastIndex(csvCut, "\n")+1] + `2024-11-22 22:50:01.600 UTC,"app","shop",100,"[local]",6740f1a1.64,7,"idle",2024-11-22 22:50:01 UTC,3/5,0,LOG,00000,"statement: SELECT 9`
	for name, c := range map[string]struct {
		f     func(*strings.Reader, *capture.Input, func(*capture.Record) error) error
		log   string
		cut   string // text that must not be kept
		line  string
		whole bool
	}{
		"stderr continuation": {stderrParse("%m [%p] %q%u@%d "), head + "2024-11-22 22:50:01.300 UTC [100] app@shop LOG:  statement: SELECT 2,\n\t3 FR", "SELECT 2", "pg.log:4: ", false},
		"stderr new message":  {stderrParse("%m [%p] %q%u@%d "), head + "2024-11-22 22:50:01.300 UTC [100] app@shop LOG:  statement: SELECT 2 FR", "SELECT 2", "pg.log:3: ", false},
		"csv record":          {csvParse, csvCut, "SELECT 9", "pg.log:", false},
	} {
		t.Run(name, func(t *testing.T) {
			recs, st, err := run(t, c.f, c.log, false)
			if err != nil && !strings.Contains(err.Error(), "no statements") && !strings.Contains(err.Error(), "disconnection") {
				t.Fatal(err)
			}
			for _, r := range recs {
				if strings.Contains(r.SQL, c.cut) {
					t.Errorf("cut-off text kept: %+v", r)
				}
			}
			if len(st.Warnings) != 1 || !strings.HasPrefix(st.Warnings[0], c.line) || !strings.Contains(st.Warnings[0], "cut off") {
				t.Errorf("warnings %q, want one at %s", st.Warnings, c.line)
			}
		})
	}
}
