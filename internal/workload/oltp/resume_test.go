package oltp

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/workload"
)

// cancelAfter is a Progress that cancels the load after its first rows.
type cancelAfter struct {
	counter
	cancel context.CancelFunc
}

func (c *cancelAfter) Add(rows, by int64) { c.counter.Add(rows, by); c.cancel() }

// notReady returns err as a *workload.NotReadyError or fails.
func notReady(t *testing.T, err error) *workload.NotReadyError {
	t.Helper()
	var nr *workload.NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("Ready = %v, want a NotReadyError", err)
	}
	return nr
}

// TestIntegrationResumePrepare interrupts a prepare (its context cancelled
// after the first statement) and checks that a second prepare loads only
// what is missing, with the rows an uninterrupted load writes, and that a
// third loads nothing.
func TestIntegrationResumePrepare(t *testing.T) {
	const size = 12000
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			args := []string{"--tables=2", "--table-size=" + strconv.Itoa(size)}
			wl := setup(t, "oltp_read_write", args...).(*Workload)
			bg := context.Background()
			_ = wl.Cleanup(bg, env)
			defer wl.Cleanup(bg, env)

			ctx, cancel := context.WithCancel(bg)
			first := &cancelAfter{cancel: cancel}
			if err := wl.Prepare(ctx, env, 4, first); err == nil {
				t.Fatal("interrupted prepare returned no error")
			}
			cancel()
			nr := notReady(t, wl.Ready(bg, env))
			if nr.Short || !strings.Contains(nr.Problem, "no index k_1") {
				t.Errorf("after the interrupted prepare: %+v", nr)
			}

			second := &counter{}
			if err := wl.Prepare(bg, env, 3, second); err != nil {
				t.Fatal(err)
			}
			if tot := second.total.Load(); tot <= 0 || tot >= 2*size || second.rows.Load() != tot {
				t.Errorf("resumed prepare: total %d, rows %d; want 0 < total < %d, rows = total", tot, second.rows.Load(), 2*size)
			}
			t.Logf("first prepare wrote %d rows before the cancel; the second loaded %d", first.rows.Load(), second.total.Load())
			if err := wl.Ready(bg, env); err != nil {
				t.Fatalf("Ready after the resumed prepare: %v", err)
			}
			for tbl := 1; tbl <= 2; tbl++ {
				var n, lo, hi int64
				if err := env.DB.QueryRow("SELECT COUNT(*), MIN(id), MAX(id) FROM "+tableName(tbl)).Scan(&n, &lo, &hi); err != nil {
					t.Fatal(err)
				}
				if n != size || lo != 1 || hi != size {
					t.Errorf("%s: %d rows, ids %d..%d", tableName(tbl), n, lo, hi)
				}
				g := newRowGen(wl.Config(), tbl, size)
				for _, id := range []int64{1, 1000, 1001, 2999, 5000, 6001, 11000, size} {
					var k int64
					var c, pad string
					q := env.Dialect.Rebind("SELECT k, c, pad FROM " + tableName(tbl) + " WHERE id = ?")
					if err := env.DB.QueryRow(q, id).Scan(&k, &c, &pad); err != nil {
						t.Fatal(err)
					}
					got := string(appendRow(nil, id, true, k, []byte(strings.TrimRight(c, " ")), []byte(strings.TrimRight(pad, " "))))
					if want := string(g.gen(id, true)); got != want {
						t.Errorf("%s row %d: %s, want %s", tableName(tbl), id, got, want)
					}
				}
			}
			// The id sequence moved past the rows: INSERTs without an id work.
			ins := setup(t, "oltp_insert", args...)
			for _, q := range runEvents(t, env, ins, 0, 5) {
				if q.Write != 1 {
					t.Fatalf("insert after the resumed prepare: %+v", q)
				}
			}

			third := &counter{}
			if err := wl.Prepare(bg, env, 2, third); err != nil {
				t.Fatal(err)
			}
			if third.total.Load() != 0 {
				t.Errorf("prepare on whole tables loaded %d rows", third.total.Load())
			}
		})
	}
}

// TestIntegrationPrepareMismatch: tables made with other options are
// refused, naming the cleanup command.
func TestIntegrationPrepareMismatch(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			bg := context.Background()
			wl := setup(t, "oltp_read_write", "--tables=2", "--table-size=100").(*Workload)
			_ = wl.Cleanup(bg, env)
			defer wl.Cleanup(bg, env)
			if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
				t.Fatal(err)
			}
			other := setup(t, "oltp_read_write", "--tables=2", "--table-size=100", "--auto-inc=off")
			err := other.(workload.Preparer).Prepare(bg, env, 2, &counter{})
			if err == nil || !strings.Contains(err.Error(), "run `dbarena cleanup oltp_read_write --tables 2` first") ||
				!strings.Contains(err.Error(), "--auto-inc=off") {
				t.Errorf("prepare with --auto-inc=off on auto-increment tables: %v", err)
			}
		})
	}
}

// TestIntegrationReady checks Ready on missing, short and whole tables.
func TestIntegrationReady(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			bg := context.Background()
			wl := setup(t, "oltp_read_write", "--tables=3", "--table-size=5000", "--create-secondary=off").(*Workload)
			_ = wl.Cleanup(bg, env)
			defer wl.Cleanup(bg, env)

			nr := notReady(t, wl.Ready(bg, env))
			want := workload.NotReadyError{
				Problem: "tables sbtest1, sbtest2, sbtest3 do not exist",
				Hint:    "dbarena prepare oltp_read_write --tables 3 --table-size 5000 --create-secondary=off",
			}
			if *nr != want {
				t.Errorf("no tables: %+v, want %+v", *nr, want)
			}

			if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
				t.Fatal(err)
			}
			if err := wl.Ready(bg, env); err != nil {
				t.Fatalf("whole tables: %v", err)
			}
			if _, err := env.DB.Exec("DELETE FROM sbtest2 WHERE id > 3500"); err != nil {
				t.Fatal(err)
			}
			if _, err := env.DB.Exec("DROP TABLE sbtest3"); err != nil {
				t.Fatal(err)
			}
			nr = notReady(t, wl.Ready(bg, env))
			if nr.Problem != "table sbtest3 does not exist" || nr.Short {
				t.Errorf("a missing table: %+v", nr)
			}
			if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
				t.Fatal(err)
			}
			if _, err := env.DB.Exec("DELETE FROM sbtest2 WHERE id > 3500"); err != nil {
				t.Fatal(err)
			}
			nr = notReady(t, wl.Ready(bg, env))
			want = workload.NotReadyError{
				Problem: "table sbtest2 holds 3500 of the 5000 rows --table-size asks for",
				Hint:    "dbarena prepare oltp_read_write --tables 3 --table-size 5000 --create-secondary=off",
				Short:   true,
			}
			if *nr != want {
				t.Errorf("a short table: %+v, want %+v", *nr, want)
			}
			if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
				t.Fatal(err)
			}
			if err := wl.Ready(bg, env); err != nil {
				t.Errorf("after prepare: %v", err)
			}
		})
	}
}
