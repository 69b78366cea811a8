package pgwire_test

import (
	"errors"
	"testing"

	. "github.com/dbarena/dbarena/internal/wire/pgwire"
)

// A simple-protocol query of several statements numbers its rows by
// result (Row.Result) and counts its results (Results), so that a caller
// can tell results apart (pgbench's \gset keeps the last one).
func TestResultsOfAQueryString(t *testing.T) {
	cfg, _, _ := server(t)
	c := dial(t, cfg)
	var got [][2]int
	err := c.QueryFunc("SELECT 1 AS a; SELECT 2 AS b, 3 AS c UNION ALL SELECT 4, 5; SET search_path = public; SELECT 6 WHERE false", nil, func(r *Row) error {
		got = append(got, [2]int{r.Result(), r.Len()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 1}, {1, 2}, {1, 2}}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("rows (result, columns) %v, want %v", got, want)
	}
	if c.Results() != 4 {
		t.Errorf("Results() = %d, want 4", c.Results())
	}
	if err := c.QueryFunc("SELECT 1", nil, func(*Row) error { return nil }); err != nil || c.Results() != 1 {
		t.Errorf("one statement: %v, Results() = %d", err, c.Results())
	}
}

// A COPY to or from the client is ErrCopy (not "unexpected message"),
// and the connection is closed.
func TestCopyIsErrCopy(t *testing.T) {
	cfg, _, _ := server(t)
	for _, q := range []string{"COPY (SELECT 1) TO STDOUT", "CREATE TEMP TABLE cp (a int); COPY cp FROM STDIN"} {
		c := dial(t, cfg)
		if _, err := c.Exec(q, nil); !errors.Is(err, ErrCopy) {
			t.Errorf("%s: %v, want ErrCopy", q, err)
		}
		if _, err := c.Exec("SELECT 1", nil); err == nil {
			t.Errorf("%s: the connection still answers", q)
		}
	}
}
