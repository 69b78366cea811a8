package mysqlwire_test

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"

	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// BenchmarkPointSelect runs sysbench's point select (a prepared statement,
// one row read and skipped) on 1, 4 and 16 connections, GOMAXPROCS one
// above the connections as the runner sets it, b.N statements shared out
// among them. It reports the client's CPU time per query (user+system of
// the process, getrusage) and queries per second; the server shares the
// machine.
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
	for _, conns := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("threads=%d", conns), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(conns + 1))
			stmts := make([]*Stmt, conns)
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
			var ru [2]syscall.Rusage
			var wg sync.WaitGroup
			b.ResetTimer()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru[0])
			for i, st := range stmts {
				n := b.N / conns
				if i < b.N%conns {
					n++
				}
				wg.Go(func() {
					id := uint64(i)
					args := []any{int64(0)}
					for range n {
						id = id*6364136223846793005 + 1442695040888963407
						args[0] = int64(id>>33)%10000 + 1
						if err := st.Query(args); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru[1])
			b.StopTimer()
			cpu := ru[1].Utime.Nano() + ru[1].Stime.Nano() - ru[0].Utime.Nano() - ru[0].Stime.Nano()
			b.ReportMetric(float64(cpu)/1e3/float64(b.N), "cpu-us/op")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "qps")
		})
	}
}
