// Package plan reads experiment plans: YAML files that name servers
// (catalogue names, system binaries or DSNs, each with a profile, settings
// and storage-engine variants), workloads with parameters, axes to sweep,
// rounds, warm-up, duration and the actions between rounds. A plan expands
// into cells (one point of the matrix) run once per round, in an order that
// interleaves servers within each round and prepares data once per server
// and data size.
//
// Every value keeps the line it came from, so that errors name the file
// and line. Relative file paths in a plan (data dumps, the script
// workload's file and create) are taken from the plan file's directory. The package knows nothing of workloads' flags: the caller
// checks parameters with the lines Param carries.
package plan

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/dbarena/dbarena/internal/measure/cpusched"
	"github.com/dbarena/dbarena/internal/results/gate"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Plan is a parsed plan file.
type Plan struct {
	// File is the path the plan was read from, for error messages.
	File string
	// Name identifies the plan's runs in the store (tag plan=NAME).
	Name        string
	Description string
	Servers     []Server
	Workloads   []Workload
	// Axes are swept in file order; each value gives one coordinate.
	Axes []Axis
	// Rounds is how often each cell runs (default 3).
	Rounds int
	// Warmup is a fixed warm-up, or the cap of an automatic one.
	Warmup time.Duration
	// AutoWarmup ends the warm-up at steady state (warmup: auto).
	AutoWarmup bool
	// Duration is the measured time of each run (default 60s).
	Duration time.Duration
	// ReportInterval is the interval series' period (default 1s).
	ReportInterval time.Duration
	// BetweenRounds are the actions before every round after the first.
	BetweenRounds []Action
	// Reload prepares the data again before every round (data: reload);
	// the default keeps it.
	Reload bool
	// Data is the dump every server loads instead of the workloads'
	// prepare (data: {dump: ...}); a server's own data takes precedence.
	Data *Data
	// Baseline names the coordinates of the baseline cells, e.g.
	// server: mariadb-10.11; default: the first server.
	Baseline []Param
	// NoisyCV flags a cell whose throughput CV across rounds exceeds it
	// (default 0.10).
	NoisyCV float64
	// Shards is how many local shard processes run each step (shards: N;
	// default 1, one process): a step of N > 1 is one run spread over N
	// processes of this machine, as `dbarena run --shards N --local`. A
	// workload's own shards overrides it.
	Shards int
	// AllowUnsafeSettings lets servers' settings and server axes hold
	// settings that run code, load libraries, open listeners or reach files
	// outside the sandbox (allow_unsafe_settings: true); Parse copies it
	// into every Server.
	AllowUnsafeSettings bool
	// ScaleFactor is the factor Scale applied (0: none, full size); runs
	// record it (tag plan.scale) so that reports never compare runs of two
	// scales.
	ScaleFactor float64
	// Line of each top-level key, for errors about the plan as a whole.
	Lines map[string]int
}

// Server is one server of the plan. Exactly one of Catalog, Server,
// Flavor and DSN is set.
type Server struct {
	// Name labels the server's cells (coordinate "server").
	Name string
	// Server is a catalogue name (dbarena server import / fetch-servers).
	Server string
	// Flavor picks the system-installed binary of that flavor.
	Flavor string
	// DSN is an existing server dbarena does not manage: no restart, no
	// settings.
	DSN string
	// Catalog expands into one server per catalogued and system server of
	// this flavor ("mariadb", "postgres", "mysql", "percona").
	Catalog    string
	Profile    string
	BufferPool string
	// Allocator is preloaded into the server: jemalloc, tcmalloc or "".
	Allocator string
	Settings  []Param
	// AllowUnsafeSettings is the plan's allow_unsafe_settings.
	AllowUnsafeSettings bool
	// Engines are storage-engine variants (MySQL family); each is its own
	// sandbox with coordinate "engine".
	Engines []Param
	// TLS starts the server with TLS on and connects its runs over TLS,
	// verifying the server (tls: true); a tls axis decides per cell.
	TLS bool
	// Port is the fixed TCP port of the server's sandbox (port: N), 0 for
	// any free one. Servers sharing a port run in turn: the lab stops one
	// before it starts the next.
	Port int
	// Data is the dump this server loads (data: {dump: ...}), overriding
	// the plan's.
	Data *Data
	// Line is the line of the server's server, flavor, dsn or catalog key
	// (of its mapping when it has none).
	Line int
	// nameLine is the line of its name (of its mapping when unnamed).
	nameLine int
}

