package monitor

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
)

// TestPostgresVersionsSampler: on the oldest and newest catalogued
// PostgreSQL majors the server sampler reads the statistics views of its
// major (pg_stat_bgwriter on 10; pg_stat_checkpointer, pg_stat_wal with
// pg_stat_io's WAL fsyncs on 18) without error, its counters see known
// inserts, and the wait profile's query runs and sees a sleeping session.
func TestPostgresVersionsSampler(t *testing.T) {
	const n = 200
	for _, name := range sandboxtest.PostgresVersions {
		t.Run(name, func(t *testing.T) {
			env := sandboxtest.EnvCatalogued(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := OpenServerSampler(ctx, env.Dialect, env.Target)
			if err != nil {
				t.Fatal(err)
			}
			defer s.(interface{ Close() error }).Close()
			at := time.Now()
			base := map[string]float64{}
			if err := s.Sample(ctx, at, base); err != nil {
				t.Fatal(err)
			}
			db, err := env.Dialect.Open(env.Target, dialect.OpenOptions{MaxConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"DROP TABLE IF EXISTS monitor_ver", "CREATE TABLE monitor_ver (id INT PRIMARY KEY)"} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < n; i++ {
				if _, err := db.ExecContext(ctx, "INSERT INTO monitor_ver VALUES ($1)", i); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			var moved float64
			keys := map[string]float64{}
			for deadline := time.Now().Add(10 * time.Second); moved < n && time.Now().Before(deadline); {
				time.Sleep(200 * time.Millisecond)
				now := time.Now()
				out := map[string]float64{}
				if err := s.Sample(ctx, now, out); err != nil {
					t.Fatal(err)
				}
				moved += out["counter.tup_inserted"] * now.Sub(at).Seconds()
				at = now
				maps.Copy(keys, out)
			}
			want := map[string][]string{
				"postgres-10": {"gauge.numbackends", "counter.checkpoints_timed", "counter.buffers_backend", "counter.wal_bytes"},
				"postgres-18": {"gauge.numbackends", "counter.checkpoints_timed", "counter.wal_records", "counter.wal_sync", "counter.wal_bytes"},
			}[name]
			for _, k := range want {
				if _, ok := keys[k]; !ok {
					t.Errorf("sample lacks %s: %v", k, slices.Sorted(maps.Keys(keys)))
				}
			}
			if _, ok := keys["counter.wal_records"]; ok && name == "postgres-10" {
				t.Errorf("PostgreSQL 10 has no pg_stat_wal, yet the sample has counter.wal_records")
			}

			if moved < n-0.5 {
				t.Errorf("%d inserts moved tup_inserted by %.1f", n, moved)
			}

			// The wait profile's query sees a session in pg_sleep (Timeout:PgSleep).
			src, ok := env.Dialect.(SessionWaitSource)
			if !ok {
				t.Fatalf("the PostgreSQL dialect is no SessionWaitSource")
			}
			sleeper, err := env.Dialect.Open(env.Target, dialect.OpenOptions{MaxConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer sleeper.Close()
			done := make(chan error, 1)
			go func() { _, err := sleeper.ExecContext(ctx, "SELECT pg_sleep(2)"); done <- err }()
			mon, err := env.Dialect.Open(env.Target, dialect.OpenOptions{MaxConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer mon.Close()
			seen := false
			for deadline := time.Now().Add(2 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				rows, err := mon.QueryContext(ctx, src.SessionWaitsQuery(), env.Target.Database)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var state, typ, event string
					if err := rows.Scan(&state, &typ, &event); err != nil {
						t.Fatal(err)
					}
					seen = seen || (state == "active" && typ == "Timeout" && event == "PgSleep")
				}
				rows.Close()
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !seen {
				t.Errorf("the wait query never saw the pg_sleep session as Timeout:PgSleep")
			}
		})
	}
}
