package runner

import (
	"syscall"
	"time"
	"unsafe"
)

// spareSlice is how long the spare P's holder keeps it in each raw sleep
// before it lets the coordinator, the monitor, timers and the network
// poller run on it.
const spareSlice = 5 * time.Millisecond

// holdSpareFrom is the number of workers per core from which holdSpare
// runs: it saves a wake-up per preemption (100 a second per worker) and
// costs its own turns and, while cores idle, some of their time. On 2
// cores (PostgreSQL oltp_point_select, 4 alternating pairs of 10 s runs)
// it cost 10% of the QPS at 4 threads, changed nothing at 8, and gained
// 3% at 16 and 10% at 64. It runs only under the batch policy (--sched,
// PostgreSQL's default): under the normal one, MariaDB oltp_point_select at
// 16 threads lost a third of its QPS and doubled its system time per query
// with it (4 of 4 runs), for reasons not understood; under batch it changed
// nothing there.
const holdSpareFrom = 4

// holdSpare keeps the spare P that setProcs adds busy until done closes,
// so that no P is idle while the workers run. A worker waiting in raw
// system calls never passes through the scheduler, so sysmon preempts it
// every 10 ms. The preempted worker yields (goschedImpl) and calls wakep,
// which, when a P is idle, wakes another thread for it (a futex). That
// thread spins, often takes the worker's goroutine, and the worker's own
// thread sleeps again (a futex), so the worker resumes on another thread.
// On a quiet 2-core machine these wake-ups land on an idle core (an
// inter-processor interrupt), and they cost PostgreSQL oltp_point_select
// at 64 threads 14% more system time per query than sysbench and 4.5% of
// its QPS. With every P busy, wakep finds none idle and wakes no thread:
// the same run's system time per query fell to sysbench's (0.98x) and its
// QPS rose to 1.06x sysbench's (docs/benchmarks.md, "The client's whole
// cost"). Goroutines still change threads: at 16 threads each of dbarena's
// threads woke 2 to 10 different backends in 1.5 s with the holder or
// without it, where each of sysbench's woke one ("One thread per worker").
//
// The holder sleeps in raw nanosleep(2) a spareSlice at a time, then
// parks for a moment (time.Sleep): its P then runs the timers and
// goroutines due and polls the network before the holder takes it again.
func holdSpare(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		rawSleep(spareSlice)
		time.Sleep(time.Microsecond)
	}
}

// rawSleep sleeps d in a raw nanosleep(2), keeping its P. Not inlined, so
// that a caller's loop passes a function prologue (a preemption point), as
// the loops around rawsock's system calls do.
//
//go:noinline
func rawSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
