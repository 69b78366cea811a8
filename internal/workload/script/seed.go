package script

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

var (
	_ workload.ThreadSetter = (*Workload)(nil)
	_ workload.Noter        = (*Workload)(nil)
)

// randomSeed is --random-seed, as pgbench's: an unsigned integer, "time"
// (the default: the clock, in microseconds) or "rand" (a strong random
// source). The environment variable PGBENCH_RANDOM_SEED is read when the
// flag is not given, as pgbench does.
type randomSeed struct {
	spec string // as given; "" when not given
}

func (r *randomSeed) String() string { return r.spec }

// Type implements pflag.Value.
func (r *randomSeed) Type() string { return "N|time|rand" }

// Set implements pflag.Value.
func (r *randomSeed) Set(s string) error {
	if _, err := parseSeed(s); err != nil {
		return err
	}
	r.spec = s
	return nil
}

// parseSeed checks a seed specification; an integer is returned at once,
// time and rand are read by resolve.
func parseSeed(s string) (uint64, error) {
	if s == "time" || s == "rand" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("unrecognized random seed option %q: expecting an unsigned integer, \"time\" or \"rand\"", s)
	}
	return n, nil
}

// seeding is how a run's random streams are derived from its seed, as
// pgbench 15 derives them (pgscript.Streams).
type seeding struct {
	rseed     randomSeed
	threads   int
	seedMu    sync.Mutex
	resolved  bool
	seedValue uint64 // the run's seed (:random_seed)
	explicit  bool   // given by --random-seed or PGBENCH_RANDOM_SEED
	streams   *pgscript.Streams
	clients   map[int][2]*pgscript.PRNG // each client's streams (clientStreams)
	varNote   string                    // a variable no command defines (Validate)
}

// SetThreads implements workload.ThreadSetter: each thread is one
// pgbench client, whose streams are drawn in order from the seed.
func (wl *Workload) SetThreads(n int) {
	wl.seedMu.Lock()
	defer wl.seedMu.Unlock()
	wl.threads = n
}

// Notes implements workload.Noter: the seed of the run, as pgbench
// reports a seed it was given, so that any run can be repeated.
// A variable no command defines is noted too: pgbench fails only when a
// command reads it.
func (wl *Workload) Notes(int) []string {
	var notes []string
	if wl.varNote != "" {
		notes = append(notes, wl.varNote+" (the run fails if a command reads it)")
	}
	seed, explicit := wl.runSeed()
	if explicit {
		return append(notes, fmt.Sprintf("setting random seed to %d", seed))
	}
	return append(notes, fmt.Sprintf("random seed %d from the clock (repeat the run's random numbers with --random-seed=%d)", seed, seed))
}

// runSeed resolves the run's seed once: --random-seed, else
// PGBENCH_RANDOM_SEED, else the clock.
func (wl *Workload) runSeed() (uint64, bool) {
	wl.seedMu.Lock()
	defer wl.seedMu.Unlock()
	return wl.resolveLocked()
}

func (wl *Workload) resolveLocked() (uint64, bool) {
	if wl.resolved {
		return wl.seedValue, wl.explicit
	}
	spec := wl.rseed.spec
	if spec == "" {
		if env, ok := os.LookupEnv("PGBENCH_RANDOM_SEED"); ok {
			if _, err := parseSeed(env); err == nil {
				spec = env
			}
		}
	}
	wl.explicit = spec != ""
	switch spec {
	case "", "time":
		wl.seedValue = uint64(time.Now().UnixMicro())
	case "rand":
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			wl.seedValue = uint64(time.Now().UnixNano())
		} else {
			wl.seedValue = binary.LittleEndian.Uint64(b[:])
		}
	default:
		wl.seedValue, _ = parseSeed(spec)
	}
	wl.resolved = true
	return wl.seedValue, wl.explicit
}

// clientStreams returns client id's function and script choice streams
// and :default_seed (drawn unless -D defines it). A client's streams go
// on across its connections (a reconnection, --connect per-event), as a
// pgbench client's do under -C: a new worker of the same id continues
// them instead of drawing the same numbers again.
func (wl *Workload) clientStreams(id int) (fn, choose *pgscript.PRNG, defaultSeed int64) {
	wl.seedMu.Lock()
	defer wl.seedMu.Unlock()
	seed, _ := wl.resolveLocked()
	if wl.streams == nil {
		_, defined := wl.predefined["default_seed"]
		wl.streams = pgscript.NewStreams(seed, max(wl.threads, 1), defined)
		wl.clients = map[int][2]*pgscript.PRNG{}
	}
	c, ok := wl.clients[id]
	if !ok {
		f, ch := wl.streams.ClientSeeds(id)
		c = [2]*pgscript.PRNG{pgscript.NewPRNG(f), pgscript.NewPRNG(ch)}
		wl.clients[id] = c
	}
	return c[0], c[1], wl.streams.Default
}

// validSeed reports a bad PGBENCH_RANDOM_SEED, as pgbench refuses it.
func validSeed() error {
	if env, ok := os.LookupEnv("PGBENCH_RANDOM_SEED"); ok {
		if _, err := parseSeed(env); err != nil {
			return fmt.Errorf("PGBENCH_RANDOM_SEED: %w", err)
		}
	}
	return nil
}
