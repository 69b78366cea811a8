package oltp

import (
	"context"
	"database/sql"
	"runtime"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/workload"
)

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkWorkerMemory measures the live heap one oltp_read_write worker
// (--tables 4) holds on a real server, as bytes/worker: on MariaDB through
// the wire client (the connection's buffers counted apart as
// conn-bytes/worker) and through database/sql, and on PostgreSQL. The
// database/sql connection itself is not counted: the pool opens it before
// NewWorker.
func BenchmarkWorkerMemory(b *testing.B) {
	const workers = 32
	for _, flavor := range flavors {
		for _, client := range clientsFor(flavor) {
			b.Run(string(flavor)+"/client="+client, func(b *testing.B) {
				env := sandboxtest.Env(b, flavor)
				bg := context.Background()
				wl := setup(b, "oltp_read_write", "--tables=4", "--table-size=100", "--client="+client).(*Workload)
				_ = wl.Cleanup(bg, env)
				defer wl.Cleanup(bg, env)
				if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
					b.Fatal(err)
				}
				db, err := env.Dialect.Open(env.Target, dialect.OpenOptions{MaxConns: workers})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				wenv := env
				wenv.DB = db
				var perWorker, perConn float64
				for i := 0; i < b.N; i++ {
					perWorker, perConn = measureWorkers(b, wl, wenv, workers)
				}
				b.ReportMetric(perWorker, "bytes/worker")
				if perConn > 0 {
					b.ReportMetric(perConn, "conn-bytes/worker")
				}
			})
		}
	}
}

// measureWorkers makes n workers and returns the live heap per worker
// beyond its connection, and per wire connection where workers dial.
func measureWorkers(b *testing.B, wl *Workload, env workload.Env, n int) (perWorker, perConn float64) {
	bg := context.Background()
	ws := make([]workload.Worker, 0, n)
	defer func() {
		for _, w := range ws {
			_ = w.Close()
		}
	}()
	if wl.OwnsConns(env) {
		md := env.Dialect.(dialect.MySQLDialect)
		before := heapInUse()
		var conns []interface{ Close() error }
		for i := 0; i < n; i++ {
			c, err := md.DialWire(context.Background(), env.Target, dialect.OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		perConn = float64(heapInUse()-before) / float64(n)
		for _, c := range conns {
			_ = c.Close()
		}
		before = heapInUse()
		for i := 0; i < n; i++ {
			w, err := wl.DialWorker(bg, env, i, int64(i))
			if err != nil {
				b.Fatal(err)
			}
			ws = append(ws, w)
		}
		runEach(b, ws)
		return float64(heapInUse()-before)/float64(n) - perConn, perConn
	}
	var conns []*sql.Conn
	for i := 0; i < n; i++ {
		c, err := env.DB.Conn(bg)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	before := heapInUse()
	for i, c := range conns {
		w, err := wl.NewWorker(bg, env, c, i, int64(i))
		if err != nil {
			b.Fatal(err)
		}
		ws = append(ws, w)
	}
	runEach(b, ws)
	return float64(heapInUse()-before) / float64(n), 0
}

// runEach runs a few events on every worker, so that buffers that grow on
// first use are counted.
func runEach(b *testing.B, ws []workload.Worker) {
	for _, w := range ws {
		for i := 0; i < 3; i++ {
			if err := w.Event(context.Background(), &workload.Event{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
