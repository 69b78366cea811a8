// Command coro-cost measures what a coroutine per client costs a lean
// client, against an event loop, on the same raw socket I/O: pgbench's
// select-only transaction (one SELECT by a random aid, simple protocol)
// from -c clients shared among -j threads, each thread waiting for its
// sockets in one epoll_wait(2).
//
//   - -mode loop handles each ready socket on the thread's own stack, as
//     pgbench does (and as a resumable state machine in dbarena would).
//   - -mode coro resumes a coroutine (iter.Pull) per client, which yields
//     where its socket has nothing to read, as dbarena's poller groups do.
//
// Both modes share the connections' code; only the dispatch differs. After
// -settle, it prints the transactions per second and the process's CPU
// time per transaction (user+system, and user alone) over -window. Start
// it alternately with pgbench on the same server (the machine's speed
// drifts): pgbench's tables must exist (dbarena prepare script). The
// password is PGPASSWORD.
//
// Usage: go run ./bench/coro-cost -addr 127.0.0.1:PORT [-user dbarena]
// [-db sbtest] [-c 64] [-j 2] [-mode loop|coro] [-T 10s] [-scale 1]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

// client is one connection; its socket is non-blocking.
type client struct {
	fd   int
	rbuf []byte
	n    int // bytes in rbuf
	wbuf []byte
	rng  *rand.Rand
	max  int // accounts: 100000 * scale
	next func() (struct{}, bool)
}

// send sends the next transaction's Query message.
func (c *client) send() error {
	q := append(c.wbuf[:0], 'Q', 0, 0, 0, 0)
	q = append(q, "SELECT abalance FROM pgbench_accounts WHERE aid = "...)
	q = strconv.AppendInt(q, int64(c.rng.IntN(c.max)+1), 10)
	q = append(q, ';', 0)
	l := len(q) - 1
	q[1], q[2], q[3], q[4] = byte(l>>24), byte(l>>16), byte(l>>8), byte(l)
	c.wbuf = q
	_, err := syscall.Write(c.fd, q)
	return err
}

// complete reports whether rbuf holds a whole reply: every message up to
// ReadyForQuery.
func (c *client) complete() bool {
	for p := 0; p+5 <= c.n; {
		l := int(c.rbuf[p+1])<<24 | int(c.rbuf[p+2])<<16 | int(c.rbuf[p+3])<<8 | int(c.rbuf[p+4])
		if p+1+l > c.n {
			return false
		}
		if c.rbuf[p] == 'Z' {
			return true
		}
		p += 1 + l
	}
	return false
}

// read reads what the socket holds; false when it holds nothing.
func (c *client) read() (bool, error) {
	if c.n == len(c.rbuf) {
		return false, errors.New("reply larger than the buffer")
	}
	n, err := syscall.Read(c.fd, c.rbuf[c.n:])
	switch {
	case err == syscall.EAGAIN:
		return false, nil
	case err != nil:
		return false, err
	case n == 0:
		return false, errors.New("connection closed")
	}
	c.n += n
	return true, nil
}

// step reads the socket until it is empty or a reply is complete; then it
// counts the transaction and sends the next.
func (c *client) step(tx *atomic.Int64) error {
	for {
		ok, err := c.read()
		if !ok || err != nil {
			return err
		}
		if c.complete() {
			c.n = 0
			tx.Add(1)
			return c.send()
		}
	}
}

func main() {
	addr := flag.String("addr", "", "server host:port")
	user := flag.String("user", "dbarena", "user")
	db := flag.String("db", "sbtest", "database")
	clients := flag.Int("c", 64, "clients")
	jobs := flag.Int("j", 2, "threads")
	mode := flag.String("mode", "loop", "loop or coro")
	dur := flag.Duration("T", 10*time.Second, "run time")
	settle := flag.Duration("settle", 2*time.Second, "time before the measured window")
	window := flag.Duration("window", 5*time.Second, "measured window")
	scale := flag.Int("scale", 1, "pgbench scale of the tables")
	flag.Parse()
	if *mode != "loop" && *mode != "coro" {
		fail(fmt.Errorf("-mode %q: want loop or coro", *mode))
	}
	if *jobs < 1 || *clients < *jobs {
		fail(errors.New("-c must be at least -j, and -j at least 1"))
	}
	groups := make([][]*client, *jobs)
	for i := range *clients {
		pc, err := pgwire.Dial(context.Background(), pgwire.Config{Addr: *addr, User: *user,
			Password: os.Getenv("PGPASSWORD"), Database: *db})
		if err != nil {
			fail(err)
		}
		defer pc.Close()
		c := &client{fd: pc.Fd(), rbuf: make([]byte, 8192), rng: rand.New(rand.NewPCG(uint64(i), 1)), max: 100000 * *scale}
		if err := syscall.SetNonblock(c.fd, true); err != nil {
			fail(err)
		}
		groups[i%*jobs] = append(groups[i%*jobs], c)
	}
	var tx atomic.Int64
	stop := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for _, cs := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serve(cs, *mode == "coro", stop, &tx); err != nil {
				fail(err)
			}
		}()
	}
	go report(*mode, *settle, *window, &tx)
	wg.Wait()
}

// serve runs the clients cs on the calling goroutine until stop.
func serve(cs []*client, coro bool, stop time.Time, tx *atomic.Int64) error {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer syscall.Close(ep)
	for i, c := range cs {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | 1<<31, Fd: int32(i)} // edge-triggered
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			return err
		}
		if err := c.send(); err != nil {
			return err
		}
	}
	var failed error
	if coro {
		for _, c := range cs {
			var stopCoro func()
			c.next, stopCoro = iter.Pull(func(yield func(struct{}) bool) {
				for {
					ok, err := c.read()
					if err != nil {
						failed = err
						return
					}
					if !ok {
						if !yield(struct{}{}) {
							return // stopped
						}
						continue
					}
					if c.complete() {
						c.n = 0
						tx.Add(1)
						if failed = c.send(); failed != nil {
							return
						}
					}
				}
			})
			defer stopCoro()
		}
	}
	evs := make([]syscall.EpollEvent, 128)
	for k := 0; failed == nil; k++ {
		if k%256 == 0 && time.Now().After(stop) {
			return nil
		}
		n, err := syscall.EpollWait(ep, evs, 100)
		if err != nil && err != syscall.EINTR {
			return err
		}
		for _, e := range evs[:max(n, 0)] {
			c := cs[e.Fd]
			if coro {
				c.next()
			} else if failed = c.step(tx); failed != nil {
				break
			}
		}
	}
	return failed
}

// report prints the throughput and CPU per transaction of the window.
func report(mode string, settle, window time.Duration, tx *atomic.Int64) {
	time.Sleep(settle)
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	t0 := tx.Load()
	time.Sleep(window)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	n := float64(tx.Load() - t0)
	user := float64(r1.Utime.Nano() - r0.Utime.Nano())
	sys := float64(r1.Stime.Nano() - r0.Stime.Nano())
	fmt.Printf("%s: tps %.0f, cpu %.2f us/tx (user %.2f)\n", mode, n/window.Seconds(), (user+sys)/1e3/n, user/1e3/n)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coro-cost:", err)
	os.Exit(2)
}
