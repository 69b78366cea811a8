package mysqlwire_test

import (
	"testing"

	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// TestNoAllocPerStatement: executing a prepared statement and reading its
// reply (skipped, or row by row) allocates nothing once the connection's
// buffers have grown, whatever the arguments' values (given boxed).
func TestNoAllocPerStatement(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	for _, q := range []string{"DROP TABLE IF EXISTS wire_alloc",
		"CREATE TABLE wire_alloc (id INT PRIMARY KEY, k INT, c CHAR(120))",
		"INSERT INTO wire_alloc VALUES (1, 10, REPEAT('x', 120)), (2, 20, REPEAT('y', 120))"} {
		if _, err := c.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	sel, err := c.Prepare("SELECT c FROM wire_alloc WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	upd, err := c.Prepare("UPDATE wire_alloc SET k = k + 1 WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	args := []any{int64(1)}
	n := 0
	fn := func(r *Row) error { n += len(r.Bytes(0)); return nil }
	for name, f := range map[string]func() error{
		"Query":     func() error { return sel.Query(args) },
		"QueryFunc": func() error { return sel.QueryFunc(args, fn) },
		"Exec":      func() error { _, err := upd.Exec(args); return err },
	} {
		var ferr error
		if allocs := testing.AllocsPerRun(50, func() {
			if err := f(); err != nil {
				ferr = err
			}
		}); allocs != 0 || ferr != nil {
			t.Errorf("%s: %v allocations per statement, %v", name, allocs, ferr)
		}
	}
	if n == 0 {
		t.Error("QueryFunc read no value")
	}
	if _, err := c.Exec("DROP TABLE wire_alloc", nil); err != nil {
		t.Fatal(err)
	}
}
