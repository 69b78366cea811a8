package pgwire_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	. "github.com/dbarena/dbarena/internal/wire/pgwire"
)

// BenchmarkWaiting compares the ways a connection may wait for the server
// on sysbench's point select (a prepared statement, one row read and
// skipped) at 4, 16 and 64 connections: pgwire with blocking system calls
// (GOMAXPROCS one above the connections, as the runner sets it), pgwire
// on Go's netpoller, and pgx's pgconn (the low layer, netpoller) with the
// same prepared statement. It reports the client's CPU time per query
// (user+system, getrusage) and queries per second; the server shares the
// machine.
//
//	go test -run '^$' -bench Waiting -benchtime 5s ./internal/wire/pgwire/
func BenchmarkWaiting(b *testing.B) {
	cfg, db, _ := server(b)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS pw_bench (id int PRIMARY KEY, k int, c char(120), pad char(60));
		INSERT INTO pw_bench SELECT g, g, repeat('x', 120), repeat('y', 60) FROM generate_series(1, 10000) g ON CONFLICT DO NOTHING`); err != nil {
		b.Fatal(err)
	}
	const query = "SELECT c FROM pw_bench WHERE id = $1"
	type client func(b *testing.B) (run func(id int64) error, close func())
	netpoll := func(b *testing.B) (func(int64) error, func()) {
		np := cfg
		np.Netpoll = true
		c := dialB(b, np)
		st, err := c.Prepare(query)
		if err != nil {
			b.Fatal(err)
		}
		args := []any{int64(0)}
		return func(id int64) error { args[0] = id; return st.Query(args) }, func() { c.Close() }
	}
	clients := []struct {
		name  string
		procs int // GOMAXPROCS: -1 one above the connections, 0 as it is
		dial  client
	}{
		{"blocking", -1, func(b *testing.B) (func(int64) error, func()) {
			c := dialB(b, cfg)
			st, err := c.Prepare(query)
			if err != nil {
				b.Fatal(err)
			}
			args := []any{int64(0)}
			return func(id int64) error { args[0] = id; return st.Query(args) }, func() { c.Close() }
		}},
		{"netpoll", 0, netpoll},
		{"netpoll-1P", 1, netpoll},
		{"pgconn", 0, func(b *testing.B) (func(int64) error, func()) {
			pc, err := pgconn.Connect(context.Background(), fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable",
				host(cfg.Addr), port(cfg.Addr), cfg.User, cfg.Password, cfg.Database))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := pc.Prepare(ctx, "s", query, nil); err != nil {
				b.Fatal(err)
			}
			params := [][]byte{make([]byte, 0, 8)}
			formats := []int16{1}
			res := []int16{1}
			return func(id int64) error {
				params[0] = append(params[0][:0], byte(id>>24), byte(id>>16), byte(id>>8), byte(id)) // int4
				rr := pc.ExecPrepared(ctx, "s", params, formats, res)
				for rr.NextRow() {
				}
				_, err := rr.Close()
				return err
			}, func() { pc.Close(ctx) }
		}},
	}
	for _, cl := range clients {
		for _, threads := range []int{4, 16, 64} {
			b.Run(fmt.Sprintf("%s/threads=%d", cl.name, threads), func(b *testing.B) {
				switch {
				case cl.procs < 0:
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads + 1))
				case cl.procs > 0:
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cl.procs))
				}
				runs := make([]func(int64) error, threads)
				for i := range runs {
					run, closeFn := cl.dial(b)
					defer closeFn()
					runs[i] = run
				}
				var left atomic.Int64
				left.Store(int64(b.N))
				var wg sync.WaitGroup
				b.ResetTimer()
				cpu0 := cpuTime()
				start := time.Now()
				for i := range runs {
					wg.Add(1)
					go func(run func(int64) error, id int64) {
						defer wg.Done()
						for left.Add(-1) >= 0 {
							id = id*6364136223846793005 + 1442695040888963407
							if err := run(int64(uint64(id)>>33)%10000 + 1); err != nil {
								b.Error(err)
								return
							}
						}
					}(runs[i], int64(i))
				}
				wg.Wait()
				elapsed := time.Since(start)
				cpu := cpuTime() - cpu0
				b.StopTimer()
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "qps")
			})
		}
	}
}

func dialB(b *testing.B, cfg Config) *Conn {
	b.Helper()
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func host(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i]
		}
	}
	return addr
}

func port(addr string) string { return addr[len(host(addr))+1:] }
