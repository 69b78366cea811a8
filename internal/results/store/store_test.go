package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// testRun returns a fully populated run; i varies its start time, numbers
// and tags, and nIntervals sets how many report intervals it has.
func testRun(i, nIntervals int) *summary.Run {
	start := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600)).Add(time.Duration(i) * time.Minute)
	tpmc := 12345.5 + float64(i)
	r := &summary.Run{
		Schema:    summary.Schema,
		Status:    summary.StatusComplete,
		StartedAt: start,
		EndedAt:   start.Add(70 * time.Second),
		Workload:  "tpcc",
		Target: summary.Target{
			Flavor:  "mariadb",
			Version: "11.4.2-MariaDB",
			DSN:     "mysql://dbarena:***@127.0.0.1:3306/dbarena",
			Sandbox: "default",
		},
		Params:    map[string]any{"warehouses": 10, "schema": "standard", "fk": true, "ratio": 0.5, "list": []any{"a", 1}},
		Threads:   16,
		Rate:      500,
		DurationS: 60,
		WarmupS:   10,
		Totals: summary.Totals{
			Events:       1000 + int64(i),
			Queries:      summary.Queries{Read: 5000, Write: 3000, Other: 2000, Total: 10000},
			Errors:       3,
			Retries:      2,
			Reconnects:   1,
			ErrorsByCode: map[string]int64{"1213": 2, "1205": 1},
			Late:         4,
			Dropped:      1,
		},
		Throughput: summary.Throughput{TPS: 16.6 + float64(i), QPS: 166.6},
		LatencyMS:  summary.Latency{Min: 0.1, Avg: 2.5, P50: 2, P90: 4, P95: 5.5 + float64(i), P99: 9, P999: 20, Max: 31.25},
		PerType: map[string]summary.Type{
			"new_order": {Count: 450, Errors: 2, Retries: 1, LatencyMS: summary.Latency{P90: 4.5, Max: 30}},
			"payment":   {Count: 430, LatencyMS: summary.Latency{P90: 2.5, Max: 10}},
			"delivery":  {Count: 40, Errors: 1, LatencyMS: summary.Latency{P90: 12, Max: 31.25}},
		},
		Checks: []summary.Check{
			{Name: "new_order_mix", OK: true, Value: 45.1, Limit: 45},
			{Name: "payment_p90_ms", OK: false, Value: 6, Limit: 5},
		},
		TpmC:           &tpmc,
		Tags:           map[string]string{"series": fmt.Sprintf("s%d", i%2), "host": "box1"},
		ServerCounters: map[string]int64{"Com_select": 5000, "Com_commit": 900},
		Settings:       map[string]string{"innodb_buffer_pool_size": "1073741824", "sync_binlog": "1"},
		Host:           summary.Host{Hostname: "box1", CPUModel: "AMD EPYC 7763", Cores: 8, MemoryMB: 32000, Kernel: "6.8.0", OS: "Ubuntu 24.04 LTS"},
		Dbarena:        summary.Dbarena{Version: "v0.1.0", Command: []string{"dbarena", "run", "tpcc", "--threads", "16"}},
		Histogram:      "HISTFAAAACl4nJNpmSzMwMDAyQABzFCaEUTPmnGTjU3Qv3M/OhVXOjMDAwAjMwXM",
	}
	for k := range nIntervals {
		r.Intervals = append(r.Intervals, summary.Interval{
			TS: float64(k + 1), Threads: 16, TPS: 16 + float64(k), QPS: 160, ReadQPS: 80, WriteQPS: 60, OtherQPS: 20,
			P95MS: 5.5, Errors: int64(k % 2), Reconnects: int64(k % 3), Late: int64(k % 5),
		})
	}
	return r
}

// jsonRoundTrip returns what v looks like after encoding and decoding,
// the form in which the store gives runs back.
func jsonRoundTrip(tb testing.TB, r *summary.Run) *summary.Run {
	tb.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	var out summary.Run
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatalf("unmarshal: %v", err)
	}
	return &out
}

