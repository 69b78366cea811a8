// Package plan reads experiment plans: YAML files that name servers
// (catalogue names, system binaries or DSNs, each with a profile, settings
// and storage-engine variants), workloads with parameters, axes to sweep,
// rounds, warm-up, duration and the actions between rounds. A plan expands
// into cells (one point of the matrix) run once per round, in an order that
// interleaves servers within each round and prepares data once per server
// and data size.
//
// Every value keeps the line it came from, so that errors name the file
// and line. The package knows nothing of workloads' flags: the caller
// checks parameters with the lines Param carries.
package plan

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
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
	// Baseline names the coordinates of the baseline cells, e.g.
	// server: mariadb-10.11; default: the first server.
	Baseline []Param
	// NoisyCV flags a cell whose throughput CV across rounds exceeds it
	// (default 0.10).
	NoisyCV float64
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
	// Engines are storage-engine variants (MySQL family); each is its own
	// sandbox with coordinate "engine".
	Engines []Param
	Line    int
}

// Workload is one workload with its fixed parameters.
type Workload struct {
	Name   string
	Params []Param
	Line   int
}

// Param is a key and value with the line it came from.
type Param struct {
	Key, Value string
	Line       int
}

// Axis is one swept dimension: threads, a workload parameter, or a server
// setting (server.KEY).
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

// Error is a problem at a line of a plan file.
type Error struct {
	File string
	Line int
	Msg  string
}