// Workload is one workload with its fixed parameters.
type Workload struct {
	Name   string
	Params []Param
	// Shards overrides the plan's shards for this workload's steps (0:
	// the plan's).
	Shards int
	// Jobs is the run flag --jobs of its steps: the threads its workers
	// share (0: one each).
	Jobs int
	// Sched is the run flag --sched of its steps ("": the default).
	Sched string
	// Placement is the run flag --placement of its steps ("": the
	// default).
	Placement string
	// Line is the line of the workload's name.
	Line int
	// ShardsLine is the line of its shards, 0 when it has none.
	ShardsLine int
	// Thresholds are the pass/fail rules judged on each of its runs
	// (thresholds: [p95<5ms, ...]; package gate's syntax), each with its
	// line.
	Thresholds []Param
}

// Param is a key and value with the line it came from.
type Param struct {
	Key, Value string
	Line       int
}

// Axis is one swept dimension: threads, tls, a workload parameter, or a
// server setting (server.KEY).
type Axis struct {
	Name   string
	Values []Param // Key empty; Value is the value
	Line   int
}

// Action is something done between rounds.
type Action struct {
	Name string // restart, drop-caches
	Line int
}

// Axis kinds.
const (
	AxisThreads = "threads"
	// AxisTLS is tls: [off, on]: a cell connects over TLS (on) or in plain
	// text (off) to the same sandbox, started with TLS so that it takes both.
	AxisTLS = "tls"
	// AxisConnect is connect: [persistent, per-event, every=N]: how often
	// a cell's workers open a new connection (run --connect).
	AxisConnect = "connect"
	// ServerAxisPrefix marks server-setting axes: server.sync_binlog.
	ServerAxisPrefix = "server."
)

// IsDataParam reports whether a workload parameter changes the prepared
// data (tables, table-size, mysql-storage-engine, warehouses, scale): cells
// differing in one need their own prepare.
func IsDataParam(key string) bool {
	switch normParam(key) {
	case "tables", "table-size", "mysql-storage-engine", "warehouses", "scale", "scale-factor":
		return true
	}
	return false
}

// isSizeParam reports whether a parameter is a data size that Scale shrinks.
func isSizeParam(key string) bool {
	switch normParam(key) {
	case "table-size", "warehouses", "scale", "scale-factor":
		return true
	}
	return false
}

func normParam(k string) string { return strings.ReplaceAll(strings.ToLower(k), "_", "-") }

// Error is a problem at a line (and column, when known) of a plan file.
type Error struct {
	File string
	// Line is 1-based; 0 when the problem is the file as a whole.
	Line int
	// Col is the 1-based column in characters; 0 when not known.
	Col int
	Msg string
}

// Error implements error as FILE:LINE:COL: MSG, FILE:LINE: MSG or FILE: MSG.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Errorf returns an *Error at line of the plan's file.
func (p *Plan) Errorf(line int, format string, args ...any) error {
	return &Error{File: p.File, Line: line, Msg: fmt.Sprintf(format, args...)}
}

