package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// staleAfter is how long a running run written from another machine may go
// without a write (AppendIntervals, Checkpoint) before readers call it
// aborted. A run checkpoints at least every minute.
const staleAfter = 10 * time.Minute

// owner identifies the process that writes a running run: its machine
// (hostname and, on Linux, the boot id, which changes at every boot), its
// pid and the pid's start time (clock ticks since boot, from
// /proc/PID/stat), so that a reused pid is not taken for the owner.
type owner struct {
	host  string
	boot  string
	pid   int64
	start int64
}

// currentOwner describes this process; fields it cannot learn stay empty.
func currentOwner() owner {
	o := owner{pid: int64(os.Getpid())}
	o.host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		o.boot = strings.TrimSpace(string(b))
	}
	o.start, _ = processStart(o.pid)
	return o
}

// processStart returns the start time of process pid in clock ticks since
// boot: field 22 of /proc/PID/stat. The error wraps fs.ErrNotExist when
// there is no such process.
func processStart(pid int64) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.FormatInt(pid, 10) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStat(b)
}

// parseStat reads the start time from the text of /proc/PID/stat. The
// command name (field 2) is in parentheses and may hold spaces or ')', so
// fields are counted from the last ')'.
func parseStat(b []byte) (int64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 {
		return 0, errors.New("malformed /proc stat")
	}
	return strconv.ParseInt(f[19], 10, 64)
}

// alive reports whether the owner of a running run may still be writing
// it. On this machine (same hostname) that is exact: the owner is gone
// when the machine rebooted since, its pid does not exist or belongs to a
// process started at another time. Elsewhere, or when /proc cannot tell,
// (no /proc), the owner is alive while its last write (heartbeat) is younger than
// staleAfter.
func (s *Store) alive(o owner, heartbeat, now time.Time) bool {
	if o.host != "" && o.host == s.self.host && o.pid > 0 && s.self.start != 0 {
		if o.boot != "" && s.self.boot != "" && o.boot != s.self.boot {
			return false
		}
		start, err := processStart(o.pid)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return false
		case err == nil && o.start != 0:
			return start == o.start
		}
	}
	return now.Sub(heartbeat) < staleAfter
}
