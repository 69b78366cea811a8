// Package summary defines the run summary, schema "dbarena.run/v1": the
// JSON written by --json, stored in the results store and read by reports.
// Field names and units are a public contract (docs/CLI.md); add fields,
// never rename them.
package summary

import "time"

// Schema is the value of Run.Schema.
const Schema = "dbarena.run/v1"

// Run status values.
const (
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
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
	Params     map[string]any    `json:"params"`
	Threads    int               `json:"threads"`
	Rate       float64           `json:"rate,omitempty"`
	DurationS  float64           `json:"duration_s"`
	WarmupS    float64           `json:"warmup_s"`
	Totals     Totals            `json:"totals"`
	Throughput Throughput        `json:"throughput"`
	LatencyMS  Latency           `json:"latency_ms"`
	Intervals  []Interval        `json:"intervals"`
	PerType    map[string]Type   `json:"per_type,omitempty"`
	Checks     []Check           `json:"checks,omitempty"`
	TpmC       *float64          `json:"tpmc,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
	// ServerCounters are deltas of the server's own counters over the
	// measured period, for cross-checking Totals.
	ServerCounters map[string]int64 `json:"server_counters,omitempty"`
	// Settings are the server settings that matter for the result.
	Settings map[string]string `json:"settings,omitempty"`
	Host     Host              `json:"host"`
	Dbarena  Dbarena           `json:"dbarena"`
	// Histogram is the merged latency histogram, HDR-encoded (base64), in
	// microseconds. It is kept in the store and omitted from --json output.
	Histogram string `json:"histogram,omitempty"`
}

// Target is the server a run talked to; the DSN is masked.
type Target struct {
	Flavor  string `json:"flavor"`
	Version string `json:"version"`
	DSN     string `json:"dsn"`
	Sandbox string `json:"sandbox,omitempty"`
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
	TS         float64 `json:"t_s"`
	Threads    int     `json:"threads"`
	TPS        float64 `json:"tps"`
	QPS        float64 `json:"qps"`
	ReadQPS    float64 `json:"read_qps"`
	WriteQPS   float64 `json:"write_qps"`
	OtherQPS   float64 `json:"other_qps"`
	P95MS      float64 `json:"p95_ms"`
	Errors     int64   `json:"errors"`
	Reconnects int64   `json:"reconnects"`
	Late       int64   `json:"late,omitempty"`
}

// Type is per-transaction-type statistics.
type Type struct {
	Count     int64   `json:"count"`
	Errors    int64   `json:"errors"`
	Retries   int64   `json:"retries"`
	LatencyMS Latency `json:"latency_ms"`
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
}

// Dbarena identifies the tool that made the run.
type Dbarena struct {
	Version string   `json:"version"`
	Command []string `json:"command"`
}
