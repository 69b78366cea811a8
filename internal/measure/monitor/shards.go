package monitor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// MergeShards returns the monitor section and the bottleneck verdict of a
// sharded run from its shards' runs (those that ran to their end), and
// merged, the run they were merged into (its Threads, DurationS and
// Totals.Events are the shards' sums and span). Each shard sampled the
// same server and the same host, so the server's figures (server.*,
// counter.*, gauge.*, wait.*) and the host's (host.*, disk.*, net.*) are
// averaged over the shards, while client.* (each shard is a dbarena
// process of its own) are summed. The merged section has one sample
// covering the run, as a run without report intervals has.
//
// It returns a nil monitor and the reason when the verdict would not be
// honest: a shard without monitor figures, or shards on several hosts
// (their host and client figures describe different machines).
func MergeShards(shards []*summary.Run, merged *summary.Run) (*summary.Monitor, *summary.Bottleneck, string) {
	if len(shards) == 0 || merged == nil {
		return nil, nil, "no shard ran to its end"
	}
	hosts := map[string]bool{}
	for _, r := range shards {
		if r.Monitor == nil || len(r.Monitor.Avg) == 0 {
			return nil, nil, fmt.Sprintf("shard run %d has no monitor figures", r.ID)
		}
		hosts[r.Host.Hostname] = true
	}
	if len(hosts) > 1 {
		return nil, nil, fmt.Sprintf("the shards ran on %d hosts, whose CPU figures do not add up to one machine's", len(hosts))
	}
	avg := map[string]float64{}
	count := map[string]int{}
	waits := map[string]float64{}
	nWaits := 0
	var notes []string
	for _, r := range shards {
		for k, v := range r.Monitor.Avg {
			if strings.HasPrefix(k, "wait.") {
				continue // from the run's wait figures below
			}
			avg[k] += v
			count[k]++
		}
		if w := runWaits(r.Monitor.Samples); w != nil {
			for k, v := range w {
				waits[k] += v
			}
			nWaits++
		}
		if r.Monitor.Note != "" {
			notes = append(notes, r.Monitor.Note)
		}
	}
	for k, n := range count {
		if !strings.HasPrefix(k, "client.") {
			avg[k] /= float64(n)
		}
	}
	for k := range waits {
		waits[k] /= float64(nWaits)
		avg[k] = waits[k]
	}
	m := &summary.Monitor{Avg: avg, Max: map[string]float64{}}
	for k, v := range avg {
		m.Max[k] = v
	}
	secs := merged.DurationS
	if secs <= 0 {
		return nil, nil, "the merged run has no duration"
	}
	m.Samples = []summary.Sample{{TS: secs, Values: avg}}
	m.PerTxn = PerTxn(m.Samples, merged.Totals.Events, nil)
	notes = uniq(notes)
	m.Note = fmt.Sprintf("merged from %d shards' monitors: one sample covers the run; client.* summed over the shards, the server's and the host's figures averaged", len(shards))
	if len(notes) > 0 {
		m.Note += "; " + strings.Join(notes, "; ")
	}
	run := *merged
	run.Monitor = m
	if run.Host.Cores <= 0 {
		run.Host.Cores = shards[0].Host.Cores
	}
	return m, Verdict(&run), ""
}

// uniq returns the distinct strings of s, sorted.
func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
