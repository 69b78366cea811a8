package mysqlwire_test

import (
	"fmt"
	"testing"

	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// TestPointerArguments: a *int64, *string or *[]byte argument is read at
// each call, by a prepared statement and by the text protocol alike (nil
// is NULL), and changing it in place allocates nothing per statement.
func TestPointerArguments(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	id, s, b := new(int64), new(string), new([]byte)
	args := []any{id, s, b}
	const q = "SELECT CONCAT_WS('|', ?, ?, ?)"
	got := func(run func(fn func(*Row) error) error) string {
		t.Helper()
		var out string
		if err := run(func(r *Row) error { out = string(r.Bytes(0)); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ps, err := c.Prepare(q)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1000); i < 1003; i++ {
		*id, *s, *b = i, fmt.Sprint("s", i), fmt.Appendf((*b)[:0], "b%d", i)
		want := fmt.Sprintf("%d|s%d|b%d", i, i, i)
		if g := got(func(fn func(*Row) error) error { return ps.QueryFunc(args, fn) }); g != want {
			t.Errorf("prepared: got %q, want %q", g, want)
		}
		if g := got(func(fn func(*Row) error) error { return c.QueryFunc(q, args, fn) }); g != want {
			t.Errorf("text: got %q, want %q", g, want)
		}
	}
	nils := []any{(*int64)(nil), (*string)(nil), new([]byte)} // a nil slice too
	if g := got(func(fn func(*Row) error) error { return ps.QueryFunc(nils, fn) }); g != "" {
		t.Errorf("prepared NULLs: got %q, want \"\"", g)
	}
	if g := got(func(fn func(*Row) error) error { return c.QueryFunc(q, nils, fn) }); g != "" {
		t.Errorf("text NULLs: got %q, want \"\"", g)
	}
	var ferr error
	if allocs := testing.AllocsPerRun(50, func() {
		*id += 1000 // boxed, values above 255 would allocate
		*b = append((*b)[:0], "changed"...)
		if err := ps.Query(args); err != nil {
			ferr = err
		}
	}); allocs != 0 || ferr != nil {
		t.Errorf("%v allocations per statement, %v", allocs, ferr)
	}
}
