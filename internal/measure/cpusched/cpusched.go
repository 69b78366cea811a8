// Package cpusched sets the Linux scheduling policy of dbarena's own
// threads while a workload runs.
//
// A benchmark client that shares the machine with its server should not
// take the CPU from the server each time a reply wakes it. Under the
// default policy (SCHED_OTHER) a woken thread preempts the running task
// when it has used less than its share, and a lean client always has: its
// threads then preempt the server's backends on most replies. Under
// SCHED_BATCH a woken thread waits until the running task blocks (a
// backend does so as soon as it has sent its reply, to read the next
// statement) or its time slice ends, with the same share of the CPU.
// There are fewer context switches, and the server keeps its caches.
package cpusched

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// The policies a run may ask for.
const (
	// Batch is SCHED_BATCH: woken threads do not preempt the running task.
	Batch = "batch"
	// Normal is SCHED_OTHER, Linux's default.
	Normal = "normal"
	// Auto leaves the choice to the caller's rule (a run's default).
	Auto = "auto"
)

// Linux scheduling policies (sched.h).
const (
	schedOther = 0
	schedFIFO  = 1
	schedRR    = 2
	schedBatch = 3
	schedIdle  = 5
)

// Valid reports whether name is a choice a run may make: Batch, Normal or
// Auto.
func Valid(name string) bool { return name == Batch || name == Normal || name == Auto }

// Current names the calling thread's policy: "normal", "batch", "idle",
// "fifo", "rr", or the policy's number.
func Current() string {
	p, err := getPolicy(0)
	if err != nil {
		return Normal
	}
	return policyName(p)
}

// Apply gives every thread of the process the policy named and returns
// the policy in effect and a function that gives every thread back the
// default policy. Threads created meanwhile inherit the policy of the
// thread that creates them. When the process does not run under the
// default policy (the user started it under chrt, say), Apply leaves it
// as it is: it returns that policy and a restore that does nothing.
func Apply(name string) (effective string, restore func(), err error) {
	restore = func() {}
	cur, err := getPolicy(0)
	if err != nil {
		return Normal, restore, fmt.Errorf("cpusched: %s: reading the current policy: %w", name, err)
	}
	if cur != schedOther {
		return policyName(cur), restore, nil
	}
	if name != Batch {
		return Normal, restore, nil
	}
	if err := setAll(schedBatch); err != nil {
		_ = setAll(schedOther)
		return Normal, restore, fmt.Errorf("cpusched: %s: %w", name, err)
	}
	return Batch, func() { _ = setAll(schedOther) }, nil
}

// setAll sets the policy of every thread of the process. A thread created
// while it runs is set by a further pass: passes repeat (at most 4) until
// one finds every thread set already.
func setAll(policy int) error {
	for range 4 {
		tids, err := threads()
		if err != nil {
			return err
		}
		changed := false
		for _, tid := range tids {
			p, err := getPolicy(tid)
			if errors.Is(err, syscall.ESRCH) {
				continue // the thread has ended
			}
			if err != nil {
				return err
			}
			if p == policy {
				continue
			}
			if err := setPolicy(tid, policy); err != nil && !errors.Is(err, syscall.ESRCH) {
				return err
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return nil
}

// threads lists the ids of the process's threads.
func threads() ([]int, error) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

func getPolicy(tid int) (int, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r) &^ 0x40000000, nil // without SCHED_RESET_ON_FORK
}

func setPolicy(tid, policy int) error {
	var param struct{ priority int32 } // sched_priority: 0 for the non-real-time policies
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&param)))
	if e != 0 {
		return e
	}
	return nil
}

func policyName(p int) string {
	switch p {
	case schedOther:
		return Normal
	case schedBatch:
		return Batch
	case schedIdle:
		return "idle"
	case schedFIFO:
		return "fifo"
	case schedRR:
		return "rr"
	}
	return strconv.Itoa(p)
}
