package mysqlwire_test

import (
	"errors"
	"testing"

	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// A pipeline sends its statements at once and reports each reply in
// order; a failed statement does not stop the later ones (the server runs
// them), and the connection stays in step.
func TestPipeline(t *testing.T) {
	cfg, db := server(t)
	c := dial(t, cfg)
	for _, q := range []string{"DROP TABLE IF EXISTS wire_pipe", "CREATE TABLE wire_pipe (id INT PRIMARY KEY, v INT)"} {
		if _, err := c.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	ins, err := c.Prepare("INSERT INTO wire_pipe VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	upd, err := c.Prepare("UPDATE wire_pipe SET v = v + 1 WHERE id <= ?")
	if err != nil {
		t.Fatal(err)
	}
	p := c.StartPipeline()
	for _, q := range []struct {
		s    *Stmt
		args []any
	}{{ins, []any{1, 10}}, {ins, []any{2, 20}}, {ins, []any{1, 30}}, {upd, []any{2}}} {
		if err := p.Exec(q.s, q.args); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec("SELECT 1", nil); err == nil {
		t.Error("a text query inside a pipeline: no error")
	}
	if p.Len() != 4 {
		t.Errorf("Len %d, want 4", p.Len())
	}
	var affected []int64
	var errs []error
	err = p.Sync(func(i int, n int64, err error) {
		if i != len(affected) {
			t.Errorf("reply %d out of order", i)
		}
		affected, errs = append(affected, n), append(errs, err)
	})
	var se *Error
	if !errors.As(err, &se) || se.Number != 1062 {
		t.Fatalf("Sync: %v, want the duplicate key", err)
	}
	if len(affected) != 4 || affected[0] != 1 || affected[1] != 1 || errs[2] == nil || affected[3] != 2 {
		t.Errorf("replies %v %v", affected, errs)
	}
	var sum int
	if err := db.QueryRow("SELECT SUM(v) FROM wire_pipe").Scan(&sum); err != nil || sum != 32 {
		t.Errorf("sum %d (%v), want 32", sum, err)
	}
	// In step afterwards, and an empty pipeline is no round trip.
	if err := c.StartPipeline().Sync(nil); err != nil {
		t.Fatal(err)
	}
	if n, err := upd.Exec([]any{1}); err != nil || n != 1 {
		t.Fatalf("after the pipeline: %d, %v", n, err)
	}
}
