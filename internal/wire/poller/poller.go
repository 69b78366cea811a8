// Package poller runs several workers on one OS thread, as pgbench's
// threads (-j) run several clients: each worker is a coroutine that yields
// where its non-blocking socket has nothing to read, and the thread waits
// for all its workers' sockets in one epoll_wait(2). A reply that finds its
// thread busy with another worker waits for it, as in pgbench; in return a
// thread sleeps and wakes once for several replies instead of once for
// each, which is most of a lean client's system time at small queries.
//
// A worker may also Park: it hands its group a step to call, on the group's
// own stack, at each signal of its sockets, until the step says that the
// worker's coroutine must go on. A worker whose work between two waits
// never waits itself (it sends a request, then reads what has come) thus
// costs no coroutine switch per reply, as a client of pgbench's costs none.
//
// A worker sleeps through Sleep, which yields too. A worker that blocks
// on anything else (a channel, a mutex, a blocking connect) holds up the
// others of its group meanwhile: groups suit closed-loop workers that wait
// only for their own sockets and sleeps.
package poller

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// Group is a set of workers sharing one thread. Add them, then Run.
type Group struct {
	epfd     int
	members  []*Member
	events   [128]syscall.EpollEvent
	sleepers int // members in Sleep
}

// Member is one worker of a Group, and the rawsock.Waiter its clients
// wait through.
type Member struct {
	g        *Group
	idx      int32
	next     func() (struct{}, bool)
	stop     func()
	yield    func(struct{}) bool
	waiting  bool
	running  bool        // on the group's thread, as its coroutine
	step     func() bool // while parked (Park)
	wake     time.Time   // in Sleep: when it ends
	attached int
}

var _ rawsock.Waiter = (*Member)(nil)

// A sweep resumes every waiting worker, so that one waiting on a silent
// socket still sees its deadline (Abort's shutdown wakes it at once, as
// its socket signals). It comes every sweepPeriod, the clock read every
// sweepEvery wake-ups or when a wait times out: a sweep costs a recv(2)
// per waiting worker, ~4k a second at 1024 workers on a thread.
const (
	sweepPeriod = 250 * time.Millisecond
	sweepEvery  = 64
)

// epollET is EPOLLET as the unsigned event mask (package syscall has it
// negative).
const epollET = 1 << 31

// New returns an empty Group with its epoll instance.
func New() (*Group, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &Group{epfd: fd}, nil
}

// Add adds a worker that runs work when the group runs; work's clients
// wait through the returned Member.
func (g *Group) Add(work func()) *Member {
	m := &Member{g: g, idx: int32(len(g.members))}
	m.next, m.stop = iter.Pull(func(yield func(struct{}) bool) {
		m.yield = yield
		work()
	})
	g.members = append(g.members, m)
	return m
}

// GroupOf returns the group of the member ctx carries as its
// rawsock.Waiter (as the runner's contexts of grouped workers do), or nil.
// Its workers run on one thread, one at a time: they can share scratch
// state that each uses only between two waits.
func GroupOf(ctx context.Context) *Group {
	if m, ok := rawsock.WaiterFrom(ctx).(*Member); ok {
		return m.g
	}
	return nil
}

// Attached reports how many sockets the member's clients attached.
func (m *Member) Attached() int { return m.attached }

// Attach implements rawsock.Waiter: fd is watched, edge-triggered, for
// input, hang-up and errors. A socket's number may come back after its
// close (which removed it from the epoll set): it is added again.
func (m *Member) Attach(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET, Fd: m.idx}
	err := syscall.EpollCtl(m.g.epfd, syscall.EPOLL_CTL_ADD, fd, &ev)
	if errors.Is(err, syscall.EEXIST) {
		err = syscall.EpollCtl(m.g.epfd, syscall.EPOLL_CTL_MOD, fd, &ev)
	}
	if err != nil {
		return err
	}
	m.attached++
	return nil
}

// Wait implements rawsock.Waiter: the worker yields to its group's thread
// until one of its sockets signals, or the next sweep. Called before the
// group runs (a worker setting up its connection), it waits for fd alone.
func (m *Member) Wait(fd int) {
	if !m.running {
		rawsock.AwaitReadable(fd)
		return
	}
	m.waiting = true
	m.yield(struct{}{})
}

// Park yields the calling worker to its group's thread, which calls step
// on its own stack at each signal of the worker's sockets and at each
// sweep (so a step may find nothing new), until step reports false: then
// Park returns. step must not wait (a Wait in it waits for its socket
// alone, holding up the group). Only the work of a running group parks.
func (m *Member) Park(step func() bool) {
	if !m.running {
		panic("poller: Park outside its group's run")
	}
	m.step = step
	m.waiting = true
	m.yield(struct{}{})
}

