package runner

import (
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// spareSlice is how long the spare P's holder waits in each raw sleep
// before it lets the coordinator, the monitor and timers run on it.
const spareSlice = 5 * time.Millisecond

// holdSpare keeps the spare P that setProcs adds busy until done closes,
// so that no P is idle while the workers run. A worker waiting in raw
// system calls never passes through the scheduler, so sysmon preempts it
// every 10 ms; the preempted worker's yield (goschedImpl) calls wakep,
// which, with an idle P, wakes another thread (a futex), which spins,
// often takes the worker's goroutine and sleeps again: the worker resumes
// on another thread. With every P busy, wakep finds none idle and the
// worker resumes on its own thread. The holder sleeps in raw nanosleep(2)
// a spareSlice at a time, then yields (runtime.Gosched): its P runs the
// timers and goroutines due (the coordinator's ticks, the monitor), and
// the network poller is read by sysmon (every 10 ms) instead.
func holdSpare(done <-chan struct{}) {
	mode := os.Getenv("DBARENA_XSPARE")
	if mode == "off" {
		return
	}
	ts := syscall.NsecToTimespec(spareSlice.Nanoseconds())
	for {
		select {
		case <-done:
			return
		default:
		}
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		if mode == "park" {
			time.Sleep(time.Microsecond)
		} else {
			runtime.Gosched()
		}
	}
}
