package monitor

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// TestServerCountersSeeKnownWork inserts N rows and expects the server's
// own counters, as the sampler reports them, to grow by at least N.
func TestServerCountersSeeKnownWork(t *testing.T) {
	const n = 300
	for _, tt := range []struct {
		flavor target.Flavor
		// counters: the first one the server has counts the rows
		// (MariaDB 10.6+ has no Innodb_rows_*: Handler_write counts them).
		counters []string
		gauge    string
	}{
		{target.FlavorMariaDB, []string{"counter.Innodb_rows_inserted", "counter.Handler_write"}, "gauge.Threads_connected"},
		{target.FlavorPostgres, []string{"counter.tup_inserted"}, "gauge.numbackends"},
	} {
		t.Run(string(tt.flavor), func(t *testing.T) {
			tg := sandboxtest.Start(t, tt.flavor)
			d, err := dialect.For(tg.Family())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := OpenServerSampler(ctx, d, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.(interface{ Close() error }).Close()
			at := time.Now()
			base := map[string]float64{}
			if err := s.Sample(ctx, at, base); err != nil {
				t.Fatal(err)
			}
			if _, ok := base[tt.gauge]; !ok {
				t.Fatalf("baseline lacks %s: %v", tt.gauge, slices.Sorted(maps.Keys(base)))
			}

			// N single-row inserts, each its own transaction, on a pool of
			// the workload account that is closed afterwards (PostgreSQL
			// publishes a backend's statistics at the latest as it exits).
			db, err := d.Open(tg, dialect.OpenOptions{MaxConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			table := d.QuoteIdent("monitor_probe")
			for _, q := range []string{"DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (id INT PRIMARY KEY, v INT)"} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < n; i++ {
				if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+table+" VALUES (?, ?)"), i, i); err != nil {
					t.Fatal(err)
				}
			}
			// Dropping the table before PostgreSQL publishes its statistics
			// would discard them: drop it at the end.
			defer func() {
				if db, err := d.Open(tg, dialect.OpenOptions{MaxConns: 1}); err == nil {
					db.Exec("DROP TABLE " + table)
					db.Close()
				}
			}()
			db.Close()

			// Integrate the rates until they account for N rows (statistics
			// may be published late), for at most 10 s.
			var moved float64
			counter := tt.counters[0]
			for deadline := time.Now().Add(10 * time.Second); moved < n && time.Now().Before(deadline); {
				time.Sleep(200 * time.Millisecond)
				now := time.Now()
				out := map[string]float64{}
				if err := s.Sample(ctx, now, out); err != nil {
					t.Fatal(err)
				}
				for _, c := range tt.counters {
					if _, ok := out[c]; ok {
						counter = c
						break
					}
				}
				moved += out[counter] * now.Sub(at).Seconds()
				at = now
			}
			if moved < n-0.5 {
				t.Fatalf("%d inserts moved %s by %.1f", n, counter, moved)
			}
		})
	}
}

// TestLocalServerFacts finds the server's process, data directory,
// process tree and settings through the server itself.
func TestLocalServerFacts(t *testing.T) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(flavor), func(t *testing.T) {
			tg := sandboxtest.Start(t, flavor)
			if !IsLocal(tg) {
				t.Fatalf("a sandbox on %s is not local", tg.Host)
			}
			d, _ := dialect.For(tg.Family())
			db, err := d.Open(tg, dialect.OpenOptions{MaxConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			all, err := Snapshot(ctx, tg, db)
			if err != nil {
				t.Fatal(err)
			}
			want := map[target.Family]string{target.MySQL: "innodb_buffer_pool_size", target.Postgres: "shared_buffers"}[tg.Family()]
			if len(all) < 100 || all[want] == "" {
				t.Fatalf("snapshot of %d settings lacks %s", len(all), want)
			}
			for k, v := range all {
				if tg.Password != "" && v == tg.Password {
					t.Fatalf("setting %s holds the password", k)
				}
			}

			pid, err := dialect.MustFor(tg.Flavor).ServerPID(ctx, db, "/proc")
			if err != nil {
				t.Fatalf("server pid: %v", err)
			}
			if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
				t.Fatalf("server pid %d: %v", pid, err)
			}
			ps := NewProcessSampler("/proc", "server", pid, tg.Family() == target.Postgres)
			out := map[string]float64{}
			if err := ps.Sample(ctx, time.Now(), out); err != nil {
				t.Fatal(err)
			}
			if out["server.rss_mb"] <= 0 {
				t.Fatalf("server process figures: %v", out)
			}
			if tg.Family() == target.Postgres && out["server.procs"] < 3 {
				t.Fatalf("postmaster with %v children: its backends and workers are missing", out["server.procs"]-1)
			}
			if dir, err := dialect.MustFor(tg.Flavor).DataDir(ctx, db); err == nil && dir != "" {
				if _, err := StorageOf("/proc", "/sys", dir); err != nil {
					t.Errorf("storage of %s: %v", dir, err)
				}
			}
		})
	}
}

func TestIsLocal(t *testing.T) {
	tests := []struct {
		t    target.Target
		want bool
	}{
		{target.Target{Host: "127.0.0.1"}, true},
		{target.Target{Host: "127.0.1.1"}, true},
		{target.Target{Host: "localhost"}, true},
		{target.Target{Host: "::1"}, true},
		{target.Target{Host: "[::1]"}, true},
		{target.Target{Socket: "/run/mysqld/mysqld.sock"}, true},
		{target.Target{Host: ""}, true},
		{target.Target{Host: "db.example.com"}, false},
		{target.Target{Host: "10.0.0.5"}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s%s", tt.t.Host, tt.t.Socket), func(t *testing.T) {
			if got := IsLocal(tt.t); got != tt.want {
				t.Fatalf("IsLocal = %v, want %v", got, tt.want)
			}
		})
	}
}
