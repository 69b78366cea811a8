package rawsock

import (
	"net"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pinThread confines the calling (locked) thread to cpu, or, with cpu < 0,
// gives it set back.
func pinThread(t *testing.T, cpu int, set *unix.CPUSet) {
	t.Helper()
	if cpu >= 0 {
		set = &unix.CPUSet{}
		set.Set(cpu)
	}
	if err := unix.SchedSetaffinity(0, set); err != nil {
		t.Fatalf("sched_setaffinity: %v", err)
	}
}

func threadSet(t *testing.T) unix.CPUSet {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatalf("sched_getaffinity: %v", err)
	}
	return set
}

func currentCPU() int {
	var cpu uint32
	syscall.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	return int(cpu)
}

// echoServer serves one connection on 127.0.0.1 from a thread confined to
// cpu: each byte read is written back. It returns the address.
func echoServer(t *testing.T, cpu int) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		runtime.LockOSThread() // the thread ends with the goroutine, pin and all
		var one unix.CPUSet
		one.Set(cpu)
		_ = unix.SchedSetaffinity(0, &one)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 1)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
	return ln.Addr().String()
}

// dialLocal connects a Socket to addr as the wire clients do.
func dialLocal(t *testing.T, addr string) *Socket {
	t.Helper()
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := NewSocket(syscall.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	s := &Socket{}
	s.Open(fd, nil, 64, "testwire", "test", errTestClosed)
	t.Cleanup(func() { s.Close() })
	sa := &syscall.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	if err := Establish(fd, sa, DialDeadline(t.Context(), 0), s.Stopped); err != nil {
		t.Fatal(err)
	}
	return s
}

// roundTrips sends a byte and reads it back n times.
func roundTrips(t *testing.T, s *Socket, n int) {
	t.Helper()
	for range n {
		if err := s.Write([]byte{'x'}); err != nil {
			t.Fatal(err)
		}
		if err := s.Fill(); err != nil {
			t.Fatal(err)
		}
		s.Pos = s.End
	}
}

// TestFollowMovesToServer: with Follow on, a thread reading a loopback
// connection moves, at its followEvery-th read, to the CPU its server's
// thread sent the reply from, with its CPU set as it was when Follow
// began; with Follow off it stays where it was put.
func TestFollowMovesToServer(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	full := threadSet(t)
	var cpus []int // the first two CPUs of the process's set
	for c := 0; c < 8*int(unsafe.Sizeof(full)) && len(cpus) < 2; c++ {
		if full.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		t.Skip("skipped: following needs 2 CPUs, this process may use 1")
	}
	client, server := cpus[0], cpus[1]
	defer pinThread(t, -1, &full)
	s := dialLocal(t, echoServer(t, server))

	// Off: no move, however many reads.
	pinThread(t, client, nil)
	roundTrips(t, s, 2*followEvery)
	if cpu := currentCPU(); cpu != client {
		t.Fatalf("pinned to CPU %d, on %d", client, cpu)
	}
	pinThread(t, -1, &full)

	// On: the thread stays confined to its CPU up to the next look, which
	// must move it to the server's, and give it its full set back.
	// Confined, it can be on the server's CPU only by the move; freed, the
	// kernel may move it back before the check on a busy machine, so up
	// to three tries.
	for try := 1; ; try++ {
		stop, err := Follow()
		if err != nil || stop == nil {
			t.Fatalf("Follow: %v, stop %v", err, stop != nil)
		}
		pinThread(t, client, nil)
		roundTrips(t, s, followEvery-int(s.reads%followEvery))
		cpu := currentCPU()
		moves := stop()
		if got := threadSet(t); got != full {
			t.Fatalf("after the look the thread's CPU set is %x, want the full %x", got[0], full[0])
		}
		if following.on.Load() {
			t.Fatal("Follow still on after stop")
		}
		if cpu == server && moves == 1 {
			return
		}
		if moves != 1 || try == 3 {
			t.Fatalf("after the look: on CPU %d with %d moves, want CPU %d and one move", cpu, moves, server)
		}
	}
}

// TestFollowSingleCPU: a process allowed one CPU has nothing to follow.
func TestFollowSingleCPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	full := threadSet(t)
	defer pinThread(t, -1, &full)
	cpu := 0
	for !full.IsSet(cpu) {
		cpu++
	}
	pinThread(t, cpu, nil)
	if stop, err := Follow(); err != nil || stop != nil {
		t.Errorf("Follow on one CPU: stop set %v, err %v; want neither", stop != nil, err)
	}
}

// TestIsLocalPeer: loopback TCP peers are local; a Unix socket is not
// followed (it records no incoming CPU).
func TestIsLocalPeer(t *testing.T) {
	s := dialLocal(t, echoServer(t, currentCPU()))
	if !isLocalPeer(s.fd) {
		t.Error("127.0.0.1 peer not local")
	}
	u, _ := pair(t)
	if isLocalPeer(u.fd) {
		t.Error("Unix socket peer counted as local TCP")
	}
}
