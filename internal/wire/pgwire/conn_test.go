package pgwire_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	. "github.com/dbarena/dbarena/internal/wire/pgwire"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// server starts (or reuses) the test binary's PostgreSQL sandbox and
// returns a TCP wire configuration (SCRAM) and a database/sql pool.
func server(t testing.TB) (Config, *sql.DB, target.Target) {
	t.Helper()
	tgt := sandboxtest.Start(t, target.FlavorPostgres)
	cfg := Config{Addr: net.JoinHostPort(tgt.Host, strconv.Itoa(tgt.Port)), User: tgt.User,
		Password: tgt.Password, Database: tgt.Database, Timeout: 30 * time.Second}
	db, err := dialect.PostgresDialect{}.Open(tgt, dialect.OpenOptions{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return cfg, db, tgt
}

func dial(t *testing.T, cfg Config) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPreparedAndUnprepared(t *testing.T) {
	cfg, db, _ := server(t)
	if _, err := db.Exec(`DROP TABLE IF EXISTS pw_t; CREATE TABLE pw_t (id int PRIMARY KEY, k bigint, s smallint, c char(10), v varchar(20), f float8, r real, n numeric, b bytea, ok bool)`); err != nil {
		t.Fatal(err)
	}
	for _, np := range []bool{false, true} {
		t.Run("netpoll="+strconv.FormatBool(np), func(t *testing.T) {
			cfg := cfg
			cfg.Netpoll = np
			c := dial(t, cfg)
			if _, err := c.Exec("DELETE FROM pw_t", nil); err != nil {
				t.Fatal(err)
			}
			ins, err := c.Prepare("INSERT INTO pw_t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
			if err != nil {
				t.Fatal(err)
			}
			if ins.NumParams() != 10 {
				t.Fatalf("NumParams = %d", ins.NumParams())
			}
			n, err := ins.Exec([]any{int64(1), int64(1) << 40, 7, "abc", "héllo", 2.5, 1.5, "12.25", []byte{0, 1, 2}, true})
			if err != nil || n != 1 {
				t.Fatalf("insert: %d, %v", n, err)
			}
			// NULLs, and text arguments for numeric parameters.
			if _, err := ins.Exec([]any{"2", nil, nil, nil, nil, nil, nil, nil, nil, nil}); err != nil {
				t.Fatal(err)
			}
			// Unprepared with arguments (extended, unnamed).
			if n, err := c.Exec("UPDATE pw_t SET k = k + $1 WHERE id = $2", []any{int64(5), int64(1)}); err != nil || n != 1 {
				t.Fatalf("update: %d, %v", n, err)
			}
			sel, err := c.Prepare("SELECT id, k, s, c, v, f, r, n, b, ok FROM pw_t WHERE id = $1")
			if err != nil {
				t.Fatal(err)
			}
			check := func(t *testing.T, run func(fn func(r *Row) error) error) {
				t.Helper()
				rows := 0
				err := run(func(r *Row) error {
					rows++
					if r.Len() != 10 || r.Name(1) != "k" {
						t.Errorf("Len %d, Name(1) %q", r.Len(), r.Name(1))
					}
					id, err := r.Int64(0)
					k, err2 := r.Int64(1)
					s, err3 := r.Int64(2)
					f, err4 := r.Float64(5)
					rr, err5 := r.Float64(6)
					num, err6 := r.Float64(7)
					if err := errors.Join(err, err2, err3, err4, err5, err6); err != nil {
						t.Fatal(err)
					}
					if id != 1 || k != 1<<40+5 || s != 7 || f != 2.5 || rr != 1.5 || num != 12.25 {
						t.Errorf("values %d %d %d %g %g %g", id, k, s, f, rr, num)
					}
					for i, want := range []string{"1", "1099511627781", "7", "abc       ", "héllo", "2.5", "1.5", "12.25"} {
						if got := string(r.Bytes(i)); got != want {
							t.Errorf("Bytes(%d) = %q, want %q", i, got, want)
						}
					}
					return nil
				})
				if err != nil || rows != 1 {
					t.Fatalf("rows %d, err %v", rows, err)
				}
			}
			t.Run("prepared", func(t *testing.T) {
				check(t, func(fn func(*Row) error) error { return sel.QueryFunc([]any{int64(1)}, fn) })
			})
			t.Run("extended", func(t *testing.T) {
				check(t, func(fn func(*Row) error) error {
					return c.QueryFunc("SELECT id, k, s, c, v, f, r, n, b, ok FROM pw_t WHERE id = $1", []any{1}, fn)
				})
			})
			t.Run("simple", func(t *testing.T) {
				check(t, func(fn func(*Row) error) error {
					return c.QueryFunc("SELECT id, k, s, c, v, f, r, n, b, ok FROM pw_t WHERE id = 1", nil, fn)
				})
			})
			t.Run("bytea and bool", func(t *testing.T) {
				err := sel.QueryFunc([]any{int64(1)}, func(r *Row) error {
					if b := r.Bytes(8); string(b) != "\x00\x01\x02" {
						t.Errorf("bytea %q", b)
					}
					if b := r.Bytes(9); string(b) != "t" {
						t.Errorf("bool %q", b)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
			t.Run("nulls", func(t *testing.T) {
				err := sel.QueryFunc([]any{int64(2)}, func(r *Row) error {
					for i := 1; i < r.Len(); i++ {
						if !r.IsNull(i) || r.Bytes(i) != nil {
							t.Errorf("column %d not NULL", i)
						}
					}
					if _, err := r.Int64(1); err == nil {
						t.Error("Int64 of NULL: no error")
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
			// Query skips rows; Exec of a SELECT counts them.
			if err := sel.Query([]any{int64(1)}); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Exec("SELECT * FROM pw_t", nil); err != nil || n != 2 {
				t.Fatalf("select count %d, %v", n, err)
			}
			// A callback's error comes back once the reply is read; the
			// connection stays in step.
			boom := errors.New("boom")
			if err := c.QueryFunc("SELECT generate_series(1, 3)", nil, func(*Row) error { return boom }); err != boom {
				t.Fatalf("callback error: %v", err)
			}
			if err := sel.Close(); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Exec("BEGIN; DELETE FROM pw_t; COMMIT", nil); err != nil || n != 0 {
				t.Fatalf("multi-statement: %d, %v", n, err)
			}
			if c.TxStatus() != 'I' {
				t.Fatalf("TxStatus %q", c.TxStatus())
			}
			if c.ParameterStatus("server_version") == "" {
				t.Fatal("no server_version")
			}
		})
	}
}

func TestServerErrors(t *testing.T) {
	cfg, _, _ := server(t)
	c := dial(t, cfg)
	var pe *Error
	if _, err := c.Exec("SELECT 1/0", nil); !errors.As(err, &pe) || pe.Code != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
	if _, err := c.Prepare("SELECT * FROM no_such_table"); !errors.As(err, &pe) || pe.Code != "42P01" {
		t.Fatalf("prepare: %v", err)
	}
	if err := c.QueryFunc("SELECT $1::int", []any{"x"}, nil); !errors.As(err, &pe) || pe.Code != "22P02" {
		t.Fatalf("bad argument: %v", err)
	}
	// Still in step after errors.
	if n, err := c.Exec("SELECT 1", nil); err != nil || n != 1 {
		t.Fatalf("after errors: %d, %v", n, err)
	}
	if _, err := c.Exec("SELECT $1", []any{struct{}{}}); err == nil {
		t.Fatal("unsupported argument type: no error")
	}
	if n, err := c.Exec("SELECT 1", nil); err != nil || n != 1 {
		t.Fatalf("after a refused argument: %d, %v", n, err)
	}
	d := dialect.PostgresDialect{}
	cases := []struct {
		code string
		kind dialect.Kind
	}{
		{"40001", dialect.Retry}, {"40P01", dialect.Retry}, {"57P01", dialect.ConnLost}, {"53300", dialect.Fatal},
	}
	for _, tc := range cases {
		_, err := c.Exec("DO $$BEGIN RAISE EXCEPTION USING ERRCODE = '"+tc.code+"'; END$$", nil)
		if !errors.As(err, &pe) || pe.Code != tc.code {
			t.Fatalf("raise %s: %v", tc.code, err)
		}
		if cl := d.Classify(err); cl.Kind != tc.kind || cl.Code != tc.code {
			t.Errorf("Classify(%s) = %+v", tc.code, cl)
		}
	}
	if _, err := c.Exec("SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
}

func TestLostConnection(t *testing.T) {
	cfg, db, _ := server(t)
	c := dial(t, cfg)
	var pid int
	if err := c.QueryFunc("SELECT pg_backend_pid()", nil, func(r *Row) error {
		n, err := r.Int64(0)
		pid = int(n)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec("SELECT 1", nil)
	cl := dialect.PostgresDialect{}.Classify(err)
	if cl.Kind != dialect.ConnLost {
		t.Fatalf("after pg_terminate_backend: %v classified %+v", err, cl)
	}
}

func TestAbortFromAnotherGoroutine(t *testing.T) {
	cfg, db, _ := server(t)
	for _, np := range []bool{false, true} {
		t.Run("netpoll="+strconv.FormatBool(np), func(t *testing.T) {
			cfg := cfg
			cfg.Netpoll = np
			c := dial(t, cfg)
			marker := fmt.Sprintf("pgwire-abort-%d", time.Now().UnixNano())
			done := make(chan error, 1)
			go func() {
				_, err := c.Exec("SELECT pg_sleep(60) /* "+marker+" */", nil)
				done <- err
			}()
			// Abort once the statement runs on the server.
			deadline := time.Now().Add(30 * time.Second)
			for {
				var n int
				if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND state = 'active' AND pid <> pg_backend_pid()", marker).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the statement never started")
				}
				time.Sleep(10 * time.Millisecond)
			}
			c.Abort()
			if err := <-done; !errors.Is(err, ErrClosed) {
				t.Fatalf("aborted statement: %v", err)
			}
			if _, err := c.Exec("SELECT 1", nil); !errors.Is(err, ErrClosed) {
				t.Fatalf("after Abort: %v", err)
			}
			// The cancel request ends the statement on the server too.
			for {
				var n int
				if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND state = 'active' AND pid <> pg_backend_pid()", marker).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the statement still runs on the server")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	cfg, _, _ := server(t)
	c := dial(t, cfg)
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := c.Exec("SELECT pg_sleep(30)", nil)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("past the deadline: %v", err)
	}
}

func TestPipeline(t *testing.T) {
	cfg, db, _ := server(t)
	if _, err := db.Exec(`DROP TABLE IF EXISTS pw_p; CREATE TABLE pw_p (id int PRIMARY KEY, v int CHECK (v < 100))`); err != nil {
		t.Fatal(err)
	}
	c := dial(t, cfg)
	ins, err := c.Prepare("INSERT INTO pw_p VALUES ($1, $2)")
	if err != nil {
		t.Fatal(err)
	}
	p := c.StartPipeline()
	if _, err := c.Exec("SELECT 1", nil); err == nil {
		t.Fatal("Exec inside a pipeline: no error")
	}
	for i := 1; i <= 3; i++ {
		if err := p.Exec(ins, []any{i, i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.ExecQuery("UPDATE pw_p SET v = v + $1", []any{10}); err != nil {
		t.Fatal(err)
	}
	var got []int64
	if err := p.Sync(func(i int, n int64, err error) {
		if err != nil || i != len(got) {
			t.Errorf("statement %d: %v", i, err)
		}
		got = append(got, n)
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[3] != 3 {
		t.Fatalf("affected %v", got)
	}
	// Rows read inside a pipeline, beside statements whose rows are not.
	sel, err := c.Prepare("SELECT v FROM pw_p WHERE id <= $1 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	p = c.StartPipeline()
	var vals []int64
	read := func(r *Row) error {
		v, err := r.Int64(0)
		vals = append(vals, v)
		return err
	}
	_ = p.Exec(sel, []any{3})
	_ = p.QueryFunc(sel, []any{2}, read)
	_ = p.Exec(sel, []any{3})
	_ = p.QueryFunc(sel, []any{1}, read)
	if err := p.Sync(nil); err != nil || len(vals) != 3 || vals[0] != 11 || vals[1] != 12 || vals[2] != 11 {
		t.Fatalf("rows in a pipeline: %v, %v", vals, err)
	}
	// A failure inside: the failed statement is reported, the rest skipped,
	// and the implicit transaction rolled back.
	p = c.StartPipeline()
	_ = p.Exec(ins, []any{4, 4})
	_ = p.Exec(ins, []any{5, 500})
	_ = p.Exec(ins, []any{6, 6})
	var calls []int
	err = p.Sync(func(i int, _ int64, err error) { calls = append(calls, i) })
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != "23514" || len(calls) != 2 {
		t.Fatalf("failed pipeline: %v, calls %v", err, calls)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM pw_p").Scan(&n); err != nil || n != 3 {
		t.Fatalf("rows %d, %v", n, err)
	}
	if _, err := c.Exec("SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
}

// TestPipelineSyncPoint: a SyncPoint splits a pipeline into implicit
// transactions that fail apart (pgbench's \syncpipeline): a failure skips
// the rest of its segment only, and the next segment runs and is reported
// under its own statement numbers.
func TestPipelineSyncPoint(t *testing.T) {
	cfg, db, _ := server(t)
	if _, err := db.Exec(`DROP TABLE IF EXISTS pw_s; CREATE TABLE pw_s (id int PRIMARY KEY, v int CHECK (v < 100), x bigint)`); err != nil {
		t.Fatal(err)
	}
	c := dial(t, cfg)
	ins, err := c.Prepare("INSERT INTO pw_s VALUES ($1, $2, txid_current())")
	if err != nil {
		t.Fatal(err)
	}
	// Segments {1, 2} and {3}: two transactions.
	p := c.StartPipeline()
	_ = p.Exec(ins, []any{1, 1})
	_ = p.Exec(ins, []any{2, 2})
	if err := p.SyncPoint(); err != nil {
		t.Fatal(err)
	}
	_ = p.Exec(ins, []any{3, 3})
	var calls []int
	if err := p.Sync(func(i int, n int64, err error) {
		if err != nil || n != 1 {
			t.Errorf("statement %d: %d, %v", i, n, err)
		}
		calls = append(calls, i)
	}); err != nil || len(calls) != 3 || calls[2] != 2 {
		t.Fatalf("sync: %v, calls %v", err, calls)
	}
	var rows, xids int
	if err := db.QueryRow("SELECT count(*), count(DISTINCT x) FROM pw_s").Scan(&rows, &xids); err != nil || rows != 3 || xids != 2 {
		t.Fatalf("%d rows in %d transactions (%v), want 3 in 2", rows, xids, err)
	}
	// A failure in the first segment rolls back that segment only: {4
	// (rolled back), 5 (fails), 6 (skipped)} then {7, 8} commit.
	p = c.StartPipeline()
	_ = p.Exec(ins, []any{4, 4})
	_ = p.Exec(ins, []any{5, 500})
	_ = p.Exec(ins, []any{6, 6})
	_ = p.SyncPoint()
	_ = p.Exec(ins, []any{7, 7})
	_ = p.Exec(ins, []any{8, 8})
	calls = calls[:0]
	var errs []int
	err = p.Sync(func(i int, _ int64, err error) {
		calls = append(calls, i)
		if err != nil {
			errs = append(errs, i)
		}
	})
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != "23514" || fmt.Sprint(calls) != "[0 1 3 4]" || fmt.Sprint(errs) != "[1]" {
		t.Fatalf("failed segment: %v, calls %v, errors %v; want 23514, [0 1 3 4], [1]", err, calls, errs)
	}
	var ids string
	if err := db.QueryRow("SELECT string_agg(id::text, ',' ORDER BY id) FROM pw_s").Scan(&ids); err != nil || ids != "1,2,3,7,8" {
		t.Fatalf("rows %q (%v), want 1,2,3,7,8", ids, err)
	}
	if _, err := c.Exec("SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
}

// Empty (not nil) arguments still use the extended protocol, which runs one
// statement: two are refused, as by any extended-protocol client.
func TestExtendedWithoutArguments(t *testing.T) {
	cfg, _, _ := server(t)
	c := dial(t, cfg)
	if _, err := c.Exec("SELECT 1; SELECT 2", nil); err != nil {
		t.Fatalf("simple protocol: %v", err)
	}
	var pe *Error
	if _, err := c.Exec("SELECT 1; SELECT 2", []any{}); !errors.As(err, &pe) || pe.Code != "42601" {
		t.Fatalf("extended protocol: %v, want 42601 (cannot insert multiple commands)", err)
	}
	if n, err := c.Exec("SELECT 1", []any{}); err != nil || n != 1 {
		t.Fatalf("extended protocol: %d, %v", n, err)
	}
}

// TestPointerArguments binds *int64, *string and *[]byte arguments, read
// through at each call (nil pointers are NULL), prepared and unprepared.
func TestPointerArguments(t *testing.T) {
	cfg, db, _ := server(t)
	if _, err := db.Exec(`DROP TABLE IF EXISTS pw_ptr; CREATE TABLE pw_ptr (id int PRIMARY KEY, k bigint, c char(10), b bytea)`); err != nil {
		t.Fatal(err)
	}
	c := dial(t, cfg)
	ins, err := c.Prepare("INSERT INTO pw_ptr VALUES ($1, $2, $3, $4)")
	if err != nil {
		t.Fatal(err)
	}
	id, k, s, b := new(int64), new(int64), new(string), new([]byte)
	args := []any{id, k, s, b}
	for i := int64(1); i <= 2; i++ { // the same args, changed in place
		*id, *k, *s, *b = i, i<<40, "c"+strconv.FormatInt(i, 10), []byte{byte(i), 0}
		if n, err := ins.Exec(args); err != nil || n != 1 {
			t.Fatalf("insert %d: %d, %v", i, n, err)
		}
	}
	if _, err := ins.Exec([]any{int64(3), (*int64)(nil), (*string)(nil), (*[]byte)(nil)}); err != nil {
		t.Fatal(err)
	}
	*id, *k, *b = 2, 5, []byte{9}
	if n, err := c.Exec("UPDATE pw_ptr SET k = k + $1, b = $2 WHERE id = $3", []any{k, b, id}); err != nil || n != 1 {
		t.Fatalf("unprepared update: %d, %v", n, err)
	}
	var got []string
	err = c.QueryFunc("SELECT id, k, c, b, k IS NULL AND c IS NULL AND b IS NULL FROM pw_ptr ORDER BY id", nil, func(r *Row) error {
		got = append(got, fmt.Sprintf("%s %s %q %x %s", r.Bytes(0), r.Bytes(1), r.Bytes(2), r.Bytes(3), r.Bytes(4)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`1 1099511627776 "c1        " 5c7830313030 f`, `2 2199023255557 "c2        " 5c783039 f`, `3  ""  t`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// TestPrepareAll prepares statements with and without result columns in
// one round trip, and reports the first failing query's error, the
// connection staying usable.
func TestPrepareAll(t *testing.T) {
	cfg, db, _ := server(t)
	if _, err := db.Exec(`DROP TABLE IF EXISTS pw_pall; CREATE TABLE pw_pall (id int PRIMARY KEY, c text)`); err != nil {
		t.Fatal(err)
	}
	c := dial(t, cfg)
	sts, err := c.PrepareAll([]string{
		"INSERT INTO pw_pall VALUES ($1, $2)",
		"SELECT c FROM pw_pall WHERE id = $1",
		"UPDATE pw_pall SET c = c || 'x'",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 3 || sts[0].NumParams() != 2 || sts[1].NumParams() != 1 || sts[2].NumParams() != 0 {
		t.Fatalf("statements %d, params %d %d %d", len(sts), sts[0].NumParams(), sts[1].NumParams(), sts[2].NumParams())
	}
	if _, err := sts[0].Exec([]any{int64(1), "a"}); err != nil {
		t.Fatal(err)
	}
	if n, err := sts[2].Exec(nil); err != nil || n != 1 {
		t.Fatalf("update: %d, %v", n, err)
	}
	var got string
	if err := sts[1].QueryFunc([]any{int64(1)}, func(r *Row) error { got = string(r.Bytes(0)); return nil }); err != nil || got != "ax" {
		t.Fatalf("select: %q, %v", got, err)
	}
	_, err = c.PrepareAll([]string{"SELECT 1", "SELECT * FROM pw_no_such_table", "SELECT 2"})
	var pe *Error
	var qe *PrepareError
	if !errors.As(err, &pe) || pe.Code != "42P01" || !errors.As(err, &qe) || qe.Index != 1 {
		t.Fatalf("bad query: %v, want SQLSTATE 42P01 for query 1", err)
	}
	if err := sts[1].Query([]any{int64(1)}); err != nil {
		t.Fatalf("after the error: %v", err)
	}
}
