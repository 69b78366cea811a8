package execute

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox"
)

// Monitor modes (--monitor).
const (
	MonitorOn   = "on"   // everything this machine can see of the target
	MonitorOff  = "off"  // no host or server-process figures: server counters and dbarena's own
	MonitorNone = "none" // no sampling at all
)

// ValidMonitor reports whether mode is a --monitor value.
func ValidMonitor(mode string) bool {
	return mode == MonitorOn || mode == MonitorOff || mode == MonitorNone
}

// procRoot and sysRoot are where the host's figures are read.
const (
	procRoot = "/proc"
	sysRoot  = "/sys"
)

// sampleTimeout bounds the server-side part of one sample.
const sampleTimeout = 5 * time.Second

// Monitor is the monitor of one run or load, with what it learnt about the
// target while starting. A nil *Monitor samples nothing; its methods are
// nil-safe.
type Monitor struct {
	*monitor.Monitor
	// Host is true when host figures are sampled (progress lines show them).
	Host bool
	// Storage holds the server's data directory, when known.
	Storage *summary.Storage
	// Lines are said once, before the run (what is not sampled and why).
	Lines []string
	// started is when sampling began.
	started time.Time
	// mu keeps the measured period's start (on the runner's goroutine)
	// apart from interval samples (on its callback goroutine).
	mu sync.Mutex
}

// StartMonitor builds the samplers mode asks for and sets their baseline;
// home is DBARENA_HOME, where sandboxes are recorded. It returns nil for
// MonitorNone. Nothing here stops a run: what cannot be sampled is said in
// the monitor's note.
func StartMonitor(ctx context.Context, home string, s *Session, mode string) *Monitor {
	if mode == MonitorNone {
		return nil
	}
	rm := &Monitor{}
	var samplers []monitor.Sampler
	local := s.NoDatabase || monitor.IsLocal(s.Target) // Standalone: this host
	switch {
	case !local:
		rm.note(fmt.Sprintf("remote target %s: server counters, the wait profile and dbarena's own figures only (host and server-process figures would describe this machine, not the server)", s.Target.MaskedDSN()))
	case mode == MonitorOff:
		rm.note("--monitor off: no host or server-process figures")
	default:
		rm.Host = true
		samplers = append(samplers, monitor.HostSamplers(procRoot, sysRoot)...)
		pid, datadir := 0, ""
		if !s.NoDatabase {
			pid, datadir = serverProcess(ctx, home, s)
		}
		switch {
		case s.NoDatabase:
		case pid > 0:
			// PostgreSQL serves each connection from a child of the postmaster:
			// the sampler counts the children with the server.
			samplers = append(samplers, monitor.NewProcessSampler(procRoot, "server", pid, s.Dialect.ProcessPerConnection()))
		default:
			rm.note("server process not found: no server.* figures")
		}
		if datadir != "" {
			if st, err := monitor.StorageOf(procRoot, sysRoot, datadir); err == nil {
				rm.Storage = st
			}
		}
	}
	samplers = append(samplers, monitor.NewProcessSampler(procRoot, "client", os.Getpid(), false))
	if s.NoDatabase {
		rm.note("no database: host and dbarena's own figures only")
	} else if srv, err := monitor.OpenServerSampler(ctx, s.Dialect, s.Target); err == nil {
		samplers = append(samplers, srv)
	} else {
		rm.note("server counters: " + s.Target.Mask(err.Error()))
	}
	if !s.NoDatabase && mode != MonitorOff { // "" (plan steps) is the default, on
		samplers = rm.addWaits(ctx, s, samplers)
	}
	rm.Monitor = monitor.New(samplers...)
	for _, l := range rm.Lines {
		rm.Note("%s", l)
	}
	rm.Begin(ctx)
	rm.started = time.Now()
	return rm
}

// addWaits adds the wait profile's sampler (--monitor on), or says why
// there is none.
func (rm *Monitor) addWaits(ctx context.Context, s *Session, samplers []monitor.Sampler) []monitor.Sampler {
	ws, line, err := monitor.OpenWaitSampler(ctx, s.Dialect, s.Target)
	switch {
	case err != nil:
		rm.note("wait profile: " + s.Target.Mask(err.Error()))
	case ws != nil:
		samplers = append(samplers, ws)
	}
	if line != "" {
		rm.note(s.Target.Mask(line))
	}
	return samplers
}

func (rm *Monitor) note(line string) { rm.Lines = append(rm.Lines, line) }

// serverProcess finds the local server's process and data directory: from
// the sandbox record, or by asking the server.
func serverProcess(ctx context.Context, home string, s *Session) (int, string) {
	if s.Target.Sandbox != "" {
		if sb, err := sandbox.NewManager(home).Get(s.Target.Sandbox); err == nil && sb.PID > 0 {
			return sb.PID, sb.Datadir
		}
	}
	qctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	pid, err := s.Dialect.ServerPID(qctx, s.DB, procRoot)
	if err != nil {
		pid = 0
	}
	dir, _ := s.Dialect.DataDir(qctx, s.DB)
	return pid, dir
}

// disks are the devices whose I/O counts per transaction: the one under
// the data directory when known, else every sampled disk.
func (rm *Monitor) disks() []string {
	if rm.Storage != nil && rm.Storage.Device != "" {
		return []string{rm.Storage.Device}
	}
	return nil
}

// Stop releases the samplers.
func (rm *Monitor) Stop() {
	if rm != nil {
		rm.Close()
	}
}

// announce returns what the run should say before it starts.
func (rm *Monitor) announce() []string {
	if rm == nil {
		return nil
	}
	return rm.Lines
}

// begin resets the baseline as the measured period begins.
func (rm *Monitor) begin(ctx context.Context) {
	if rm != nil {
		rm.mu.Lock()
		defer rm.mu.Unlock()
		rm.Begin(ctx)
	}
}

// interval samples the interval iv closes: recorded when measured, only
// shown when it is a warm-up interval.
func (rm *Monitor) interval(ctx context.Context, iv runner.Interval) map[string]float64 {
	if rm == nil {
		return nil
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if iv.Warmup {
		return rm.Peek(ctx)
	}
	return rm.Sample(ctx, iv.End.Seconds())
}

// lastSample returns the newest recorded sample, if any.
func (rm *Monitor) lastSample() *summary.Sample {
	if rm == nil {
		return nil
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	s := rm.Samples()
	if len(s) == 0 {
		return nil
	}
	last := s[len(s)-1]
	return &last
}

// summary closes the series (one sample for the whole run when there were
// no report intervals) and summarises it.
func (rm *Monitor) summary(ctx context.Context, elapsed time.Duration, events int64) *summary.Monitor {
	if rm == nil {
		return nil
	}
	if len(rm.Samples()) == 0 && elapsed > 0 {
		rm.Sample(ctx, elapsed.Seconds())
	}
	return rm.Summary(events, rm.disks())
}

// ProgressSample samples one second of a load, for its progress line.
// Nil-safe: a nil monitor samples nothing.
func (rm *Monitor) ProgressSample(elapsed time.Duration) map[string]float64 {
	if rm == nil {
		return nil
	}
	return rm.Sample(context.Background(), elapsed.Seconds())
}

// LoadSummary closes a load's series and summarises it (a load is not
// stored as a run); nil when nothing was sampled.
func (rm *Monitor) LoadSummary() *summary.Monitor {
	if rm == nil {
		return nil
	}
	rm.Sample(context.Background(), time.Since(rm.started).Seconds()) // the last, partial second
	m := rm.Summary(0, rm.disks())
	if len(m.Samples) == 0 {
		return nil
	}
	return m
}
