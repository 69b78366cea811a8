package plan

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/measure/steady"
)

// Variant is one server of the matrix: a plan server with one of its
// storage engines. Each variant runs in its own sandbox.
type Variant struct {
	Server Server
	// Engine is "" when the server lists no engines.
	Engine string
}

// Label is "server" or "server-engine" (a sandbox-friendly name).
func (v Variant) Label() string {
	if v.Engine == "" {
		return v.Server.Name
	}
	return v.Server.Name + "-" + strings.ToLower(v.Engine)
}

// Variants lists the plan's servers with their engine variants (a
// server's engines, else its data's engines on the MySQL family), in order.
func (p *Plan) Variants() []Variant {
	var out []Variant
	for _, s := range p.Servers {
		engines := p.engines(s)
		if len(engines) == 0 {
			out = append(out, Variant{Server: s})
			continue
		}
		for _, e := range engines {
			out = append(out, Variant{Server: s, Engine: e.Value})
		}
	}
	return out
}

// SandboxTLS reports whether server s's sandbox is started with TLS: the
// server says tls: true or a tls axis has the value on. Such a sandbox
// takes plain and TLS connections alike.
func (p *Plan) SandboxTLS(s Server) bool {
	if s.DSN != "" {
		return false
	}
	if s.TLS {
		return true
	}
	for _, a := range p.Axes {
		if a.Name != AxisTLS {
			continue
		}
		for _, v := range a.Values {
			if v.Value == "on" {
				return true
			}
		}
	}
	return false
}

// CoordShards is the coordinate of a cell run by more than one shard.
const CoordShards = "shards"

// Cell is one point of the matrix, run once per round.
type Cell struct {
	// ID is the cell's coordinates as "k=v,k=v", stable across runs of the
	// same plan: the store finds finished cells by it.
	ID string
	// Coords are workload, server, engine (when the server has engine
	// variants), shards (when more than 1), then each axis in file order.
	Coords []Param
	// Variant indexes Plan.Variants().
	Variant  int
	Workload string
	// Params are the workload's fixed parameters overridden by parameter
	// axes, in order.
	Params []Param
	// Threads is the threads axis value, 0 when there is none.
	Threads int
	// Settings are server settings from the plan's server and server.KEY
	// axes, axes last.
	Settings []Param
	// TLS: the cell connects over TLS, verifying the server (tls axis
	// value on, or the server's tls: true without a tls axis).
	TLS bool
	// Connect is the connect axis value (persistent, per-event, every=N),
	// "" without one.
	Connect string
	// DataKey identifies the prepared data the cell needs on its variant.
	DataKey string
	// Shards is how many local shard processes run the cell (1: one);
	// ShardsLine is the plan line that says so (0: the default).
	Shards, ShardsLine int
	// Jobs is the workload's jobs (run --jobs; 0: a thread per worker).
	Jobs int
	// Sched is the workload's scheduling policy (run --sched; "": the
	// default).
	Sched string
	// Placement is the workload's thread placement (run --placement;
	// "": the default).
	Placement string
	// Thresholds are the workload's thresholds, judged on each run of
	// the cell.
	Thresholds []Param
}

// CoordMap returns the coordinates as a map.
func (c Cell) CoordMap() map[string]string {
	m := make(map[string]string, len(c.Coords))
	for _, p := range c.Coords {
		m[p.Key] = p.Value
	}
	return m
}

// Step is one run of the schedule: a cell in a round.
type Step struct {
	Cell
	Round int
}

// Schedule lists every run in order: for each workload, data size and
// server-setting combination, the rounds; within a round each server
// (variant) in turn (A B C A B C ...), and within a server the remaining
// axes (threads, other parameters). Data is so prepared once per server and
// data size, and drift over time spreads over every server alike.
func (p *Plan) Schedule() []Step {
	var dataAxes, setAxes, runAxes []Axis
	for _, a := range p.Axes {
		switch {
		case strings.HasPrefix(a.Name, ServerAxisPrefix):
			setAxes = append(setAxes, a)
		case a.Name != AxisThreads && IsDataParam(a.Name):
			dataAxes = append(dataAxes, a)
		default:
			runAxes = append(runAxes, a)
		}
	}
	variants := p.Variants()
	var out []Step
	for _, w := range p.Workloads {
		for _, dc := range combos(dataAxes) {
			for _, sc := range combos(setAxes) {
				for round := 1; round <= p.Rounds; round++ {
					for vi, v := range variants {
						for _, rc := range combos(runAxes) {
							chosen := map[string]string{}
							for _, c := range [][]Param{dc, sc, rc} {
								for _, kv := range c {
									chosen[kv.Key] = kv.Value
								}
							}
							out = append(out, Step{Cell: p.cell(w, vi, v, chosen), Round: round})
						}
					}
				}
			}
		}
	}
	return out
}

// Cells lists the distinct cells in schedule order.
func (p *Plan) Cells() []Cell {
	seen := map[string]bool{}
	var out []Cell
	for _, s := range p.Schedule() {
		if !seen[s.ID] {
			seen[s.ID] = true
			out = append(out, s.Cell)
		}
	}
	return out
}

