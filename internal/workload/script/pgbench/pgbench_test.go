package pgbench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

type result struct {
	code           int
	stdout, stderr string
}

// run runs Main with argv and no server to reach.
func run(argv ...string) result {
	var out, errb strings.Builder
	code := Main(context.Background(), Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Version: "test", Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) },
		Resolve: func(context.Context, string) (target.Target, error) {
			return target.Target{}, errors.New("no server in this test")
		}},
		argv)
	return result{code, out.String(), errb.String()}
}

// TestPgbenchOptionErrors: pgbench's option errors, word for word, exit
// status 1, before any connection (no server needed).
func TestPgbenchOptionErrors(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"--bad-option"}, `unrecognized option '--bad-option'`},
		{[]string{"-c", "three"}, `invalid value "three" for option -c/--clients`},
		{[]string{"-t", "zil"}, `invalid value "zil" for option -t/--transactions`},
		{[]string{"-b", "no-such-builtin"}, `no builtin script found for name "no-such-builtin"`},
		{[]string{"-b", "s"}, `ambiguous builtin name: 2 builtin scripts found for prefix "s"`},
		{[]string{"--builtin=select-only@one"}, `invalid weight specification: @one`},
		{[]string{"-b", "se@0", "-b", "si@0"}, `total script weight must not be zero`},
		{[]string{"-N", "-l", "--aggregate-interval=5", "--log-prefix=x", "-t", "1000", "-T", "1"}, `specify either a number of transactions (-t) or a duration (-T), not both`},
		{[]string{"-F", "1"}, `-F/--fillfactor must be in range 10..100`},
		{[]string{"-S", "-F", "90"}, `cannot be used in benchmarking mode`},
		{[]string{"-i", "-S"}, `cannot be used in initialization (-i) mode`},
		{[]string{"-i", "-I", "dta"}, `unrecognized initialization step "a"`},
		{[]string{"--random-seed=one"}, `unrecognized random seed option "one"`},
		{[]string{"--max-tries", "0"}, `an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)`},
		{[]string{"--max-tries", "-10"}, `invalid number of maximum tries: "-10"`},
		{[]string{"--sampling-rate=0.01"}, `log sampling (--sampling-rate) is allowed only when logging transactions (-l)`},
		{[]string{"-l", "--sampling-rate=0.1", "--aggregate-interval=3"}, `cannot be used at the same time`},
		{[]string{"-l", "-T", "5", "--aggregate-interval=3"}, `duration (5) must be a multiple of aggregation interval (3)`},
		{[]string{"--progress-timestamp"}, `--progress-timestamp is allowed only under -P/--progress`},
		{[]string{"-i", "--partition-method=hash"}, `--partition-method requires greater than zero --partitions`},
		{[]string{"-f", "no-such-file"}, `could not open file "no-such-file": No such file or directory`},
		// pgbench 17's --dbname: no DBNAME may follow it (pgbench 18.6's words).
		{[]string{"--dbname=a", "b", "c"}, `too many command-line arguments (first is "b")`},
		{[]string{"a", "b"}, `too many command-line arguments (first is "b")`},
	}
	for _, c := range cases {
		r := run(c.argv...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "pgbench: error: "+c.want) && !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("pgbench %v: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.argv, r.code, r.stdout, r.stderr, c.want)
		}
	}
}

// TestPgbenchDbname: pgbench 17's --dbname (and its unique prefix) names
// the database as a DBNAME argument does.
func TestPgbenchDbname(t *testing.T) {
	for _, argv := range [][]string{{"--dbname=shop"}, {"--db", "shop"}, {"shop"}, {"-n", "shop", "-c", "2"}} {
		r, err := parsePgbench(argv, func(string) string { return "" })
		if err != nil {
			t.Errorf("%q: %v", argv, err)
		} else if r.db != "shop" {
			t.Errorf("%q: database %q, want shop", argv, r.db)
		}
	}
}
