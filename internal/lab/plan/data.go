package plan

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dbarena/dbarena/internal/server/target"
)

// Data is a dump the lab loads into a server instead of the workload's
// prepare (data: {dump: FILE, engine: E, threads: N, reload: R}), given
// for the whole plan or per server.
type Data struct {
	// Dump is the dump for every family (dump: FILE); Dumps by family
	// (dump: {mysql: F, postgres: F}) take precedence.
	Dump  string
	Dumps map[string]string
	// Engines are the storage engines to load the MySQL family's dump
	// with (engine: E or [E, E]): each is a variant of its own (coordinate
	// engine), like a server's engines.
	Engines []Param
	// Threads load in parallel (0: the loader's default).
	Threads int
	// Reload is when to load: ReloadOnce (default), ReloadAlways or ReloadNever.
	Reload string
	// Line is the line of the data key.
	Line int
}

// Reload values of Data.
const (
	// ReloadOnce loads once per sandbox and engine in a plan run.
	ReloadOnce = "once"
	// ReloadAlways loads again before every round of every workload.
	ReloadAlways = "always"
	// ReloadNever loads only into a database that holds no tables yet, so
	// a sandbox loaded by an earlier plan run is used as it is.
	ReloadNever = "never"
)

// DumpFor returns the dump for a server of family ("mysql" or "postgres").
func (d *Data) DumpFor(family string) string {
	if f, ok := d.Dumps[family]; ok {
		return f
	}
	return d.Dump
}

// Key identifies the loaded data of a variant (its engine ""), for
// Cell.DataKey.
func (d *Data) Key(family, engine string) string {
	k := "data=" + d.DumpFor(family)
	if engine != "" {
		k += ",engine=" + engine
	}
	return k
}

// DataFor returns the data server s loads: its own, else the plan's; nil
// when neither names one.
func (p *Plan) DataFor(s Server) *Data {
	if s.Data != nil {
		return s.Data
	}
	return p.Data
}

var engineNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// parseData reads a data: mapping.
func parseData(key, v *yaml.Node, bad badFunc) *Data {
	d := &Data{Line: key.Line, Reload: ReloadOnce}
	keys, vals := pairs(v, bad)
	for i, k := range keys {
		val := vals[i]
		switch k.Value {
		case "dump":
			if val.Kind == yaml.MappingNode {
				d.Dumps = map[string]string{}
				for _, kv := range mapping(k, val, bad) {
					f, ok := target.FamilyOf(kv.Key)
					if !ok {
						bad(val, "dump for %q: want mysql or postgres", kv.Key)
						continue
					}
					fam := string(f)
					if kv.Value == "" {
						bad(val, "dump for %s: want a file", kv.Key)
					}
					d.Dumps[fam] = kv.Value
				}
				continue
			}
			if d.Dump = scalar(k, val, bad); d.Dump == "" && val.Kind == yaml.ScalarNode {
				bad(val, "dump: want a file")
			}
		case "engine", "engines":
			for _, e := range sequence(k, val, bad) {
				name := scalar(nil, e, bad)
				if e.Kind == yaml.ScalarNode && !engineNameRE.MatchString(name) {
					bad(e, "engine %q is not a storage engine name", name)
				}
				d.Engines = append(d.Engines, Param{Value: name, Line: e.Line})
			}
		case "threads":
			d.Threads = intValue(k, val, 1, 256, bad)
		case "reload":
			switch r := scalar(k, val, bad); r {
			case ReloadOnce, ReloadAlways, ReloadNever:
				d.Reload = r
			default:
				if val.Kind == yaml.ScalarNode {
					bad(val, "reload %q: want once, always or never", r)
				}
			}
		default:
			bad(k, "unknown data key %q (want dump, engine, threads, reload)", k.Value)
		}
	}
	if d.Dump == "" && len(d.Dumps) == 0 && v.Kind == yaml.MappingNode && !hasKey(keys, "dump") {
		bad(key, "data: needs a dump (dump: FILE, or dump: {mysql: FILE, postgres: FILE})")
	}
	seen := map[string]int{}
	for _, e := range d.Engines {
		if l, dup := seen[strings.ToLower(e.Value)]; dup {
			bad(&yaml.Node{Line: e.Line}, "engine %q already listed at line %d", e.Value, l)
		}
		seen[strings.ToLower(e.Value)] = e.Line
	}
	return d
}

func hasKey(keys []*yaml.Node, name string) bool {
	for _, k := range keys {
		if k.Value == name {
			return true
		}
	}
	return false
}

// family is s's protocol family as far as the plan tells: its flavor
// or catalogue name, its DSN's scheme, or a sandbox name that starts with
// postgres or pg; the MySQL family when nothing tells.
func (s Server) family() target.Family {
	if fam, ok := target.FamilyOf(s.Flavor + s.Catalog); ok {
		return fam
	}
	if scheme, _, ok := strings.Cut(s.DSN, "://"); ok {
		if fam, ok := target.FamilyOf(scheme); ok {
			return fam
		}
	}
	n := strings.ToLower(s.Server)
	if strings.HasPrefix(n, "postgres") || strings.HasPrefix(n, "pg") {
		return target.Postgres
	}
	return target.MySQL
}

// Family is s's protocol family ("mysql" or "postgres", see family).
func (s Server) Family() string { return string(s.family()) }

// engines are server s's engine variants: its engines, else (MySQL
// family) its data's engines.
func (p *Plan) engines(s Server) []Param {
	if len(s.Engines) > 0 {
		return s.Engines
	}
	if d := p.DataFor(s); d != nil && s.family() == target.MySQL {
		return d.Engines
	}
	return nil
}

// validPort reads a port: value.
func validPort(key, v *yaml.Node, bad badFunc) int {
	s := scalar(key, v, bad)
	n, err := strconv.Atoi(s)
	if v.Kind == yaml.ScalarNode && (err != nil || n < 1 || n > 65535) {
		bad(v, "port %q: want a TCP port from 1 to 65535", s)
		return 0
	}
	return n
}

// pathParams are the workload parameters that name files (the script
// workload's file and create, http's urls): relative ones are taken from the plan
// file's directory, as data dumps are.
var pathParams = map[string]bool{"file": true, "create": true, "urls": true}

// resolvePaths makes the plan's relative file paths (data dumps, file and
// create parameters and axes) relative to the plan file's directory.
func (p *Plan) resolvePaths() {
	dir := filepath.Dir(p.File)
	if dir == "." {
		return
	}
	fix := func(v string) string {
		path, weight, hasWeight := strings.Cut(v, "@")
		if path == "" || filepath.IsAbs(path) {
			return v
		}
		path = filepath.Join(dir, path)
		if hasWeight {
			return path + "@" + weight
		}
		return path
	}
	data := func(d *Data) {
		if d == nil {
			return
		}
		if d.Dump != "" {
			d.Dump = fix(d.Dump)
		}
		for k, v := range d.Dumps {
			d.Dumps[k] = fix(v)
		}
	}
	data(p.Data)
	for i := range p.Servers {
		data(p.Servers[i].Data)
	}
	for i := range p.Workloads {
		for j, kv := range p.Workloads[i].Params {
			if pathParams[normParam(kv.Key)] {
				p.Workloads[i].Params[j].Value = fix(kv.Value)
			}
		}
	}
	for i := range p.Axes {
		if pathParams[normParam(p.Axes[i].Name)] {
			for j := range p.Axes[i].Values {
				p.Axes[i].Values[j].Value = fix(p.Axes[i].Values[j].Value)
			}
		}
	}
}