// Sleep pauses the calling worker for d, or until ctx is done (its
// error). A member of a running group (the Waiter ctx carries, as the
// runner's events' contexts do) yields to its group's thread meanwhile,
// woken by epoll's timeout; anything else sleeps on a timer.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	m, _ := rawsock.WaiterFrom(ctx).(*Member)
	if m == nil || !m.running {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.wake = time.Now().Add(d)
	m.g.sleepers++
	defer func() { m.g.sleepers--; m.wake = time.Time{} }()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !time.Now().Before(m.wake) {
			return nil
		}
		m.waiting = true
		m.yield(struct{}{})
	}
}

// resumeWaiting steps m if it is parked, resumes it if it waits (or its
// step said so), and reports whether its work returned.
func (m *Member) resumeWaiting() (ended bool) {
	if !m.waiting {
		return false
	}
	if m.step != nil {
		if m.step() {
			return false
		}
		m.step = nil
	}
	return !m.resume()
}

// resume runs m until it waits again (true) or its work returned.
func (m *Member) resume() bool {
	m.waiting, m.running = false, true
	_, ok := m.next()
	m.running = false
	return ok
}

// Close releases a group that will not run, with its workers unstarted.
func (g *Group) Close() {
	for _, m := range g.members {
		m.stop()
	}
	if g.epfd >= 0 {
		syscall.Close(g.epfd)
		g.epfd = -1
	}
}

// Run runs every worker until all have returned, on the calling
// goroutine's thread, then releases the group. Call it once.
func (g *Group) Run() {
	defer g.Close()
	live := 0
	for _, m := range g.members {
		if m.resume() {
			live++
		}
	}
	last := time.Now()
	for wakes := 1; live > 0; wakes++ {
		timeout := rawsock.WaitSlice
		if g.sleepers > 0 {
			timeout = g.untilWake(timeout)
		}
		n := g.wait(timeout)
		for i := range n {
			if g.members[g.events[i].Fd].resumeWaiting() {
				live--
			}
		}
		if g.sleepers > 0 {
			live -= g.wakeSleepers()
		}
		if n > 0 && wakes%sweepEvery != 0 {
			continue
		}
		if now := time.Now(); now.Sub(last) >= sweepPeriod {
			last = now
			for _, m := range g.members {
				if m.resumeWaiting() {
					live--
				}
			}
		}
	}
}

// untilWake is the time until the first sleeping member wakes, at most
// limit.
func (g *Group) untilWake(limit time.Duration) time.Duration {
	now := time.Now()
	d := limit
	for _, m := range g.members {
		if m.waiting && !m.wake.IsZero() {
			d = min(d, m.wake.Sub(now))
		}
	}
	return max(d, 0)
}

// wakeSleepers resumes the sleeping members whose time has come and
// returns how many of them returned.
func (g *Group) wakeSleepers() (ended int) {
	now := time.Now()
	for _, m := range g.members {
		if !m.wake.IsZero() && !now.Before(m.wake) && m.resumeWaiting() {
			ended++
		}
	}
	return ended
}

// noPwait2 is set once epoll_pwait2(2) (Linux 5.11, a timeout in
// nanoseconds) proves missing; epoll_pwait(2) then waits in milliseconds,
// rounded up.
var noPwait2 atomic.Bool

// sysEpollPwait2 is epoll_pwait2's number, which package syscall lacks
// (the same on every architecture).
const sysEpollPwait2 = 441

// wait is one epoll_pwait2(2) (else epoll_pwait(2)) for up to timeout, a
// raw system call, so that the thread keeps its P as a blocked lean
// client does; a signal or an error counts as no event.
func (g *Group) wait(timeout time.Duration) int {
	evs, nev := uintptr(unsafe.Pointer(&g.events[0])), uintptr(len(g.events))
	if !noPwait2.Load() {
		ts := syscall.NsecToTimespec(timeout.Nanoseconds())
		n, _, e := syscall.RawSyscall6(sysEpollPwait2, uintptr(g.epfd), evs, nev, uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e != syscall.ENOSYS {
			if e != 0 {
				return 0
			}
			return int(n)
		}
		noPwait2.Store(true)
	}
	ms := (timeout + time.Millisecond - 1) / time.Millisecond
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(g.epfd), evs, nev, uintptr(ms), 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}
