package rawsock

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// followEvery is how many reads of a local connection pass between two
// looks at where its server process runs: two system calls (about 0.3 us)
// per look, and a pair that drifted apart is back together within
// followEvery round trips.
const followEvery = 32

// following is the state of Follow, shared by every Socket.
var following struct {
	on    atomic.Bool
	mask  atomic.Pointer[unix.CPUSet] // the CPUs the process's threads may run on
	moves atomic.Int64                // threads moved to their server's CPU
	mu    sync.Mutex
	users int // the runs that called Follow and have not stopped
}

// Follow makes every thread that reads a connection to a server on this
// machine (a loopback TCP peer, on a Socket that does not share its
// thread) move, now and then, to the CPU where that connection's server
// process last ran, until the returned stop is called. stop returns how
// many moves there were meanwhile (by every run following at the time).
//
// Why: a blocking client thread and the server process it talks to wake
// each other on every statement. On the same core a wake-up is a queue
// insert; on two cores it is an inter-processor interrupt (a VM exit on a
// virtual machine), and the woken task preempts whatever runs there. Linux
// pulls a woken task to its waker's core by the cores' loads, so a pair
// that formed apart often stays apart. sysbench's threads, one per
// connection, sit beside their backends in some runs and apart in others;
// dbarena's worker goroutines also change threads, which splits pairs
// again (docs/benchmarks.md, "Following the server"). A move is
// sched_setaffinity(2) to that CPU and straight back to the process's own
// set: the kernel stays free to balance the cores, and when it moves a
// server process, its client follows.
//
// Follow does nothing in a process allowed a single CPU (stop is nil
// then), and never moves a thread to a CPU outside the process's set
// (taskset): a user who keeps the client off the server's cores keeps it
// there.
func Follow() (stop func() int64, err error) {
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		return nil, fmt.Errorf("rawsock: reading the CPU set: %w", err)
	}
	if mask.Count() < 2 {
		return nil, nil
	}
	following.mu.Lock()
	defer following.mu.Unlock()
	if following.users == 0 {
		following.mask.Store(&mask)
	}
	following.users++
	following.on.Store(true)
	start := following.moves.Load()
	var once sync.Once
	return func() (moves int64) {
		once.Do(func() {
			following.mu.Lock()
			defer following.mu.Unlock()
			if following.users--; following.users == 0 {
				following.on.Store(false)
			}
			moves = following.moves.Load() - start
		})
		return moves
	}, nil
}

// Socket.peer: where the server is.
const (
	peerLocal int8 = 1  // over TCP on this machine
	peerOther int8 = -1 // elsewhere, or not over TCP
)

// isLocalPeer reports whether the connected socket fd talks to this
// machine over TCP: its peer is a loopback address.
func isLocalPeer(fd int) bool {
	sa, err := syscall.Getpeername(fd)
	if err != nil {
		return false
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return a.Addr[0] == 127
	case *syscall.SockaddrInet6:
		v4mapped := a.Addr[10] == 0xff && a.Addr[11] == 0xff && a.Addr[0] == 0 && a.Addr[9] == 0
		loop6 := a.Addr == [16]byte{15: 1}
		return loop6 || (v4mapped && a.Addr[12] == 127)
	}
	return false
}

// followPeer counts a read of s and, every followEvery reads while Follow
// is on, moves the calling thread to the CPU where s's server process sent
// its last reply if that is not the CPU it runs on. SO_INCOMING_CPU is
// the CPU that last delivered a packet to the socket, and over loopback a
// packet is delivered on the CPU that sent it.
func (s *Socket) followPeer() {
	s.reads++
	if s.reads%followEvery != 0 || !following.on.Load() {
		return
	}
	if s.peer == 0 {
		s.peer = peerOther
		if isLocalPeer(s.fd) {
			s.peer = peerLocal
		}
	}
	if s.peer != peerLocal {
		return
	}
	var in int32
	size := uint32(unsafe.Sizeof(in))
	if _, _, e := syscall.RawSyscall6(syscall.SYS_GETSOCKOPT, uintptr(s.fd), syscall.SOL_SOCKET, unix.SO_INCOMING_CPU,
		uintptr(unsafe.Pointer(&in)), uintptr(unsafe.Pointer(&size)), 0); e != 0 {
		return
	}
	mask := following.mask.Load()
	if !mask.IsSet(int(in)) {
		return
	}
	var cpu uint32
	if _, _, e := syscall.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 || int32(cpu) == in {
		return
	}
	var one unix.CPUSet
	one.Set(int(in))
	// The two calls must act on one thread: a goroutine that changed
	// threads between them would leave the first pinned. Both are raw
	// system calls, as the worker's reads are.
	runtime.LockOSThread()
	if unix.SchedSetaffinity(0, &one) == nil {
		_ = unix.SchedSetaffinity(0, mask)
		following.moves.Add(1)
	}
	runtime.UnlockOSThread()
}