func openTest(tb testing.TB, path string) *Store {
	tb.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

func openDefaultTest(tb testing.TB, path string) *Store {
	tb.Helper()
	s, err := OpenDefault(context.Background(), path)
	if err != nil {
		tb.Fatalf("OpenDefault(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

func save(tb testing.TB, s *Store, r *summary.Run) int64 {
	tb.Helper()
	id, err := s.SaveRun(context.Background(), r)
	if err != nil {
		tb.Fatalf("SaveRun: %v", err)
	}
	return id
}

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"DBARENA_HOME", map[string]string{"DBARENA_HOME": "/data/arena", "HOME": "/home/u"}, "/data/arena/results.db"},
		{"HOME", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/dbarena/results.db"},
		{"empty DBARENA_HOME", map[string]string{"DBARENA_HOME": "", "HOME": "/home/u"}, "/home/u/.local/share/dbarena/results.db"},
		{"nothing", nil, ".local/share/dbarena/results.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultPath(func(k string) string { return tt.env[k] })
			if got != filepath.FromSlash(tt.want) {
				t.Errorf("DefaultPath = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSaveRunRoundTrip(t *testing.T) {
	minimal := &summary.Run{Status: summary.StatusFailed, Workload: "oltp_read_only", Error: "connection refused"}
	interrupted := testRun(1, 3)
	interrupted.Status = summary.StatusInterrupted
	interrupted.TpmC = nil
	interrupted.PerType = nil
	interrupted.Tags = nil

	tests := []struct {
		name string
		run  *summary.Run
	}{
		{"fully populated", testRun(0, 60)},
		{"interrupted without optional parts", interrupted},
		{"minimal failed run", minimal},
	}
	forEachBackend(t, func(t *testing.T, s *Store, _ string) { testSaveRunRoundTrip(t, s, tests) })
}

func testSaveRunRoundTrip(t *testing.T, s *Store, tests []struct {
	name string
	run  *summary.Run
}) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := save(t, s, tt.run)
			if id <= 0 || tt.run.ID != id {
				t.Fatalf("SaveRun returned id %d, run.ID = %d", id, tt.run.ID)
			}
			want := jsonRoundTrip(t, tt.run)
			if want.Schema == "" {
				want.Schema = summary.Schema
			}
			got, err := s.Run(context.Background(), id)
			if err != nil {
				t.Fatalf("Run(%d): %v", id, err)
			}
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.MarshalIndent(got, "", " ")
				wb, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("Run(%d) differs from the saved run\ngot:  %s\nwant: %s", id, gb, wb)
			}
			if !got.StartedAt.Equal(tt.run.StartedAt) {
				t.Errorf("StartedAt = %v, want %v", got.StartedAt, tt.run.StartedAt)
			}
			if got.Histogram != tt.run.Histogram {
				t.Errorf("Histogram = %q, want %q", got.Histogram, tt.run.Histogram)
			}
		})
	}

	t.Run("child rows", func(t *testing.T) {
		r := testRun(2, 7)
		id := save(t, s, r)
		var n int
		for _, q := range []struct {
			table string
			want  int
		}{{"intervals", 7}, {"run_types", 3}, {"run_tags", 2}} {
			err := s.db.QueryRow(s.be.rebind("SELECT count(*) FROM "+q.table+" WHERE run_id = ?"), id).Scan(&n)
			if err != nil || n != q.want {
				t.Errorf("%s rows = %d (%v), want %d", q.table, n, err, q.want)
			}
		}
		var p95, tpmc float64
		var status, started string
		if err := s.db.QueryRow(s.be.rebind("SELECT p95_ms, tpmc, status, started_at FROM runs WHERE id = ?"), id).Scan(&p95, &tpmc, &status, &started); err != nil {
			t.Fatal(err)
		}
		if p95 != r.LatencyMS.P95 || tpmc != *r.TpmC || status != r.Status || started != "2025-03-01T11:02:00.123456789Z" {
			t.Errorf("columns p95=%v tpmc=%v status=%q started=%q", p95, tpmc, status, started)
		}
	})
}

func TestSaveRunRejects(t *testing.T) {
	tests := []struct {
		name string
		run  *summary.Run
	}{
		{"nil", nil},
		{"no status", &summary.Run{Workload: "tpcc"}},
		{"unknown status", &summary.Run{Workload: "tpcc", Status: "done"}},
		{"no workload", &summary.Run{Status: summary.StatusComplete}},
		{"NaN", func() *summary.Run { r := testRun(0, 1); r.Params["x"] = nanValue(); return r }()},
	}
	s := openTest(t, filepath.Join(t.TempDir(), "results.db"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.SaveRun(context.Background(), tt.run); err == nil {
				t.Fatal("SaveRun succeeded, want an error")
			}
			if tt.run != nil && tt.run.ID != 0 {
				t.Errorf("run.ID = %d after a failed save", tt.run.ID)
			}
			rows, err := s.List(context.Background(), Filter{})
			if err != nil || len(rows) != 0 {
				t.Errorf("List after failed save = %d rows (%v), want none", len(rows), err)
			}
		})
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestRunNotFound(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "results.db"))
	save(t, s, testRun(0, 1))
	for _, id := range []int64{0, -1, 2, 1 << 40} {
		t.Run(fmt.Sprint(id), func(t *testing.T) {
			r, err := s.Run(context.Background(), id)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Run(%d) = %v, %v; want ErrNotFound", id, r, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(id)) {
				t.Errorf("error %q does not name the id", err)
			}
		})
	}
}

