//go:build unix

package micro

import (
	"syscall"
	"time"
)

// cpuTimes is the user and system CPU time dbarena's process has used so
// far (all its threads), as sql-bench's Benchmark times() reports its own
// client's: the "usr" and "sys" of a Time for line.
func cpuTimes() (usr, sys time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
