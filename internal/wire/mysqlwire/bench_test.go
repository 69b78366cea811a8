package mysqlwire_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// BenchmarkPointSelect runs sysbench's point select (a prepared statement,
// one row read and skipped) on 1, 4 and 16 connections, GOMAXPROCS one
// above the connections as the runner sets it. It reports the client's CPU
// time per query (user+system, getrusage) and queries per second; the
// server shares the machine.
//
//	go test -run '^$' -bench PointSelect -benchtime 3s ./internal/wire/mysqlwire/
func BenchmarkPointSelect(b *testing.B) {
	cfg, db := server(b)
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS mw_bench (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))",
		"INSERT IGNORE INTO mw_bench SELECT seq, seq, REPEAT('x', 120), REPEAT('y', 60) FROM seq_1_to_10000"} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	for _, threads := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads + 1))
			stmts := make([]*Stmt, threads)
			for i := range stmts {
				c, err := Dial(cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if stmts[i], err = c.Prepare("SELECT c FROM mw_bench WHERE id = ?"); err != nil {
					b.Fatal(err)
				}
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			b.ResetTimer()
			cpu0 := cpuTime()
			start := time.Now()
			for i, st := range stmts {
				wg.Add(1)
				go func(id int64) {
					defer wg.Done()
					args := []any{int64(0)}
					for left.Add(-1) >= 0 {
						id = id*6364136223846793005 + 1442695040888963407
						args[0] = int64(uint64(id)>>33)%10000 + 1
						if err := st.Query(args); err != nil {
							b.Error(err)
							return
						}
					}
				}(int64(i))
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

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