func TestList(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store, _ string) { testList(t, s) })
}

func testList(t *testing.T, s *Store) {
	// Runs 1..6; odd i have series=s1. Runs 5 and 6 are oltp; run 6 has no tags.
	var ids []int64
	for i := range 6 {
		r := testRun(i, 2)
		if i >= 4 {
			r.Workload = "oltp_read_write"
		}
		if i == 5 {
			r.Tags = nil
		}
		if i == 1 || i == 2 {
			r.Plan = &summary.PlanRef{Name: "sweep", Cell: "c1", Round: i}
		}
		ids = append(ids, save(t, s, r))
	}
	// A run saved later but started earlier sorts by its start time.
	early := testRun(-10, 1)
	earlyID := save(t, s, early)

	rev := func(xs ...int64) []int64 { return xs }
	tests := []struct {
		name string
		f    Filter
		want []int64
	}{
		{"all newest first", Filter{}, rev(ids[5], ids[4], ids[3], ids[2], ids[1], ids[0], earlyID)},
		{"workload", Filter{Workload: "oltp_read_write"}, rev(ids[5], ids[4])},
		{"tag", Filter{Tags: map[string]string{"series": "s1"}}, rev(ids[3], ids[1])},
		{"two tags", Filter{Tags: map[string]string{"series": "s0", "host": "box1"}}, rev(ids[4], ids[2], ids[0], earlyID)},
		{"tag and workload", Filter{Tags: map[string]string{"series": "s0"}, Workload: "oltp_read_write"}, rev(ids[4])},
		{"limit", Filter{Limit: 2}, rev(ids[5], ids[4])},
		{"limit and tag", Filter{Limit: 1, Tags: map[string]string{"host": "box1"}}, rev(ids[4])},
		{"ids", Filter{IDs: []int64{ids[0], ids[3], 999}}, rev(ids[3], ids[0])},
		{"plan", Filter{Plan: "sweep"}, rev(ids[2], ids[1])},
		{"unknown plan", Filter{Plan: "nope"}, nil},
		{"no match", Filter{Tags: map[string]string{"series": "nope"}}, nil},
		{"unknown workload", Filter{Workload: "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := s.List(context.Background(), tt.f)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			var got []int64
			for _, r := range rows {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("List(%+v) ids = %v, want %v", tt.f, got, tt.want)
			}
		})
	}

	t.Run("row fields", func(t *testing.T) {
		rows, err := s.List(context.Background(), Filter{IDs: []int64{ids[1], ids[5]}})
		if err != nil {
			t.Fatal(err)
		}
		r := testRun(1, 2)
		want := RunRow{
			ID: ids[1], StartedAt: r.StartedAt, Status: r.Status, Workload: r.Workload,
			Flavor: r.Target.Flavor, Version: r.Target.Version, Threads: r.Threads,
			TPS: r.Throughput.TPS, QPS: r.Throughput.QPS, P95MS: r.LatencyMS.P95, DurationS: r.DurationS,
			Tags: r.Tags,
		}
		got := rows[1]
		if !got.StartedAt.Equal(want.StartedAt) {
			t.Errorf("StartedAt = %v, want %v", got.StartedAt, want.StartedAt)
		}
		got.StartedAt = want.StartedAt
		if !reflect.DeepEqual(got, want) {
			t.Errorf("row = %+v\nwant  %+v", got, want)
		}
		if rows[0].Tags != nil {
			t.Errorf("untagged run has Tags %v, want nil", rows[0].Tags)
		}
	})
}