var (
	nameRE  = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)
	labelRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,24}$`)
)

// Limits on a plan, so that odd input is refused rather than run out of
// memory or time: the file's size, the runs it expands to and the work of
// expanding them.
const (
	MaxSize = 64 << 10
	MaxRuns = 10_000
	// MaxWork bounds runs x (parameters + settings + axes) x axes.
	MaxWork = 2_000_000
	// MaxShards bounds shards: N, as shard.MaxShards bounds --shards
	// (the package stays free of the run machinery; a test ties them).
	MaxShards = 1024
	// MaxJobs bounds a workload's jobs: N.
	MaxJobs = 4096
)

// Parse reads a plan. It returns every problem found, each naming file and
// line; a nil slice means the plan is well formed (its workload parameters
// still need the caller's check). It never panics, whatever data holds.
func Parse(file string, data []byte) (*Plan, []error) {
	p := &Plan{File: file, Rounds: 3, Duration: 60 * time.Second, ReportInterval: time.Second,
		NoisyCV: 0.10, Shards: 1, Lines: map[string]int{}}
	whole := func(format string, args ...any) (*Plan, []error) {
		return nil, []error{&Error{File: file, Msg: fmt.Sprintf(format, args...)}}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	if len(data) > MaxSize {
		return whole("%d bytes: a plan is at most %d KiB", len(data), MaxSize>>10)
	}
	if err := checkText(file, data); err != nil {
		return nil, []error{err}
	}
	doc, next, err := decode(data)
	if err != nil {
		return nil, []error{syntaxError(file, data, err)}
	}
	if doc == nil || len(doc.Content) == 0 {
		return whole("empty plan")
	}
	if next != nil {
		return nil, []error{p.Errorf(max(next.Line, 1), "a plan is one YAML document: a second one starts here")}
	}
	if at, err := resolveAliases(doc); err != nil {
		return nil, []error{p.Errorf(at.Line, "%v", err)}
	}
	root := doc.Content[0]
	var errs []error
	bad := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, p.Errorf(n.Line, format, args...))
	}
	if root.Kind != yaml.MappingNode {
		bad(root, "a plan is a mapping of keys (name, servers, workloads, ...)")
		return nil, errs
	}
	warmup := ""
	var warmupNode *yaml.Node
	var warmupMax *yaml.Node
	keys, vals := pairs(root, bad)
	for i, k := range keys {
		v := vals[i]
		p.Lines[k.Value] = k.Line
		switch k.Value {
		case "name":
			p.Name = scalar(k, v, bad)
			if p.Name != "" && !nameRE.MatchString(p.Name) {
				bad(v, "name %q: want 1-64 of [a-zA-Z0-9_.-]", p.Name)
			}
		case "description":
			p.Description = scalar(k, v, bad)
		case "servers":
			p.Servers = parseServers(k, v, bad)
		case "workloads":
			p.Workloads = parseWorkloads(k, v, bad)
		case "axes":
			p.Axes = parseAxes(k, v, bad)
		case "rounds":
			p.Rounds = intValue(k, v, 1, 1000, bad)
		case "shards":
			p.Shards = intValue(k, v, 1, MaxShards, bad)
		case "warmup":
			warmup, warmupNode = scalar(k, v, bad), v
		case "warmup_max":
			warmupMax = v
		case "duration":
			p.Duration = durationValue(k, v, false, bad)
		case "report_interval":
			p.ReportInterval = durationValue(k, v, false, bad)
		case "between_rounds":
			for _, n := range sequence(k, v, bad) {
				a := Action{Name: scalar(nil, n, bad), Line: n.Line}
				switch a.Name {
				case "restart", "drop-caches":
					p.BetweenRounds = append(p.BetweenRounds, a)
				case "reload":
					p.Reload = true
				default:
					bad(n, "action %q: want restart, drop-caches or reload", a.Name)
				}
			}
		case "data":
			if v.Kind == yaml.MappingNode {
				p.Data = parseData(k, v, bad)
				continue
			}
			switch s := scalar(k, v, bad); s {
			case "keep":
			case "reload":
				p.Reload = true
			default:
				bad(v, "data %q: want keep, reload or a mapping (dump, engine, threads, reload)", s)
			}
		case "baseline":
			p.Baseline = mapping(k, v, bad)
		case "allow_unsafe_settings":
			switch b := scalar(k, v, bad); strings.ToLower(b) {
			case "true":
				p.AllowUnsafeSettings = true
			case "false":
			default:
				bad(v, "allow_unsafe_settings %q: want true or false", b)
			}
		case "noisy_cv":
			s := scalar(k, v, bad)
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || !(f > 0 && f < 10) {
				bad(v, "noisy_cv %q: want a number above 0 and below 10, such as 0.05 (5%%)", s)
			}
			p.NoisyCV = f
		default:
			bad(k, "unknown key %q (want name, description, servers, workloads, axes, rounds, shards, warmup, warmup_max, duration, report_interval, between_rounds, data, baseline, noisy_cv, allow_unsafe_settings)", k.Value)
		}
	}
	switch {
	case warmup == "auto":
		p.AutoWarmup = true
		p.Warmup = 60 * time.Second
		if warmupMax != nil {
			p.Warmup = durationValue(keyOf(root, warmupMax), warmupMax, false, bad)
		}
	case warmupNode != nil:
		p.Warmup = durationValue(keyOf(root, warmupNode), warmupNode, true, bad)
		if warmupMax != nil {
			bad(warmupMax, "warmup_max applies only to warmup: auto")
		}
	case warmupMax != nil:
		bad(warmupMax, "warmup_max applies only to warmup: auto")
	}
	for i := range p.Servers {
		p.Servers[i].AllowUnsafeSettings = p.AllowUnsafeSettings
	}
	p.resolvePaths()
	errs = append(errs, p.check()...)
	if err := p.checkSize(); err != nil {
		return nil, append(errs, err) // too big to expand or to check further
	}
	return p, errs
}

// check reports problems across keys.
func (p *Plan) check() []error {
	var errs []error
	bad := func(line int, format string, args ...any) { errs = append(errs, p.Errorf(line, format, args...)) }
	if p.Name == "" && p.Lines["name"] == 0 {
		bad(1, "missing name")
	}
	if len(p.Servers) == 0 && p.Lines["servers"] == 0 {
		bad(1, "missing servers")
	}
	if len(p.Workloads) == 0 && p.Lines["workloads"] == 0 {
		bad(1, "missing workloads")
	}
	seen := map[string]int{}
	for _, s := range p.Servers {
		if s.Catalog != "" {
			continue
		}
		if l, dup := seen[s.Name]; dup && s.Name != "" {
			bad(s.nameLine, "server name %q already used at line %d", s.Name, l)
		}
		seen[s.Name] = s.nameLine
	}
	axes := map[string]int{}
	for _, a := range p.Axes {
		if l, dup := axes[a.Name]; dup {
			bad(a.Line, "axis %q already given at line %d", a.Name, l)
		}
		axes[a.Name] = a.Line
		if a.Name == "server" || a.Name == "engine" || a.Name == "workload" {
			bad(a.Line, "axis %q: list %ss under %ss instead", a.Name, a.Name, a.Name)
		}
		if a.Name == AxisThreads {
			for _, v := range a.Values {
				if n, err := strconv.Atoi(v.Value); err != nil || n < 1 || n > 100000 {
					bad(v.Line, "threads %q: want a whole number from 1 to 100000", v.Value)
				}
			}
		}
		if a.Name == AxisConnect {
			for _, v := range a.Values {
				if !validConnect(v.Value) {
					bad(v.Line, "connect %q: want persistent, per-event or every=N (N >= 1)", v.Value)
				}
			}
		}
		if a.Name == AxisTLS {
			for _, v := range a.Values {
				if v.Value != "on" && v.Value != "off" {
					bad(v.Line, "tls %q: want on or off", v.Value)
				}
			}
			for _, s := range p.Servers {
				if s.DSN != "" {
					bad(s.Line, "server %q: a dsn server cannot take the tls axis (line %d): dbarena does not start it; give its TLS in the dsn (tls=, sslmode=) or list it in another plan", s.Name, a.Line)
				}
			}
		}
	}
	errs = append(errs, p.checkPorts()...)
	for _, s := range p.Servers {
		if d := p.DataFor(s); d != nil && len(d.Engines) > 0 && len(s.Engines) > 0 {
			bad(s.Line, "server %q: engines given twice, in engines and in data's engine (line %d): keep one", s.Name, d.Line)
		}
	}
	if p.AutoWarmup && p.Warmup <= 0 {
		bad(p.Lines["warmup"], "warmup: auto needs warmup_max > 0")
	}
	if p.AutoWarmup && p.ReportInterval <= 0 {
		bad(p.Lines["report_interval"], "warmup: auto needs a report_interval > 0")
	}
	for _, w := range p.Workloads {
		if n, line := p.ShardsOf(w); n > 1 && p.AutoWarmup {
			// Each shard would end its warm-up at its own steady state:
			// their measured periods would not line up.
			bad(line, "shards %d: a sharded step needs a fixed warmup (warmup: auto ends each shard's at its own time)", n)
		}
	}
	catalog := p.hasCatalog()
	for _, b := range p.Baseline {
		switch {
		case b.Key == "server":
			if _, ok := seen[b.Value]; !ok && !catalog {
				bad(b.Line, "baseline server %q is not one of the plan's servers", b.Value)
			}
		case b.Key == "engine", b.Key == "workload":
		default:
			if _, ok := axes[b.Key]; !ok {
				bad(b.Line, "baseline %q is not an axis of the plan", b.Key)
			}
		}
	}
	return errs
}

// ShardsOf returns how many shards run w's steps (its shards, else the
// plan's) and the line that says so (0 when neither does).
func (p *Plan) ShardsOf(w Workload) (n, line int) {
	if w.Shards > 0 {
		return w.Shards, w.ShardsLine
	}
	return max(p.Shards, 1), p.Lines["shards"]
}

// checkSize refuses a plan whose schedule would be too long (MaxRuns) or
// hold too much (MaxWork), so that expanding it stays cheap.
func (p *Plan) checkSize() error {
	line := p.Lines["axes"]
	if line == 0 {
		line = p.Lines["rounds"]
	}
	runs, work := p.size()
	switch {
	case runs > MaxRuns:
		return p.Errorf(line, "the plan expands to %s runs (workloads x servers x axis values x rounds); at most %d", runs, MaxRuns)
	case work > MaxWork:
		return p.Errorf(line, "the plan's %s runs hold too many parameters, settings and axes to expand (runs x values x axes over %d)", runs, MaxWork)
	}
	return nil
}

// size returns the length of the schedule and the work of building it (each
// run's parameters, settings and coordinates, times its axes), computed
// without building it and without overflow.
func (p *Plan) size() (runs, work runCount) {
	perVariant := runCount(max(p.Rounds, 1))
	for _, a := range p.Axes {
		perVariant = perVariant.times(len(a.Values))
	}
	variants := 0
	for _, s := range p.Servers {
		variants += max(len(p.engines(s)), 1)
	}
	runs = perVariant.times(len(p.Workloads)).times(variants)
	for _, w := range p.Workloads {
		for _, s := range p.Servers {
			values := len(w.Params) + len(s.Settings) + len(p.Axes) + 3
			work = work.plus(perVariant.times(max(len(p.engines(s)), 1)).times(values).times(len(p.Axes) + 1))
			if work > MaxWork { // each step adds at least 3: few steps
				return runs, work
			}
		}
	}
	return runs, work
}

// runCount is a count that saturates at runCap.
type runCount int64

const runCap = 1_000_000_000_000

func (n runCount) times(k int) runCount {
	if k > 0 && int64(n) > runCap/int64(k) {
		return runCap
	}
	return n * runCount(k)
}

func (n runCount) plus(k runCount) runCount { return min(n+k, runCap) }

func (n runCount) String() string {
	if n >= runCap {
		return fmt.Sprintf("more than %d", int64(runCap))
	}
	return strconv.FormatInt(int64(n), 10)
}

func (p *Plan) hasCatalog() bool {
	for _, s := range p.Servers {
		if s.Catalog != "" {
			return true
		}
	}
	return false
}

// badFunc reports a problem at a node's line.
type badFunc = func(n *yaml.Node, format string, args ...any)

func parseServers(key, v *yaml.Node, bad badFunc) []Server {
	var out []Server
	for _, n := range sequence(key, v, bad) {
		if n.Kind != yaml.MappingNode {
			bad(n, "a server is a mapping (name, server|flavor|dsn|catalog, profile, settings, engines, tls, port, data), not %s", kindName(n))
			continue
		}
		s := Server{Line: n.Line, nameLine: n.Line}
		sources, askName := 0, true
		keys, vals := pairs(n, bad)
		for i, k := range keys {
			val := vals[i]
			switch k.Value {
			case "name":
				s.Name, s.nameLine = scalar(k, val, bad), k.Line
				if !labelRE.MatchString(s.Name) {
					bad(val, "server name %q: want 1-24 of [a-zA-Z0-9_.-]", s.Name)
				}
			case "server", "flavor", "dsn", "catalog":
				if sources == 0 {
					s.Line = k.Line
				}
				sources++
				v := scalar(k, val, bad)
				if val.Kind != yaml.ScalarNode {
					askName = false // said already: not also "needs a name"
					continue
				}
				switch k.Value {
				case "server":
					s.Server = v
				case "flavor":
					s.Flavor = v
					if !validFlavor(v) {
						bad(val, "flavor %q: want mariadb, mysql, percona or postgres", v)
					}
				case "dsn":
					s.DSN = v
				case "catalog":
					s.Catalog = v
					if !validFlavor(v) {
						bad(val, "catalog %q: want mariadb, mysql, percona or postgres", v)
					}
				}
			case "profile":
				s.Profile = scalar(k, val, bad)
				switch s.Profile {
				case "default", "durable", "fast":
				default:
					bad(val, "profile %q: want default, durable or fast", s.Profile)
				}
			case "buffer_pool":
				s.BufferPool = scalar(k, val, bad)
			case "allocator":
				s.Allocator = scalar(k, val, bad)
				switch s.Allocator {
				case "", "system", "jemalloc", "tcmalloc":
				default:
					bad(val, "allocator %q: want system, jemalloc or tcmalloc", s.Allocator)
				}
				if s.Allocator == "system" {
					s.Allocator = ""
				}
			case "settings":
				s.Settings = mapping(k, val, bad)
			case "engines":
				for _, e := range sequence(k, val, bad) {
					s.Engines = append(s.Engines, Param{Value: scalar(nil, e, bad), Line: e.Line})
				}
			case "tls":
				switch b := scalar(k, val, bad); strings.ToLower(b) {
				case "true":
					s.TLS = true
				case "false":
				default:
					bad(val, "tls %q: want true or false", b)
				}
			case "port":
				s.Port = validPort(k, val, bad)
			case "data":
				if val.Kind != yaml.MappingNode {
					bad(k, "data: want a mapping (dump, engine, threads, reload), not %s", kindName(val))
					continue
				}
				s.Data = parseData(k, val, bad)
			default:
				bad(k, "unknown server key %q (want name, server, flavor, dsn, catalog, profile, buffer_pool, allocator, settings, engines, tls, port, data)", k.Value)
			}
		}
		if sources != 1 {
			bad(n, "a server needs exactly one of server (catalogue name), flavor, dsn or catalog")
		}
		if s.Name == "" && s.Catalog == "" && askName {
			switch {
			case s.Server != "" && labelRE.MatchString(s.Server):
				s.Name = s.Server
			case s.Flavor != "":
				s.Name = s.Flavor
			default:
				bad(n, "a server needs a name")
			}
		}
		if s.DSN != "" && (len(s.Settings) > 0 || s.Profile != "" || s.Allocator != "" || s.BufferPool != "" || s.TLS) {
			bad(n, "server %q: a dsn server is not managed by dbarena: no profile, settings, buffer_pool, allocator or tls (give TLS in the dsn: tls=, sslmode=)", s.Name)
		}
		if s.DSN != "" && s.Port != 0 {
			bad(n, "server %q: a dsn server is not managed by dbarena: no port (its port is in the dsn)", s.Name)
		}
		out = append(out, s)
	}
	return out
}

func validFlavor(f string) bool {
	_, ok := target.FamilyOf(f)
	return ok
}

func parseWorkloads(key, v *yaml.Node, bad badFunc) []Workload {
	var out []Workload
	for _, n := range sequence(key, v, bad) {
		switch n.Kind {
		case yaml.ScalarNode:
			out = append(out, Workload{Name: n.Value, Line: n.Line})
		case yaml.MappingNode:
			w := Workload{Line: n.Line}
			keys, vals := pairs(n, bad)
			for i, k := range keys {
				switch k.Value {
				case "name":
					w.Name, w.Line = scalar(k, vals[i], bad), k.Line
				case "params":
					w.Params = mapping(k, vals[i], bad)
				case "shards":
					w.Shards, w.ShardsLine = intValue(k, vals[i], 1, MaxShards, bad), k.Line
				case "jobs":
					w.Jobs = intValue(k, vals[i], 0, MaxJobs, bad)
				case "sched":
					if w.Sched = scalar(k, vals[i], bad); !cpusched.Valid(w.Sched) {
						bad(vals[i], "sched: want auto, batch or normal, not %q", w.Sched)
					}
				case "placement":
					if w.Placement = scalar(k, vals[i], bad); w.Placement != "follow" && w.Placement != "kernel" {
						bad(vals[i], "placement: want follow or kernel, not %q", w.Placement)
					}
				case "thresholds":
					w.Thresholds = parseThresholds(k, vals[i], bad)
				default:
					bad(k, "unknown workload key %q (want name, params, shards, jobs, sched, placement, thresholds)", k.Value)
				}
			}
			if w.Name == "" {
				bad(n, "a workload needs a name")
			}
			out = append(out, w)
		default:
			bad(n, "a workload is a name or a mapping (name, params, shards, jobs), not %s", kindName(n))
		}
	}
	return out
}

// parseThresholds reads a workload's thresholds: a list of expressions
// (or one), each checked by gate.Parse.
func parseThresholds(key, v *yaml.Node, bad badFunc) []Param {
	var out []Param
	for _, n := range sequence(key, v, bad) {
		s := scalar(nil, n, bad)
		if n.Kind != yaml.ScalarNode {
			continue
		}
		if _, err := gate.Parse(s); err != nil {
			bad(n, "thresholds: %v", err)
			continue
		}
		out = append(out, Param{Key: "threshold", Value: s, Line: n.Line})
	}
	return out
}

func parseAxes(key, v *yaml.Node, bad badFunc) []Axis {
	if v.Kind != yaml.MappingNode {
		bad(key, "axes: want AXIS: [values] pairs, not %s", kindName(v))
		return nil
	}
	var out []Axis
	keys, vals := pairs(v, bad)
	for i, k := range keys {
		a := Axis{Name: k.Value, Line: k.Line}
		for _, n := range sequence(k, vals[i], bad) {
			a.Values = append(a.Values, Param{Value: scalar(nil, n, bad), Line: n.Line})
		}
		if len(a.Values) == 0 {
			bad(k, "axis %q has no values", a.Name)
		}
		if strings.HasPrefix(a.Name, ServerAxisPrefix) && len(a.Name) == len(ServerAxisPrefix) {
			bad(k, "axis %q: name the server setting, e.g. server.sync_binlog", a.Name)
		}
		out = append(out, a)
	}
	return out
}

// pairs returns a mapping's keys and values in file order, reporting a key
// that is not a single value or that is given twice (the first is kept).
func pairs(n *yaml.Node, bad badFunc) (keys, vals []*yaml.Node) {
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			bad(k, "a key is a single value, not %s", kindName(k))
			continue
		}
		if l, dup := first[k.Value]; dup {
			bad(k, "%q given twice (first at line %d)", k.Value, l)
			continue
		}
		first[k.Value] = k.Line
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals
}

// keyOf returns the key of v in the mapping m, or v itself.
func keyOf(m, v *yaml.Node) *yaml.Node {
	for i := 1; i < len(m.Content); i += 2 {
		if m.Content[i] == v {
			return m.Content[i-1]
		}
	}
	return v
}

// kindName names a node's kind for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a single value"
}

// scalar returns the value of key (nil for a list item), reporting at the
// key's line a list or mapping given instead.
func scalar(key, n *yaml.Node, bad badFunc) string {
	if n.Kind != yaml.ScalarNode {
		if key != nil {
			bad(key, "%s: want a single value, not %s", key.Value, kindName(n))
		} else {
			bad(n, "want a single value here, not %s", kindName(n))
		}
		return ""
	}
	return n.Value
}

func sequence(key, n *yaml.Node, bad badFunc) []*yaml.Node {
	switch n.Kind {
	case yaml.SequenceNode:
		return n.Content
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
		return []*yaml.Node{n} // a single value is a list of one
	}
	bad(key, "%s: want a list, not %s", key.Value, kindName(n))
	return nil
}

// mapping reads KEY: VALUE pairs in file order.
func mapping(key, n *yaml.Node, bad badFunc) []Param {
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		bad(key, "%s: want KEY: VALUE pairs, not %s", key.Value, kindName(n))
		return nil
	}
	var out []Param
	keys, vals := pairs(n, bad)
	for i, k := range keys {
		out = append(out, Param{Key: k.Value, Value: scalar(k, vals[i], bad), Line: k.Line})
	}
	return out
}

func intValue(key, n *yaml.Node, lo, hi int, bad badFunc) int {
	s := scalar(key, n, bad)
	i, err := strconv.Atoi(s)
	if n.Kind == yaml.ScalarNode && (err != nil || i < lo || i > hi) {
		bad(n, "%s %q: want a whole number from %d to %d", key.Value, s, lo, hi)
	}
	return i
}

// durationValue parses seconds ("30") or a Go duration ("30s", "5m").
func durationValue(key, n *yaml.Node, zeroOK bool, bad badFunc) time.Duration {
	s := scalar(key, n, bad)
	d, err := ParseDuration(s)
	if n.Kind == yaml.ScalarNode && (err != nil || (d == 0 && !zeroOK)) {
		bad(n, "%s %q: want a positive duration such as 30s, 5m or plain seconds", key.Value, s)
	}
	return d
}

// ParseDuration parses plain seconds ("30", "0.5") or a Go duration ("30s").
func ParseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if !(f >= 0 && f*float64(time.Second) < math.MaxInt64) { // also NaN
			return 0, fmt.Errorf("duration %q out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, err
}
