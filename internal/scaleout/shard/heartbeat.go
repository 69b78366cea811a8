package shard

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// HeartbeatEnv tells a local shard where to send its heartbeat: "FD:EVERY",
// a pipe's file descriptor (inherited from Local) and how often to write
// to it.
const HeartbeatEnv = "DBARENA_SHARD_HEARTBEAT"

// Bounds of a local sharded run whose shard stops answering.
const (
	// DefaultUnresponsive is how long Local waits for a sign of life of a
	// shard (a heartbeat) before it takes it for stopped.
	DefaultUnresponsive = 30 * time.Second
	// DefaultGrace is how long the other shards, interrupted then, have
	// to store their partial runs before they are killed.
	DefaultGrace = 15 * time.Second
)

// ErrUnresponsive is wrapped by the exit error of a shard Local killed
// because it sent no heartbeat for Local.Unresponsive (stopped, frozen).
var ErrUnresponsive = errors.New("stopped answering")

// UnresponsiveError is the exit error of the shard Local killed because
// it stopped answering; it wraps ErrUnresponsive.
type UnresponsiveError struct {
	Index, PID int
	// Silent is how long the shard had sent no heartbeat.
	Silent time.Duration
}

func (e *UnresponsiveError) Error() string {
	return fmt.Sprintf("shard %d %v: no heartbeat for %v, killed (pid %d)", e.Index, ErrUnresponsive, e.Silent, e.PID)
}

func (e *UnresponsiveError) Unwrap() error { return ErrUnresponsive }

// heartbeatEvery is how often a shard beats for an unresponsive bound d: a
// tenth of it, from 100 ms to 5 s.
func heartbeatEvery(d time.Duration) time.Duration {
	return min(max(d/10, 100*time.Millisecond), 5*time.Second)
}

// StartHeartbeat starts the heartbeat of a local shard, as spec (the value
// of HeartbeatEnv, set by Local) says: a goroutine writes a byte to the
// pipe every so often, until the pipe closes. It beats while the process
// runs at all; a stopped (SIGSTOP) or frozen process does not, and Local
// then kills it.
func StartHeartbeat(spec string) error {
	fdText, everyText, ok := strings.Cut(spec, ":")
	fd, err1 := strconv.Atoi(fdText)
	every, err2 := time.ParseDuration(everyText)
	if !ok || err1 != nil || err2 != nil || fd < 3 || every <= 0 {
		return fmt.Errorf("$%s=%q: want FD:INTERVAL", HeartbeatEnv, spec)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return fmt.Errorf("$%s=%q: descriptor %d is not a pipe", HeartbeatEnv, spec, fd)
	}
	syscall.CloseOnExec(fd) // not for the processes this one starts
	f := os.NewFile(uintptr(fd), "heartbeat")
	go func() {
		defer f.Close()
		for {
			if _, err := f.Write([]byte{'.'}); err != nil {
				return // the coordinator is gone
			}
			time.Sleep(every)
		}
	}()
	return nil
}

// beats is the time of each shard's last heartbeat (unix nanoseconds).
type beats []atomic.Int64

func (b beats) beat(i int) { b[i].Store(time.Now().UnixNano()) }

func (b beats) since(i int) time.Duration {
	return time.Since(time.Unix(0, b[i].Load()))
}

// readBeats records a heartbeat of shard i for each read from r, until r
// fails (the shard exited and the pipe closed).
func readBeats(r *os.File, b beats, i int) {
	buf := make([]byte, 64)
	for {
		if _, err := r.Read(buf); err != nil {
			return
		}
		b.beat(i)
	}
}