func TestOpenMigrations(t *testing.T) {
	t.Run("idempotent on reopen", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "results.db")
		var id int64
		for i := range 3 {
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatalf("open #%d: %v", i, err)
			}
			var v int
			if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations()) {
				t.Errorf("open #%d: user_version = %d (%v), want %d", i, v, err, len(migrations()))
			}
			if i == 0 {
				id = save(t, s, testRun(0, 5))
			}
			if _, err := s.Run(context.Background(), id); err != nil {
				t.Errorf("open #%d: Run(%d): %v", i, id, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("newer schema refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "results.db")
		s := openTest(t, path)
		if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations())+1)); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("Open of a newer schema = %v, want a 'newer' error", err)
		}
	})
	t.Run("connection settings", func(t *testing.T) {
		s := openTest(t, filepath.Join(t.TempDir(), "results.db"))
		for _, p := range []struct{ pragma, want string }{
			{"journal_mode", "wal"},
			{"synchronous", "2"},
			{"foreign_keys", "1"},
			{"busy_timeout", fmt.Sprint(busyTimeout.Milliseconds())},
		} {
			var got string
			if err := s.db.QueryRow("PRAGMA " + p.pragma).Scan(&got); err != nil || got != p.want {
				t.Errorf("PRAGMA %s = %q (%v), want %q", p.pragma, got, err, p.want)
			}
		}
	})
	t.Run("odd characters in path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "we?ird #dir%20", "res ults.db")
		s := openDefaultTest(t, path)
		save(t, s, testRun(0, 1))
		if _, err := os.Stat(path); err != nil {
			t.Errorf("store file not at %s: %v", path, err)
		}
	})
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "dbarena")
	path := filepath.Join(dir, "results.db")
	s := openDefaultTest(t, path)
	save(t, s, testRun(0, 1))
	for _, tt := range []struct {
		name string
		path string
		want os.FileMode
	}{
		{"parent dir", dir, 0o700 | os.ModeDir},
		{"grandparent dir", filepath.Dir(dir), 0o700 | os.ModeDir},
		{"database", path, 0o600},
		{"WAL", path + "-wal", 0o600},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fi, err := os.Stat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tt.want {
				t.Errorf("mode of %s = %v, want %v", tt.path, fi.Mode(), tt.want)
			}
		})
	}
}

