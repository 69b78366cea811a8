package oltp

import (
	"context"
	"testing"

	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// TestWireEventAllocs runs events on PostgreSQL through pgwire and on
// MariaDB through mysqlwire and checks that the hot path allocates nothing
// per event: statement arguments are changed in place (setInt, setStr),
// not boxed anew.
func TestWireEventAllocs(t *testing.T) {
	for _, flavor := range []target.Flavor{target.FlavorPostgres, target.FlavorMariaDB} {
		t.Run(string(flavor), func(t *testing.T) { testWireEventAllocs(t, flavor) })
	}
}

func testWireEventAllocs(t *testing.T, flavor target.Flavor) {
	env := sandboxtest.Env(t, flavor)
	ctx := context.Background()
	for _, name := range []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "select_random_ranges"} {
		t.Run(name, func(t *testing.T) {
			wl := setup(t, name, "--tables=1", "--table-size=1000")
			_ = wl.(workload.Cleaner).Cleanup(ctx, env)
			if err := wl.(workload.Preparer).Prepare(ctx, env, 1, &counter{}); err != nil {
				t.Fatal(err)
			}
			defer wl.(workload.Cleaner).Cleanup(ctx, env)
			w, err := wl.(workload.Dialer).DialWorker(ctx, env, 0, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			ev := new(workload.Event)
			event := func() {
				*ev = workload.Event{}
				if err := w.Event(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			for range 10 { // the first calls box each argument once
				event()
			}
			// AllocsPerRun rounds down: a stray allocation elsewhere in the
			// process does not count, one per event does.
			if n := testing.AllocsPerRun(200, event); n != 0 {
				t.Errorf("%v allocations per event, want 0", n)
			}
		})
	}
}