func (p *Plan) cell(w Workload, vi int, v Variant, chosen map[string]string) Cell {
	c := Cell{Variant: vi, Workload: w.Name}
	c.Shards, c.ShardsLine = p.ShardsOf(w)
	c.Jobs = w.Jobs
	c.Sched = w.Sched
	c.Placement = w.Placement
	c.Thresholds = w.Thresholds
	c.Coords = append(c.Coords, Param{Key: "workload", Value: w.Name}, Param{Key: "server", Value: v.Server.Name})
	if v.Engine != "" {
		c.Coords = append(c.Coords, Param{Key: "engine", Value: v.Engine})
	}
	if c.Shards > 1 { // one workload run by one process and by shards: two cells
		c.Coords = append(c.Coords, Param{Key: CoordShards, Value: strconv.Itoa(c.Shards)})
	}
	c.Params = append(c.Params, w.Params...)
	c.Settings = append(c.Settings, v.Server.Settings...)
	c.TLS = v.Server.TLS
	for _, a := range p.Axes {
		val := chosen[a.Name]
		c.Coords = append(c.Coords, Param{Key: a.Name, Value: val})
		switch {
		case a.Name == AxisThreads:
			c.Threads, _ = strconv.Atoi(val)
		case a.Name == AxisTLS:
			c.TLS = val == "on"
		case a.Name == AxisConnect:
			c.Connect = val
		case strings.HasPrefix(a.Name, ServerAxisPrefix):
			c.Settings = setParam(c.Settings, strings.TrimPrefix(a.Name, ServerAxisPrefix), val)
		default:
			c.Params = setParam(c.Params, a.Name, val)
		}
	}
	data := p.DataFor(v.Server)
	if v.Engine != "" && data == nil { // with data, the engine is the load's
		c.Params = setParam(c.Params, "mysql-storage-engine", v.Engine)
	}
	parts := make([]string, len(c.Coords))
	for i, kv := range c.Coords {
		parts[i] = kv.Key + "=" + kv.Value
	}
	c.ID = strings.Join(parts, ",")
	if data != nil {
		c.DataKey = data.Key(v.Server.Family(), v.Engine)
		return c
	}
	keys := []string{"workload=" + w.Name}
	for _, kv := range c.Params {
		if IsDataParam(kv.Key) {
			keys = append(keys, normParam(kv.Key)+"="+kv.Value)
		}
	}
	c.DataKey = strings.Join(keys, ",")
	return c
}

// setParam replaces key's value (same key spelled with '_' or '-' alike)
// or appends it.
func setParam(ps []Param, key, val string) []Param {
	out := append([]Param(nil), ps...)
	for i := range out {
		if normParam(out[i].Key) == normParam(key) {
			out[i].Value = val
			return out
		}
	}
	return append(out, Param{Key: key, Value: val})
}

// combos is the cartesian product of the axes' values, first axis slowest.
func combos(axes []Axis) [][]Param {
	out := [][]Param{nil}
	for _, a := range axes {
		var next [][]Param
		for _, c := range out {
			for _, v := range a.Values {
				next = append(next, append(append([]Param(nil), c...), Param{Key: a.Name, Value: v.Value}))
			}
		}
		out = next
	}
	return out
}

// Scale shrinks the plan for a quick run: durations (warm-up or its cap,
// measured time) and data sizes (table-size, warehouses, scale) are
// multiplied by f (0 < f <= 1), keeping at least 1 s, 1 warehouse and 100
// rows per table. A size given as a fraction (micro's scale: 0.1) and the
// micro workload's scale (a factor, not a count) stay fractions: rounding
// them to whole numbers would make them larger.
func (p *Plan) Scale(f float64) {
	if f <= 0 || f >= 1 {
		return
	}
	p.ScaleFactor = f
	dur := func(d time.Duration) time.Duration {
		if d <= 0 {
			return d
		}
		return max(time.Second, time.Duration(float64(d)*f).Round(time.Second))
	}
	p.Duration, p.Warmup = dur(p.Duration), dur(p.Warmup)
	// An automatic warm-up judges a window of intervals: a cap shorter
	// than the window would always end the warm-up at the cap.
	if p.AutoWarmup && p.ReportInterval > 0 {
		p.Warmup = max(p.Warmup, time.Duration(steady.DefaultWindow+1)*p.ReportInterval)
	}
	scale := func(ps []Param, factor bool) {
		for i := range ps {
			if !isSizeParam(ps[i].Key) {
				continue
			}
			n, err := strconv.ParseFloat(ps[i].Value, 64)
			if err != nil || !(n >= 0 && n < 1<<53) { // also NaN: left for the workload to refuse
				continue
			}
			if factor && normParam(ps[i].Key) == "scale" || n != math.Trunc(n) {
				ps[i].Value = strconv.FormatFloat(math.Max(n*f, 0.001), 'g', 3, 64)
				continue
			}
			floor := 1.0
			if normParam(ps[i].Key) == "table-size" {
				floor = 100
			}
			ps[i].Value = strconv.FormatInt(int64(math.Max(floor, math.Round(n*f))), 10)
		}
	}
	for i := range p.Workloads {
		scale(p.Workloads[i].Params, p.Workloads[i].Name == "micro")
	}
	for i := range p.Axes {
		if isSizeParam(p.Axes[i].Name) {
			vals := p.Axes[i].Values
			for j := range vals {
				vals[j].Key = p.Axes[i].Name
			}
			scale(vals, false)
			seen := map[string]bool{}
			kept := vals[:0]
			for _, v := range vals {
				if !seen[v.Value] { // sizes that scale to the same value
					seen[v.Value] = true
					v.Key = ""
					kept = append(kept, v)
				}
			}
			p.Axes[i].Values = kept
		}
	}
}