func TestSaveRunMasksPasswords(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r := testRun(0, 2)
	r.Target.DSN = "mysql://root:" + secret + "@127.0.0.1:3306/sbtest"
	r.Error = "connect postgres://u:" + secret + "@h/db: refused"
	r.Dbarena.Command = []string{"dbarena", "run", "--target=mysql://root:" + secret + "@h/db", "--password", secret}
	id := save(t, s, r)
	if r.Target.DSN != "mysql://root:"+secret+"@127.0.0.1:3306/sbtest" {
		t.Errorf("SaveRun changed the caller's DSN to %q", r.Target.DSN)
	}
	got, err := s.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, got, want string }{
		{"dsn", got.Target.DSN, "mysql://root:***@127.0.0.1:3306/sbtest"},
		{"error", got.Error, "connect postgres://u:***@h/db: refused"},
		{"command", strings.Join(got.Dbarena.Command, " "), "dbarena run --target=mysql://root:***@h/db --password ***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("stored %s = %q, want %q", tt.name, tt.got, tt.want)
			}
		})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("not in any file", func(t *testing.T) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), secret) {
				t.Errorf("%s contains the password", e.Name())
			}
		}
	})
}

func TestConcurrentSaveRunGoroutines(t *testing.T) {
	const perWriter = 25
	tests := []struct {
		name        string
		sharedStore bool
	}{
		{"one store shared", true},
		{"a store each", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			shared := openTest(t, path)
			var wg sync.WaitGroup
			errs := make(chan error, 2*perWriter)
			for w := range 2 {
				s := shared
				if !tt.sharedStore {
					s = openTest(t, path)
				}
				wg.Go(func() {
					for i := range perWriter {
						if _, err := s.SaveRun(context.Background(), testRun(w*perWriter+i, 30)); err != nil {
							errs <- fmt.Errorf("writer %d run %d: %w", w, i, err)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			checkStore(t, path, 2*perWriter)
		})
	}
}

// checkStore verifies the file at path: integrity_check passes, every run
// is whole (its child rows match its summary) and readable, and, unless
// wantRuns < 0, there are exactly wantRuns runs. It returns the run ids.
func checkStore(tb testing.TB, path string, wantRuns int) []int64 {
	tb.Helper()
	s := openTest(tb, path)
	ctx := context.Background()
	var ok string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		tb.Fatalf("integrity_check = %q (%v)", ok, err)
	}
	rows, err := s.db.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		tb.Fatal(err)
	}
	if rows.Next() {
		tb.Error("foreign_key_check reports orphan rows")
	}
	rows.Close()

	type stored struct {
		id                 int64
		doc                string
		nIv, nTypes, nTags int
	}
	var runs []stored
	rows, err = s.db.QueryContext(ctx, `SELECT id, summary,
		(SELECT count(*) FROM intervals WHERE run_id = runs.id),
		(SELECT count(*) FROM run_types WHERE run_id = runs.id),
		(SELECT count(*) FROM run_tags WHERE run_id = runs.id)
		FROM runs ORDER BY id`)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var r stored
		if err := rows.Scan(&r.id, &r.doc, &r.nIv, &r.nTypes, &r.nTags); err != nil {
			tb.Fatal(err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	rows.Close()

	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.id)
		run, err := s.Run(ctx, r.id)
		if err != nil {
			tb.Errorf("run %d unreadable: %v (summary %.40q)", r.id, err, r.doc)
			continue
		}
		if run.ID != r.id || len(run.Intervals) != r.nIv || len(run.PerType) != r.nTypes || len(run.Tags) != r.nTags {
			tb.Errorf("run %d is partial: summary has %d intervals, %d types, %d tags; tables have %d, %d, %d",
				r.id, len(run.Intervals), len(run.PerType), len(run.Tags), r.nIv, r.nTypes, r.nTags)
		}
	}
	if wantRuns >= 0 && len(ids) != wantRuns {
		tb.Errorf("store has %d runs, want %d", len(ids), wantRuns)
	}
	if n := len(slices.Compact(slices.Clone(ids))); n != len(ids) {
		tb.Errorf("duplicate run ids: %v", ids)
	}
	return ids
}

func BenchmarkSaveRun(b *testing.B) {
	for _, n := range []int{0, 60, 600} {
		b.Run(fmt.Sprintf("intervals=%d", n), func(b *testing.B) {
			s := openTest(b, filepath.Join(b.TempDir(), "results.db"))
			r := testRun(0, n)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.SaveRun(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
