package oltp

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
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

			// Rows lost after the load: Ready says short, prepare refills.
			if _, err := env.DB.Exec("DELETE FROM sbtest2 WHERE id > 11500"); err != nil {
				t.Fatal(err)
			}
			nr = notReady(t, wl.Ready(bg, env))
			if !nr.Short || nr.Problem != "table sbtest2 holds 11500 of the 12000 rows --table-size asks for" {
				t.Errorf("short indexed table: %+v", nr)
			}
			fourth := &counter{}
			if err := wl.Prepare(bg, env, 2, fourth); err != nil {
				t.Fatal(err)
			}
			if fourth.total.Load() != blockRows { // the block of the lost rows
				t.Errorf("refilled %d rows, want %d", fourth.total.Load(), blockRows)
			}
			if err := wl.Ready(bg, env); err != nil {
				t.Error(err)
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
			smaller := setup(t, "oltp_read_write", "--tables=2", "--table-size=50")
			err = smaller.(workload.Preparer).Prepare(bg, env, 2, &counter{})
			if err == nil || !strings.Contains(err.Error(), "table sbtest1 was prepared with a --table-size larger than 50; run `dbarena cleanup oltp_read_write --tables 2` first") {
				t.Errorf("prepare with a smaller --table-size: %v", err)
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

func TestPlanChunksResume(t *testing.T) {
	c := DefaultConfig()
	c.Tables = 2
	spans := []span{
		{table: 1, from: 3001, to: 9000},
		{table: 2, from: 1, to: 10500, fresh: true},
	}
	got := planChunks(&c, spans, 4)
	if len(got) != 4 {
		t.Fatalf("%d chunks: %+v", len(got), got)
	}
	for _, s := range spans {
		next := s.from
		for _, ch := range got {
			if ch.table != s.table {
				continue
			}
			if ch.from != next || (ch.from-1)%blockRows != 0 || ch.resume == s.fresh || !ch.withID {
				t.Errorf("chunk %+v of span %+v, want from %d", ch, s, next)
			}
			next = ch.to + 1
		}
		if next != s.to+1 {
			t.Errorf("span %+v covered up to %d", s, next-1)
		}
	}
	// One thread per span: a fresh table goes in without ids (--auto-inc),
	// a resumed one with them.
	got = planChunks(&c, spans, 1)
	if len(got) != 2 || !got[0].withID || !got[0].resume || got[1].withID || got[1].resume {
		t.Errorf("one thread: %+v", got)
	}
}

func TestMismatch(t *testing.T) {
	c := DefaultConfig()
	good := tableInfo{exists: true, columns: map[string]bool{"id": true, "k": true, "c": true, "pad": true},
		autoInc: true, primary: true, kIndex: true, engine: "innodb"}
	if why := mismatch(dialect.MySQLDialect{}, &c, good); why != "" {
		t.Errorf("sysbench's table: %s", why)
	}
	noIndex := good
	noIndex.kIndex = false
	if why := mismatch(dialect.MySQLDialect{}, &c, noIndex); why != "" {
		t.Errorf("a table without k_N (prepare adds it): %s", why)
	}
	for _, tc := range []struct {
		change func(c *Config, ti *tableInfo)
		want   string
	}{
		{func(c *Config, _ *tableInfo) { c.AutoInc = false }, "--auto-inc=off"},
		{func(_ *Config, ti *tableInfo) { ti.autoInc = false }, "--auto-inc=on"},
		{func(c *Config, _ *tableInfo) { c.Secondary = true }, "--secondary=on"},
		{func(c *Config, _ *tableInfo) { c.CreateSecondary = false }, "--create-secondary=off"},
		{func(c *Config, _ *tableInfo) { c.MySQLStorageEngine = "MyISAM" }, "--mysql-storage-engine asks for MyISAM"},
		{func(_ *Config, ti *tableInfo) { ti.columns = map[string]bool{"id": true} }, "no column k"},
	} {
		c2, ti := DefaultConfig(), good
		tc.change(&c2, &ti)
		if why := mismatch(dialect.MySQLDialect{}, &c2, ti); !strings.Contains(why, tc.want) {
			t.Errorf("mismatch = %q, want it to mention %q", why, tc.want)
		}
	}
	pg := good
	pg.engine = ""
	if why := mismatch(dialect.PostgresDialect{}, &c, pg); why != "" {
		t.Errorf("PostgreSQL has no engines: %s", why)
	}
}

func TestPrepareHint(t *testing.T) {
	wl := setup(t, "oltp_read_write", "--tables=4", "--table-size=10000", "--auto-inc=off", "--mysql-storage-engine=myisam").(*Workload)
	if got, want := wl.prepareHint(), "dbarena prepare oltp_read_write --tables 4 --table-size 10000 --auto-inc=off --mysql-storage-engine myisam"; got != want {
		t.Errorf("hint %q, want %q", got, want)
	}
}

func TestIntegrationBulkInsertReady(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			bg := context.Background()
			wl := NewBulkInsert()
			wl.SetThreads(2)
			_ = wl.Cleanup(bg, env)
			defer wl.Cleanup(bg, env)
			nr := notReady(t, wl.Ready(bg, env))
			if want := (workload.NotReadyError{Problem: "tables sbtest1, sbtest2 do not exist", Hint: "dbarena prepare bulk_insert --threads 2"}); *nr != want {
				t.Errorf("Ready = %+v, want %+v", *nr, want)
			}
			if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
				t.Fatal(err)
			}
			if err := wl.Ready(bg, env); err != nil {
				t.Error(err)
			}
		})
	}
}

// BenchmarkReady times Ready on one table of $DBARENA_READY_ROWS rows
// (default 100000) against the COUNT(*) it avoids.
func BenchmarkReady(b *testing.B) {
	rows := 100000
	if s := os.Getenv("DBARENA_READY_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("DBARENA_READY_ROWS: %v", err)
		}
		rows = n
	}
	for _, flavor := range flavors {
		b.Run(string(flavor), func(b *testing.B) {
			env := sandboxtest.Env(b, flavor)
			bg := context.Background()
			wl := setup(b, "oltp_read_write", "--tables=1", "--table-size="+strconv.Itoa(rows)).(*Workload)
			_ = wl.Cleanup(bg, env)
			defer wl.Cleanup(bg, env)
			if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
				b.Fatal(err)
			}
			b.Run("ready", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := wl.Ready(bg, env); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("count", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					countRows(b, env, "sbtest1")
				}
			})
		})
	}
}