// Error implements error as FILE:LINE: MSG.
func (e *Error) Error() string {
	if e.Line > 0 {
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

// Parse reads a plan. It returns every problem found, each naming file and
// line; a nil slice means the plan is well formed (its workload parameters
// still need the caller's check).
func Parse(file string, data []byte) (*Plan, []error) {
	p := &Plan{File: file, Rounds: 3, Duration: 60 * time.Second, ReportInterval: time.Second,
		NoisyCV: 0.10, Lines: map[string]int{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, []error{yamlError(file, err)}
	}
	if len(doc.Content) == 0 {
		return nil, []error{&Error{File: file, Msg: "empty plan"}}
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
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if _, dup := p.Lines[k.Value]; dup {
			bad(k, "%q given twice", k.Value)
			continue
		}
		p.Lines[k.Value] = k.Line
		switch k.Value {
		case "name":
			p.Name = scalar(v, bad)
			if p.Name != "" && !nameRE.MatchString(p.Name) {
				bad(v, "name %q: want 1-64 of [a-zA-Z0-9_.-]", p.Name)
			}
		case "description":
			p.Description = scalar(v, bad)
		case "servers":
			p.Servers = parseServers(v, bad)
		case "workloads":
			p.Workloads = parseWorkloads(v, bad)
		case "axes":
			p.Axes = parseAxes(v, bad)
		case "rounds":
			p.Rounds = intValue(v, 1, 1000, bad)
		case "warmup":
			warmup, warmupNode = scalar(v, bad), v
		case "warmup_max":
			warmupMax = v
		case "duration":
			p.Duration = durationValue(v, false, bad)
		case "report_interval":
			p.ReportInterval = durationValue(v, false, bad)
		case "between_rounds":
			for _, n := range sequence(v, bad) {
				a := Action{Name: scalar(n, bad), Line: n.Line}
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
			switch s := scalar(v, bad); s {
			case "keep":
			case "reload":
				p.Reload = true
			default:
				bad(v, "data %q: want keep or reload", s)
			}
		case "baseline":
			p.Baseline = mapping(v, bad)
		case "noisy_cv":
			f, err := strconv.ParseFloat(scalar(v, bad), 64)
			if err != nil || f <= 0 || f >= 10 {
				bad(v, "noisy_cv %q: want a number such as 0.05 (5%%)", v.Value)
			}
			p.NoisyCV = f
		default:
			bad(k, "unknown key %q (want name, description, servers, workloads, axes, rounds, warmup, warmup_max, duration, report_interval, between_rounds, data, baseline, noisy_cv)", k.Value)
		}
	}
	switch {
	case warmup == "auto":
		p.AutoWarmup = true
		p.Warmup = 60 * time.Second
		if warmupMax != nil {
			p.Warmup = durationValue(warmupMax, false, bad)
		}
	case warmupNode != nil:
		p.Warmup = durationValue(warmupNode, true, bad)
		if warmupMax != nil {
			bad(warmupMax, "warmup_max applies only to warmup: auto")
		}
	case warmupMax != nil:
		bad(warmupMax, "warmup_max applies only to warmup: auto")
	}
	errs = append(errs, p.check()...)
	return p, errs
}

// check reports problems across keys.
func (p *Plan) check() []error {
	var errs []error
	bad := func(line int, format string, args ...any) { errs = append(errs, p.Errorf(line, format, args...)) }
	if p.Name == "" {
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
			bad(s.Line, "server name %q already used at line %d", s.Name, l)
		}
		seen[s.Name] = s.Line
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
	}
	if p.AutoWarmup && p.Warmup <= 0 {
		bad(p.Lines["warmup"], "warmup: auto needs warmup_max > 0")
	}
	if p.AutoWarmup && p.ReportInterval <= 0 {
		bad(p.Lines["report_interval"], "warmup: auto needs a report_interval > 0")
	}
	for _, b := range p.Baseline {
		switch {
		case b.Key == "server":
			if _, ok := seen[b.Value]; !ok && !p.hasCatalog() {
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

func (p *Plan) hasCatalog() bool {
	for _, s := range p.Servers {
		if s.Catalog != "" {
			return true
		}
	}
	return false
}

func parseServers(v *yaml.Node, bad func(*yaml.Node, string, ...any)) []Server {
	var out []Server
	for _, n := range sequence(v, bad) {
		if n.Kind != yaml.MappingNode {
			bad(n, "a server is a mapping (name, server|flavor|dsn|catalog, profile, settings, engines)")
			continue
		}
		s := Server{Line: n.Line}
		sources := 0
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "name":
				s.Name = scalar(val, bad)
				if !labelRE.MatchString(s.Name) {
					bad(val, "server name %q: want 1-24 of [a-zA-Z0-9_.-]", s.Name)
				}
			case "server":
				s.Server, sources = scalar(val, bad), sources+1
			case "flavor":
				s.Flavor, sources = scalar(val, bad), sources+1
				if !validFlavor(s.Flavor) {
					bad(val, "flavor %q: want mariadb, mysql, percona or postgres", s.Flavor)
				}
			case "dsn":
				s.DSN, sources = scalar(val, bad), sources+1
			case "catalog":
				s.Catalog, sources = scalar(val, bad), sources+1
				if !validFlavor(s.Catalog) {
					bad(val, "catalog %q: want mariadb, mysql, percona or postgres", s.Catalog)
				}
			case "profile":
				s.Profile = scalar(val, bad)
				switch s.Profile {
				case "default", "durable", "fast":
				default:
					bad(val, "profile %q: want default, durable or fast", s.Profile)
				}
			case "buffer_pool":
				s.BufferPool = scalar(val, bad)
			case "allocator":
				s.Allocator = scalar(val, bad)
				switch s.Allocator {
				case "", "system", "jemalloc", "tcmalloc":
				default:
					bad(val, "allocator %q: want system, jemalloc or tcmalloc", s.Allocator)
				}
				if s.Allocator == "system" {
					s.Allocator = ""
				}
			case "settings":
				s.Settings = mapping(val, bad)
			case "engines":
				for _, e := range sequence(val, bad) {
					s.Engines = append(s.Engines, Param{Value: scalar(e, bad), Line: e.Line})
				}
			default:
				bad(k, "unknown server key %q (want name, server, flavor, dsn, catalog, profile, buffer_pool, allocator, settings, engines)", k.Value)
			}
		}
		if sources != 1 {
			bad(n, "a server needs exactly one of server (catalogue name), flavor, dsn or catalog")
		}
		if s.Name == "" && s.Catalog == "" {
			switch {
			case s.Server != "" && labelRE.MatchString(s.Server):
				s.Name = s.Server
			case s.Flavor != "":
				s.Name = s.Flavor
			default:
				bad(n, "a server needs a name")
			}
		}
		if s.DSN != "" && (len(s.Settings) > 0 || s.Profile != "" || s.Allocator != "" || s.BufferPool != "") {
			bad(n, "server %q: a dsn server is not managed by dbarena: no profile, settings, buffer_pool or allocator", s.Name)
		}
		out = append(out, s)
	}
	return out
}

func validFlavor(f string) bool {
	switch strings.ToLower(f) {
	case "mariadb", "mysql", "percona", "postgres", "postgresql":
		return true
	}
	return false
}

func parseWorkloads(v *yaml.Node, bad func(*yaml.Node, string, ...any)) []Workload {
	var out []Workload
	for _, n := range sequence(v, bad) {
		switch n.Kind {
		case yaml.ScalarNode:
			out = append(out, Workload{Name: n.Value, Line: n.Line})
		case yaml.MappingNode:
			w := Workload{Line: n.Line}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, val := n.Content[i], n.Content[i+1]
				switch k.Value {
				case "name":
					w.Name = scalar(val, bad)
				case "params":
					w.Params = mapping(val, bad)
				default:
					bad(k, "unknown workload key %q (want name, params)", k.Value)
				}
			}
			if w.Name == "" {
				bad(n, "a workload needs a name")
			}
			out = append(out, w)
		default:
			bad(n, "a workload is a name or a mapping (name, params)")
		}
	}
	return out
}

func parseAxes(v *yaml.Node, bad func(*yaml.Node, string, ...any)) []Axis {
	if v.Kind != yaml.MappingNode {
		bad(v, "axes is a mapping: AXIS: [values]")
		return nil
	}
	var out []Axis
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		a := Axis{Name: k.Value, Line: k.Line}
		for _, n := range sequence(val, bad) {
			a.Values = append(a.Values, Param{Value: scalar(n, bad), Line: n.Line})
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

func scalar(n *yaml.Node, bad func(*yaml.Node, string, ...any)) string {
	if n.Kind != yaml.ScalarNode {
		bad(n, "want a single value here")
		return ""
	}
	return n.Value
}

func sequence(n *yaml.Node, bad func(*yaml.Node, string, ...any)) []*yaml.Node {
	switch n.Kind {
	case yaml.SequenceNode:
		return n.Content
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
		return []*yaml.Node{n} // a single value is a list of one
	}
	bad(n, "want a list here")
	return nil
}

// mapping reads KEY: VALUE pairs in file order.
func mapping(n *yaml.Node, bad func(*yaml.Node, string, ...any)) []Param {
	if n.Kind != yaml.MappingNode {
		bad(n, "want KEY: VALUE pairs here")
		return nil
	}
	var out []Param
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		out = append(out, Param{Key: k.Value, Value: scalar(v, bad), Line: k.Line})
	}
	return out
}

func intValue(n *yaml.Node, lo, hi int, bad func(*yaml.Node, string, ...any)) int {
	i, err := strconv.Atoi(scalar(n, bad))
	if err != nil || i < lo || i > hi {
		bad(n, "%q: want a whole number from %d to %d", n.Value, lo, hi)
	}
	return i
}

// durationValue parses seconds ("30") or a Go duration ("30s", "5m").
func durationValue(n *yaml.Node, zeroOK bool, bad func(*yaml.Node, string, ...any)) time.Duration {
	s := scalar(n, bad)
	d, err := ParseDuration(s)
	if err != nil || (d == 0 && !zeroOK) {
		bad(n, "%q: want a positive duration such as 30s, 5m or plain seconds", s)
	}
	return d
}

// ParseDuration parses plain seconds ("30", "0.5") or a Go duration ("30s").
func ParseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, err
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a YAML syntax error into an *Error with its line.
func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: m[2]}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// sortErrors orders errors by line.
func sortErrors(errs []error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, _ := errs[i].(*Error)
		b, _ := errs[j].(*Error)
		return a != nil && b != nil && a.Line < b.Line
	})
}
