// Package shard runs one logical run as N shards on as many client hosts
// and merges them back exactly: the split of a run's threads, events and
// rate (split.go), the start barrier in the shared results store
// (barrier.go), and the merge of the shards' stored runs into one summary
// (merge.go). Shards are numbered from 0, as Kubernetes numbers the pods
// of an Indexed Job (JOB_COMPLETION_INDEX).
package shard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/measure/runner"
)

// MaxShards bounds N: far more client hosts than any run needs.
const MaxShards = 1024

// ParseIndex parses --shard I/N: shard I (0-based) of N.
func ParseIndex(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, 0, fmt.Errorf("--shard %q: want I/N, shard I (0-based) of N, e.g. 0/4", s)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("--shard %q: I and N must be whole numbers, e.g. 0/4", s)
	case n < 1 || n > MaxShards:
		return 0, 0, fmt.Errorf("--shard %q: N must be between 1 and %d", s, MaxShards)
	case i < 0 || i >= n:
		return 0, 0, fmt.Errorf("--shard %q: I must be between 0 and N-1 (shards are numbered from 0)", s)
	}
	return i, n, nil
}

// CheckKey checks a --run-id: 1 to 63 letters, digits, '.', '_' or '-',
// starting with a letter (so that it is never taken for a numeric run id,
// and fits a Kubernetes label).
func CheckKey(key string) error {
	if key == "" || len(key) > 63 {
		return fmt.Errorf("--run-id %q: want 1 to 63 characters", key)
	}
	for j, c := range key {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if j == 0 && !letter {
			return fmt.Errorf("--run-id %q: must start with a letter", key)
		}
		if !letter && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("--run-id %q: only letters, digits, '.', '_' and '-'", key)
		}
	}
	return nil
}

// Part is shard i's share of a count split in n: the count divided evenly,
// the remainder going one each to the first shards. The parts add up to
// total exactly.
func Part(total int64, i, n int) int64 {
	q, r := total/int64(n), total%int64(n)
	if int64(i) < r {
		q++
	}
	return q
}

// first is the sum of the parts of shards 0..i-1.
func first(total int64, i, n int) int64 {
	q, r := total/int64(n), total%int64(n)
	return int64(i)*q + min(int64(i), r)
}

// Config returns shard i of n's share of cfg: its threads (numbered as
// they would be on one machine, through FirstWorker), its events and its
// rate (in proportion to its threads). Each shard needs at least one
// thread, and one event when the run counts events.
func Config(cfg runner.Config, i, n int) (runner.Config, error) {
	var errs []error
	if cfg.Threads < n {
		errs = append(errs, fmt.Errorf("--threads %d: fewer threads than --shards %d; each shard needs one", cfg.Threads, n))
	}
	if cfg.Events > 0 && cfg.Events < int64(n) {
		errs = append(errs, fmt.Errorf("--events %d: fewer events than --shards %d; each shard needs one", cfg.Events, n))
	}
	if len(errs) > 0 {
		return cfg, errors.Join(errs...)
	}
	out := cfg
	out.Threads = int(Part(int64(cfg.Threads), i, n))
	out.FirstWorker = cfg.FirstWorker + int(first(int64(cfg.Threads), i, n))
	if cfg.Events > 0 {
		out.Events = Part(cfg.Events, i, n)
	}
	if cfg.Rate > 0 {
		out.Rate = cfg.Rate * float64(out.Threads) / float64(cfg.Threads)
	}
	if cfg.QueueSize > 0 {
		out.QueueSize = max(1, int(Part(int64(cfg.QueueSize), i, n)))
	}
	return out, nil
}
