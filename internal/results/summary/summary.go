// Package summary defines the run summary, schema "dbarena.run/v1": the
// JSON written by --json, stored in the results store and read by reports.
// Field names and units are a public contract (docs/CLI.md); add fields,
// never rename them.
package summary

import (
	"slices"
	"strings"
	"time"
)

// Schema is the value of Run.Schema.
const Schema = "dbarena.run/v1"

// Run status values.
const (
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	// StatusDegraded: the run ended, but its target was unreachable for
	// part of the measured period (see Run.Outages).
	StatusDegraded = "degraded"
	// StatusRunning is stored while a run goes on; a store reports a
	// running run whose process is gone as StatusAborted.
	StatusRunning = "running"
	// StatusAborted: dbarena died mid-run (kill -9, OOM, power cut); the
	// run holds everything up to its last checkpoint.
	StatusAborted = "aborted"
)

// Run is one stored run.
type Run struct {
	Schema    string    `json:"schema"`
	ID        int64     `json:"id"`
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Workload  string    `json:"workload"`
	Target    Target    `json:"target"`
	// Params are the workload's parameters.
	Params  map[string]any `json:"params"`
	Threads int            `json:"threads"`
	// Jobs is the threads the workers shared (--jobs); 0: one each.
	Jobs int `json:"jobs,omitempty"`
	// Sched is the scheduling policy of dbarena's threads during the run
	// (--sched): batch or normal, or the one it was started under.
	Sched string `json:"sched,omitempty"`
	// Placement is "follow" when the workers' threads followed their
	// server processes' CPUs (--placement), with the moves they made;
	// empty when the kernel placed them.
	Placement      string            `json:"placement,omitempty"`
	PlacementMoves int64             `json:"placement_moves,omitempty"`
	Rate           float64           `json:"rate,omitempty"`
	DurationS      float64           `json:"duration_s"`
	WarmupS        float64           `json:"warmup_s"`
	Totals         Totals            `json:"totals"`
	Throughput     Throughput        `json:"throughput"`
	LatencyMS      Latency           `json:"latency_ms"`
	Intervals      []Interval        `json:"intervals"`
	PerType        map[string]Type   `json:"per_type,omitempty"`
	Checks         []Check           `json:"checks,omitempty"`
	TpmC           *float64          `json:"tpmc,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	// ServerCounters are deltas of the server's own counters over the
	// measured period, for cross-checking Totals.
	ServerCounters map[string]int64 `json:"server_counters,omitempty"`
	// Settings are the server settings that matter for the result.
	Settings map[string]string `json:"settings,omitempty"`
	Host     Host              `json:"host"`
	Dbarena  Dbarena           `json:"dbarena"`
	// Monitor is the host and server context sampled beside the run.
	Monitor *Monitor `json:"monitor,omitempty"`
	// Bottleneck is the verdict on what limited the run, with its
	// evidence, from the monitor's figures (absent without a monitor).
	Bottleneck *Bottleneck `json:"bottleneck,omitempty"`
	// Plan places the run in an experiment plan's matrix.
	Plan *PlanRef `json:"plan,omitempty"`
	// Histogram is the merged latency histogram, HDR-encoded (base64), in
	// microseconds. It is kept in the store and omitted from --json output.
	Histogram string `json:"histogram,omitempty"`

	// ConnectMS is the connect and authentication time of Totals.Connects
	// (--connect), apart from LatencyMS.
	ConnectMS *Latency `json:"connect_ms,omitempty"`
	// Outages are the windows of the measured period during which the
	// target could not be reached.
	Outages []Outage `json:"outages,omitempty"`
	// UptimeS is the measured time minus the outages; equal to DurationS
	// when there were none.
	UptimeS float64 `json:"uptime_s,omitempty"`
	// Notes are warnings a reader of the figures must see: a server
	// restart across the counters, a limit raised, short tables.
	Notes []string `json:"notes,omitempty"`
	// Figures are workload-specific numbers, by dotted name (TPC-C's
	// "delivery.skipped_districts").
	Figures map[string]float64 `json:"figures,omitempty"`

	// Replay holds a replay run's own figures (workload replay): lag
	// behind the capture's schedule and recorded result digests.
	Replay *Replay `json:"replay,omitempty"`

	// SettingsAll is a snapshot of every server variable or setting as the
	// run ended (SHOW GLOBAL VARIABLES, PostgreSQL's SHOW ALL), for
	// reproducing the run; values of secret-looking names are masked.
	SettingsAll map[string]string `json:"settings_all,omitempty"`

	// RunKey is the --run-id of a run spread over client hosts: set on
	// each shard's own run and on the merged run.
	RunKey string `json:"run_key,omitempty"`
	// Shard places a shard's own run in its sharded run (index, count).
	Shard *Shard `json:"shard,omitempty"`
	// Shards are each shard's own figures, on a merged sharded run.
	Shards []Shard `json:"shards,omitempty"`
	// TypeHistograms are the per-type latency histograms, encoded as
	// Histogram; kept in the store for shard runs (so that they merge
	// exactly) and omitted from --json output.
	TypeHistograms map[string]string `json:"type_histograms,omitempty"`

	// Sections are the report sections the run's figures ask for beyond
	// those every run gets (SectionMicro, SectionSiege,
	// SectionFingerprints), named by the workload when it summarises the
	// run. Reports read them through ReportSections.
	Sections []string `json:"sections,omitempty"`

	// Thresholds are the results of the run's thresholds (run
	// --threshold, a plan workload's thresholds:), in the order given.
	Thresholds []Threshold `json:"thresholds,omitempty"`
}

// Threshold is the result of one threshold on a run: the expression, the
// figure it read and whether it held.
type Threshold struct {
	// Expr is the expression as given ("p95<5ms", "type:new_order p90<5ms").
	Expr string `json:"expr"`
	// Metric is the canonical figure ("p95", "tps", "errors", "lag_p99");
	// Type the transaction type (or fingerprint id) it is of, "" for the run.
	Metric string `json:"metric"`
	Type   string `json:"type,omitempty"`
	// Op is <, <=, > or >=; Limit the value compared with, in Unit.
	Op    string  `json:"op"`
	Limit float64 `json:"limit"`
	// Unit is "ms", "/s", "%" (errors as a percentage of events and
	// errors) or "" (a count).
	Unit string `json:"unit"`
	// Value is the run's figure, absent when the run has none.
	Value *float64 `json:"value,omitempty"`
	Pass  bool     `json:"pass"`
	// Note says why the threshold could not be judged or failed beside its
	// figure (no per-type figures, the run failed).
	Note string `json:"note,omitempty"`
}

// Report sections a run can ask for (Run.Sections). A report decides what
// to show of a run from these and from the data the run holds (per-type
// figures, checks, tpmC), never from the workload's name.
const (
	// SectionMicro: Figures hold seconds per operation
	// ("micro.seconds.OP"): the micro suite's winner table.
	SectionMicro = "micro"
	// SectionSiege: the run reads best in the columns of a siege table
	// (HTTP requests, replayed traffic).
	SectionSiege = "siege"
	// SectionFingerprints: PerType is keyed by statement fingerprint and
	// Replay holds the capture's figures: the run is compared fingerprint
	// by fingerprint, not shown as transaction types.
	SectionFingerprints = "fingerprints"
)

// AddSection adds report section s to the run's Sections, once.
func (r *Run) AddSection(s string) {
	if !slices.Contains(r.Sections, s) {
		r.Sections = append(r.Sections, s)
	}
}

// HasSection reports whether the run asks for report section s
// (ReportSections).
func (r *Run) HasSection(s string) bool { return slices.Contains(r.ReportSections(), s) }

// ReportSections are the run's report sections: Sections when the run
// carries them; otherwise (a run stored before runs named their sections,
// a failed run whose workload never summarised it, a merged sharded run)
// the sections its workload's name implied when reports decided by name.
// This is the one place a workload's name still decides a report section,
// so that old stored runs render as they always did:
//
//   - "micro": SectionMicro;
//   - a name beginning with "http", "replay" or "siege" (any case):
//     SectionSiege;
//   - "replay" with Replay figures: SectionFingerprints.
//
// The sections are derived here, when read, rather than when the run is
// decoded: a custom UnmarshalJSON on Run would turn off the strict
// decoding (unknown fields refused) that `dbarena import` relies on.
func (r *Run) ReportSections() []string {
	if r.Sections != nil {
		return r.Sections
	}
	var out []string
	if r.Workload == "micro" {
		out = append(out, SectionMicro)
	}
	w := strings.ToLower(r.Workload)
	if strings.HasPrefix(w, "http") || strings.HasPrefix(w, "replay") || strings.HasPrefix(w, "siege") {
		out = append(out, SectionSiege)
	}
	if r.Workload == "replay" && r.Replay != nil {
		out = append(out, SectionFingerprints)
	}
	return out
}

// Shard is one shard of a run spread over client hosts. Index is 0-based.
// On a shard's own run only Index and Count are set; on a merged run each
// shard's figures are there too.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Run is the shard's own stored run (0: none was stored).
	Run    int64  `json:"run,omitempty"`
	Host   string `json:"host,omitempty"`
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// StartSkewMS is how late the shard's clock started after the common
	// start time written at the start barrier, in milliseconds.
	StartSkewMS float64  `json:"start_skew_ms"`
	Threads     int      `json:"threads,omitempty"`
	DurationS   float64  `json:"duration_s,omitempty"`
	Totals      *Totals  `json:"totals,omitempty"`
	TPS         float64  `json:"tps,omitempty"`
	LatencyMS   *Latency `json:"latency_ms,omitempty"`
}

// Target is the server a run talked to; the DSN is masked.
type Target struct {
	Flavor  string `json:"flavor"`
	Version string `json:"version"`
	DSN     string `json:"dsn"`
	Sandbox string `json:"sandbox,omitempty"`
	// TLS is how the run's connections were secured, as the server said
	// of one of them when the run began (absent when unknown: an older
	// run, a run without a database).
	TLS *TLS `json:"tls,omitempty"`
}

// TLS is whether a run's connections used TLS: the mode the target's DSN
// asked for, and the protocol version and cipher the server reports for
// the session.
type TLS struct {
	Enabled bool `json:"enabled"`
	// Mode is the DSN's TLS parameter as dbarena applied it: tls=true,
	// skip-verify, preferred or false (MySQL family; tls-ca or tls-cert
	// imply true) or sslmode=disable ... verify-full (PostgreSQL), with
	// dbarena's default (tls=false, sslmode=disable) when unset.
	Mode    string `json:"mode,omitempty"`
	Version string `json:"version,omitempty"`
	Cipher  string `json:"cipher,omitempty"`
}

// String is TLS for a line of text: "off (sslmode=disable)",
// "on TLSv1.3 TLS_AES_256_GCM_SHA384 (tls=true)".
func (t *TLS) String() string {
	if t == nil {
		return "unknown"
	}
	on := "off"
	if t.Enabled {
		on = strings.TrimSpace(strings.Join([]string{"on", t.Version, t.Cipher}, " "))
	}
	if t.Mode != "" {
		on += " (" + t.Mode + ")"
	}
	return on
}

// Totals are counts over the measured period (warm-up excluded).
type Totals struct {
	Events       int64            `json:"events"`
	Queries      Queries          `json:"queries"`
	Errors       int64            `json:"errors"`
	Retries      int64            `json:"retries"`
	Reconnects   int64            `json:"reconnects"`
	ErrorsByCode map[string]int64 `json:"errors_by_code,omitempty"`
	// Late counts events of a fixed-rate run that started after their
	// intended time; Dropped counts those that overflowed the bounded queue.
	Late    int64 `json:"late"`
	Dropped int64 `json:"dropped"`
	// Unfinished counts events still in flight when the run ended; their
	// latency so far is in the histogram, they are not in Events.
	Unfinished int64 `json:"unfinished"`
	// Connects counts the connections --connect per-event|every=N made
	// (not each worker's first); ConnectErrors the attempts refused.
	Connects      int64 `json:"connects,omitempty"`
	ConnectErrors int64 `json:"connect_errors,omitempty"`
}

// Queries counts statements by class.
type Queries struct {
	Read  int64 `json:"read"`
	Write int64 `json:"write"`
	Other int64 `json:"other"`
	Total int64 `json:"total"`
}

// Throughput is per second over the measured period.
type Throughput struct {
	TPS float64 `json:"tps"`
	QPS float64 `json:"qps"`
	// UpTPS is TPS over the up-time only (Run.UptimeS), set when the run
	// had outages.
	UpTPS float64 `json:"up_tps,omitempty"`
}

// Outage is a window of the measured period during which the target could
// not be reached, in seconds since the measured period began. Recovered is
// false when the run ended (failed) still unable to reach it.
type Outage struct {
	StartS    float64 `json:"start_s"`
	EndS      float64 `json:"end_s"`
	Recovered bool    `json:"recovered"`
}

// Latency percentiles in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Avg  float64 `json:"avg"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Interval is one report interval; TS is its end, in seconds since the
// measured period began.
type Interval struct {
	TS      float64 `json:"t_s"`
	Threads int     `json:"threads"`
	// Events counts the events that completed inside the interval; the
	// intervals add up to Totals.Events.
	Events     int64   `json:"events"`
	TPS        float64 `json:"tps"`
	QPS        float64 `json:"qps"`
	ReadQPS    float64 `json:"read_qps"`
	WriteQPS   float64 `json:"write_qps"`
	OtherQPS   float64 `json:"other_qps"`
	P95MS      float64 `json:"p95_ms"`
	Errors     int64   `json:"errors"`
	Reconnects int64   `json:"reconnects"`
	// Connects and ConnectErrors are as in Totals, for the interval.
	Connects      int64 `json:"connects,omitempty"`
	ConnectErrors int64 `json:"connect_errors,omitempty"`
	Late          int64 `json:"late,omitempty"`
	// PerType holds the interval's figures by transaction type, for
	// workloads that name their types (TPC-C).
	PerType map[string]IntervalType `json:"per_type,omitempty"`
	// Histogram is the interval's latency histogram (1% precision,
	// encoded as Run.Histogram), kept by a shard's run so that merged
	// intervals have exact percentiles; omitted from --json output.
	Histogram string `json:"histogram,omitempty"`
}

// IntervalType is one transaction type's figures in one interval: successes,
// those slower than the type's response-time limit, failures, retries, and
// the 90th percentile and maximum latency in milliseconds.
type IntervalType struct {
	Count   int64   `json:"count"`
	Late    int64   `json:"late"`
	Errors  int64   `json:"errors"`
	Retries int64   `json:"retries"`
	P90MS   float64 `json:"p90_ms"`
	MaxMS   float64 `json:"max_ms"`
	// Histogram is the type's latency histogram in the interval (1%
	// precision, encoded as Run.Histogram), kept by a shard's run so that
	// merged intervals have exact p90 and max; omitted from --json output.
	Histogram string `json:"histogram,omitempty"`
}

// Type is per-transaction-type statistics.
type Type struct {
	Count   int64 `json:"count"`
	Errors  int64 `json:"errors"`
	Retries int64 `json:"retries"`
	// Late counts successes slower than the type's response-time limit,
	// for workloads that set one (TPC-C).
	Late      int64   `json:"late,omitempty"`
	LatencyMS Latency `json:"latency_ms"`

	// The fields below are a replay's, whose types are statement
	// fingerprints (keyed by fingerprint id).

	// Text is the normalised statement; Examples up to 3 full statements.
	Text     string   `json:"text,omitempty"`
	Examples []string `json:"examples,omitempty"`
	// Rows are the rows the statements returned or changed.
	Rows int64 `json:"rows,omitempty"`
	// TotalMS is the time of every execution, failed ones included.
	TotalMS float64 `json:"total_ms,omitempty"`
	// CapturedMS sums the captured durations of the CapturedCount
	// executions whose log had one.
	CapturedMS    float64 `json:"captured_ms,omitempty"`
	CapturedCount int64   `json:"captured_count,omitempty"`
	// ErrorsByCode counts Errors by server error code.
	ErrorsByCode map[string]int64 `json:"errors_by_code,omitempty"`
	// ResultDigest, with --record-results, is an order-independent digest
	// of every execution's row count and checksum (hex).
	ResultDigest string `json:"result_digest,omitempty"`
	// Histogram is the type's latency histogram, for confidence intervals
	// in comparisons: "lo:count,count,..." buckets of the replay's
	// log-linear histogram (32 per power of two, in µs).
	Histogram string `json:"histogram,omitempty"`
}

// Replay is a replay run's own figures.
type Replay struct {
	// Capture names the file; Source and Flavor are from its header.
	Capture string `json:"capture"`
	Source  string `json:"source,omitempty"`
	Flavor  string `json:"flavor,omitempty"`
	// Sessions and Statements are those of the capture this run replayed
	// (its shard); Speed is the --speed factor, 0 for max.
	Sessions   int     `json:"sessions"`
	Statements int64   `json:"statements"`
	Speed      float64 `json:"speed"`
	// SpanS is the captured span; ExpectedS it divided by Speed.
	SpanS     float64 `json:"span_s"`
	ExpectedS float64 `json:"expected_s,omitempty"`
	// LagMS is how late statements started behind their schedule (paced
	// replays); KeptUp says whether replay kept up (p99 lag below
	// KeptUpLimitMS).
	LagMS         *Latency `json:"lag_ms,omitempty"`
	KeptUp        bool     `json:"kept_up"`
	KeptUpLimitMS float64  `json:"kept_up_limit_ms,omitempty"`
	// LagSeries is the lag per second of the measured period: p99 and
	// max in ms (approximate, by powers of two), index = second.
	LagSeries []LagPoint `json:"lag_series,omitempty"`
	// ConnectErrors counts sessions that could not connect (their
	// statements were skipped).
	ConnectErrors int64 `json:"connect_errors,omitempty"`
	// Sent counts the statements sent to the server (run or failed),
	// warm-up included.
	Sent int64 `json:"sent,omitempty"`
	// Skipped counts the statements of the capture that were not sent, by
	// reason: "account statement: KIND" (never replayed, docs/CLI.md),
	// "session could not connect", "not run: the server stopped
	// answering", "not run: the run ended first".
	Skipped map[string]int64 `json:"skipped,omitempty"`
	// LostConnections counts statements and connects that met a lost
	// connection or a server that did not answer.
	LostConnections int64 `json:"lost_connections,omitempty"`
	// Results, with --record-results, holds each statement's result digest
	// in capture order (base64 of little-endian uint64s, 0 = not run).
	Results string `json:"results,omitempty"`
	// Latencies, with --record-results, holds each statement's latency in
	// µs in capture order (base64 of little-endian uint32s, 0 = not run),
	// so that comparisons pair statements.
	Latencies string `json:"latencies,omitempty"`
	// Ordinals maps Results' statement ordinals to fingerprint ids, as
	// base64 little-endian uint32 indexes into FPs.
	Ordinals string   `json:"ordinals,omitempty"`
	FPs      []string `json:"fps,omitempty"`
}

// LagPoint is one second's lag behind schedule.
type LagPoint struct {
	TS    float64 `json:"t_s"`
	N     int64   `json:"n"`
	P99MS float64 `json:"p99_ms"`
	MaxMS float64 `json:"max_ms"`
}

// Check is one pass/fail rule, such as a TPC-C mix percentage.
type Check struct {
	Name  string  `json:"name"`
	OK    bool    `json:"ok"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
}

// Host describes the client machine.
type Host struct {
	Hostname string `json:"hostname"`
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	MemoryMB int64  `json:"memory_mb"`
	Kernel   string `json:"kernel"`
	OS       string `json:"os,omitempty"`

	// Storage is what holds the server's data directory, for a server on
	// this machine whose data directory is known.
	Storage *Storage `json:"storage,omitempty"`
}

// Storage describes the file system and block device under a directory.
type Storage struct {
	// Path is the directory (the server's data directory).
	Path string `json:"path"`
	// Mount, FSType and Source are its mount point, file system type and
	// mounted source (from /proc/self/mountinfo).
	Mount  string `json:"mount"`
	FSType string `json:"fstype"`
	Source string `json:"source,omitempty"`
	// Device is the whole block device holding it ("vda", "nvme0n1",
	// "dm-0"), "" when the file system has none (tmpfs, overlay).
	Device string `json:"device,omitempty"`
	// Scheduler is the device's I/O scheduler ("mq-deadline", "none").
	Scheduler string `json:"scheduler,omitempty"`
	// Rotational is true for a spinning disk (as the kernel believes).
	Rotational bool `json:"rotational,omitempty"`
}

// Dbarena identifies the tool that made the run.
type Dbarena struct {
	Version string   `json:"version"`
	Command []string `json:"command"`
}

// Monitor is what was sampled beside the run at each report interval: host
// figures, the server process, server counters and dbarena itself. Keys are
// dotted names, for example "host.cpu.user" (percent), "host.cpu.iowait",
// "host.load1", "host.mem.used_mb", "disk.vda.util" (percent),
// "disk.vda.write_mbps", "server.cpu" (percent of one core),
// "server.rss_mb", "client.cpu", "counter.Innodb_rows_read" (per second).
type Monitor struct {
	// Note says what could not be sampled (for example a remote target:
	// server counters only).
	Note string `json:"note,omitempty"`
	// Samples line up with Run.Intervals by TS.
	Samples []Sample `json:"samples,omitempty"`
	// Avg and Max summarise every key over the measured period.
	Avg map[string]float64 `json:"avg,omitempty"`
	Max map[string]float64 `json:"max,omitempty"`
	// PerTxn are costs per event: "server_cpu_us", "disk_read_kb",
	// "disk_write_kb", "fsyncs".
	PerTxn map[string]float64 `json:"per_txn,omitempty"`
}

// Sample is one interval's figures; TS is the interval's end in seconds
// since the measured period began, as in Interval.
type Sample struct {
	TS     float64            `json:"t_s"`
	Values map[string]float64 `json:"values"`
}

// PlanRef places a run in a plan: the plan's name, the cell's coordinates
// (axis name -> value, e.g. "server": "mariadb-10.11", "threads": "64") and
// the round number (1-based).
type PlanRef struct {
	Name   string            `json:"name"`
	Cell   string            `json:"cell"`
	Coords map[string]string `json:"coords,omitempty"`
	Round  int               `json:"round"`
}

// Bottleneck is what limited a run, stated as evidence (docs/CLI.md,
// "Bottleneck"). Verdict is one of "lock" (sessions waited for locks),
// "fsync" (sessions waited for I/O and WAL flushes, or the server fsynced
// about once per transaction), "client" (dbarena used the CPU the server
// needed), "server-cpu" (the server used most of the host's cores),
// "host-busy" (the host's CPU was saturated by other processes),
// "client-wait" (most backends waited for the client: network or client
// latency) or "none" (no single limit stood out).
type Bottleneck struct {
	Verdict string `json:"verdict"`
	// Reason is the one line of evidence for the verdict.
	Reason string `json:"reason"`
	// Evidence lists every figure read, one line each.
	Evidence []string `json:"evidence,omitempty"`
	// Figures are the numbers behind the evidence, by name (see docs).
	Figures map[string]float64 `json:"figures,omitempty"`
	// TopWaits are the run's largest wait events.
	TopWaits []WaitShare `json:"top_waits,omitempty"`
}

// WaitShare is one wait event's weight over the run: Value in Unit,
// "pct" (percent of sampled backend time) or "ms/s" (milliseconds of
// waiting per second, summed over sessions).
type WaitShare struct {
	Event string  `json:"event"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}
