package poller

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// echo answers every byte written to the far end of a socket pair, from a
// goroutine of its own, until the pair closes.
func echo(t *testing.T, fd int) {
	t.Helper()
	go func() {
		b := make([]byte, 64)
		for {
			n, err := syscall.Read(fd, b)
			if n <= 0 || err != nil {
				return
			}
			if _, err := syscall.Write(fd, b[:n]); err != nil {
				return
			}
		}
	}()
}

// pair returns a connected socket pair: the near end non-blocking and
// attached to m, the far end echoed.
func pair(t *testing.T, m *Member) int {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	if err := rawsock.Adopt(m, fds[0]); err != nil {
		t.Fatal(err)
	}
	echo(t, fds[1])
	return fds[0]
}

// roundTrip sends one byte on fd and reads the echo, waiting through w
// where the read would block; it returns how often it waited.
func roundTrip(t *testing.T, w rawsock.Waiter, fd int, c byte) int {
	if _, err := rawsock.Send(fd, []byte{c}); err != nil {
		t.Error(err)
		return 0
	}
	waits := 0
	b := make([]byte, 1)
	for {
		n, err := rawsock.Recv(fd, b)
		if n == 1 {
			if b[0] != c {
				t.Errorf("echo %d, want %d", b[0], c)
			}
			return waits
		}
		if err != syscall.EAGAIN {
			t.Errorf("recv: %d, %v", n, err)
			return waits
		}
		w.Wait(fd)
		waits++
	}
}

// TestGroupRunsEveryMember runs several members on one group, each making
// its own round trips, and checks that each completes all of them and
// that they waited (so the group's thread served them in turn).
func TestGroupRunsEveryMember(t *testing.T) {
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const members, trips = 5, 200
	var done [members]int
	var waited atomic.Int64
	for i := range members {
		var m *Member
		var fd int
		m = g.Add(func() {
			for k := range trips {
				waited.Add(int64(roundTrip(t, m, fd, byte(k))))
				done[i]++
			}
		})
		fd = pair(t, m)
		if m.Attached() != 1 {
			t.Fatalf("attached %d, want 1", m.Attached())
		}
	}
	g.Run()
	for i, n := range done {
		if n != trips {
			t.Errorf("member %d made %d round trips, want %d", i, n, trips)
		}
	}
	if waited.Load() == 0 {
		t.Error("no member ever waited: the sockets were not non-blocking")
	}
}

// TestSweepResumesSilentMember: a member waiting on a socket that never
// answers is resumed by the group's sweep, so that it can give up (as a
// client does at its deadline or after Abort) while the others run.
func TestSweepResumesSilentMember(t *testing.T) {
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var quit atomic.Bool
	var silent *Member
	silent = g.Add(func() {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer syscall.Close(fds[0])
		defer syscall.Close(fds[1])
		if err := rawsock.Adopt(silent, fds[0]); err != nil {
			t.Error(err)
			return
		}
		for !quit.Load() {
			silent.Wait(fds[0]) // nothing ever comes
		}
	})
	var busy *Member
	var fd int
	busy = g.Add(func() {
		for k := range 50 {
			roundTrip(t, busy, fd, byte(k))
		}
		quit.Store(true)
	})
	fd = pair(t, busy)
	g.Run() // returns only if the silent member saw quit
}

// TestCloseUnrun: a group that never runs releases its members unstarted.
func TestCloseUnrun(t *testing.T) {
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	g.Add(func() { ran = true })
	g.Close()
	g.Close() // twice is harmless
	if ran {
		t.Error("an unrun group's member ran")
	}
}

// TestWaitBeforeRun: a member's client may read before the group runs (a
// worker preparing its statements while it connects); Wait then waits for
// the one socket instead of yielding to a group that is not running.
func TestWaitBeforeRun(t *testing.T) {
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	m := g.Add(func() {})
	fd := pair(t, m)
	if waits := roundTrip(t, m, fd, 7); waits == 0 {
		t.Log("the echo came before the first recv")
	}
}

// TestSleepYields: while members of a group sleep through Sleep, the
// group's thread serves the others (a busy member keeps making round
// trips until every sleeper is done; were Sleep to hold the thread, it
// would get its first turn only then); outside a running group Sleep is a
// timer, and a done context ends it.
func TestSleepYields(t *testing.T) {
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const sleepers, naps = 4, 5
	var finished, busyTrips atomic.Int64
	for range sleepers {
		var m *Member
		m = g.Add(func() {
			ctx := rawsock.WithWaiter(context.Background(), m)
			for range naps {
				if err := Sleep(ctx, 20*time.Millisecond); err != nil {
					t.Error(err)
				}
			}
			finished.Add(1)
		})
	}
	var busy *Member
	var fd int
	busy = g.Add(func() {
		for k := 0; finished.Load() < sleepers; k++ {
			roundTrip(t, busy, fd, byte(k))
			busyTrips.Add(1)
		}
	})
	fd = pair(t, busy)
	g.Run()
	if n := busyTrips.Load(); n < 10 {
		t.Errorf("the busy member made %d round trips while the others slept, want many", n)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Errorf("Sleep with a done context: %v, want context.Canceled", err)
	}
}

// TestPark: parked members are stepped on the group's stack at each reply,
// mixed with members that wait as coroutines; a step that reports false
// resumes its member's work where it parked.
func TestPark(t *testing.T) {
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const members, trips = 4, 200
	var done [members]int
	var resumed [members]bool
	for i := range members {
		var m *Member
		m = g.Add(func() {
			fd := pair(t, m)
			if i%2 == 1 { // a coroutine all along
				for k := range trips {
					roundTrip(t, m, fd, byte(k))
				}
				done[i] = trips
				return
			}
			b := make([]byte, 1)
			send := func() {
				if _, err := rawsock.Send(fd, []byte{byte(done[i])}); err != nil {
					t.Error(err)
				}
			}
			send()
			m.Park(func() bool {
				n, err := rawsock.Recv(fd, b)
				if err == syscall.EAGAIN {
					return true // a sweep, or a wake-up for nothing
				}
				if n != 1 || b[0] != byte(done[i]) {
					t.Errorf("member %d: recv %d %v, byte %d at trip %d", i, n, err, b[0], done[i])
					return false
				}
				if done[i]++; done[i] == trips {
					return false
				}
				send()
				return true
			})
			resumed[i] = true
		})
	}
	g.Run()
	for i := range members {
		if done[i] != trips || (i%2 == 0 && !resumed[i]) {
			t.Errorf("member %d: %d round trips, resumed %v; want %d", i, done[i], resumed[i], trips)
		}
	}
}
