package lab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
)

// Loader loads a plan's dump (data: in the plan or a server) into a
// variant's server instead of the workload's prepare. The CLI's loads
// with dbarena load.
type Loader interface {
	// Load loads j.Dump into j.Target and stores the load as a run (with
	// j.Tags and j.Ref), which it returns. With j.KeepLoaded it loads
	// only into a database without tables, and returns a nil run when it
	// kept the one there.
	Load(ctx context.Context, j LoadJob) (*summary.Run, error)
}

// LoadJob is one load: the step that first needs the data, the data, and
// what to load for the target's family.
type LoadJob struct {
	Job
	Data *plan.Data
	// Dump is the data's dump for the target's family.
	Dump string
	// Engine is the storage engine to load the MySQL family's tables
	// with, "" to keep the dump's.
	Engine string
	// KeepLoaded: data reload: never.
	KeepLoaded bool
}

// LoadWorkload is the workload name of a load's stored run.
const LoadWorkload = "load"

// Coords place the load in the plan: workload load, the server and (when
// one) the engine, so reports show load time per server and engine.
func (j LoadJob) Coords() []plan.Param {
	c := []plan.Param{{Key: "workload", Value: LoadWorkload}, {Key: "server", Value: j.Step.CoordMap()["server"]}}
	if j.Engine != "" {
		c = append(c, plan.Param{Key: "engine", Value: j.Engine})
	}
	return c
}

// Cell is the load's cell ID, "workload=load,server=S[,engine=E]".
func (j LoadJob) Cell() string {
	s := ""
	for i, kv := range j.Coords() {
		if i > 0 {
			s += ","
		}
		s += kv.Key + "=" + kv.Value
	}
	return s
}

// Ref places the load's run in its plan.
func (j LoadJob) Ref() *summary.PlanRef {
	m := map[string]string{}
	for _, kv := range j.Coords() {
		m[kv.Key] = kv.Value
	}
	return &summary.PlanRef{Name: j.Plan.Name, Cell: j.Cell(), Coords: m, Round: j.Step.Round}
}

// Tags are the load run's tags: those of a step, with the load's cell.
func (j LoadJob) Tags() [][2]string {
	r := strconv.Itoa(j.Step.Round)
	return [][2]string{{TagPlan, j.Plan.Name}, {TagCell, j.Cell()}, {TagRound, r}, {TagSession, j.Session}, {"round", r}}
}

// load loads the data of s's server for job j.
func (l *Lab) load(ctx context.Context, j Job, d *plan.Data, s *server, note func(string, ...any)) error {
	if l.Loader == nil {
		return fmt.Errorf("the plan names data (line %d) but this lab has no loader", d.Line)
	}
	fam, engine := string(j.Target.Family()), s.v.Engine
	if !dialect.MustFor(j.Target.Flavor).StorageEngines() {
		engine = ""
	}
	lj := LoadJob{Job: j, Data: d, Dump: d.DumpFor(fam), Engine: engine, KeepLoaded: d.Reload == plan.ReloadNever}
	if lj.Dump == "" {
		return fmt.Errorf("data (line %d) has no dump for %s", d.Line, fam)
	}
	run, err := l.Loader.Load(ctx, lj)
	if err != nil {
		return err
	}
	if run == nil {
		note("server %s: data kept (reload: never); %s not loaded again", s.v.Label(), lj.Dump)
		return nil
	}
	if run.Status != summary.StatusComplete {
		return fmt.Errorf("load %s: %s %s", lj.Dump, run.Status, run.Error)
	}
	note("server %s: loaded %s in %.1fs (%d rows)", s.v.Label(), lj.Dump, run.DurationS, run.Totals.Events)
	return nil
}

// stopPortPeers stops the running servers that share s's fixed port, so
// that s can take it; they start again when their turn comes.
func (l *Lab) stopPortPeers(ctx context.Context, s *server, note func(string, ...any)) error {
	for _, o := range s.portPeers {
		if !o.started || o.err != nil {
			continue
		}
		note("servers sharing port %d run in turn: %s is stopped while %s runs", s.v.Server.Port, o.v.Label(), s.v.Label())
		if err := l.Sandboxes.Stop(ctx, o.name); err != nil {
			return fmt.Errorf("stop %s, which holds port %d: %w", o.name, s.v.Server.Port, err)
		}
		o.started = false
	}
	return nil
}

// linkPorts gives each server of a fixed port the others of that port.
func linkPorts(servers []*server) {
	for _, s := range servers {
		if s.v.Server.Port == 0 || s.v.Server.DSN != "" {
			continue
		}
		for _, o := range servers {
			if o != s && o.v.Server.Port == s.v.Server.Port && o.v.Server.DSN == "" {
				s.portPeers = append(s.portPeers, o)
			}
		}
	}
}

// dataWarnings names the dumps of p that do not exist (yet): their cells
// fail at the load.
func dataWarnings(p *plan.Plan) []string {
	var out []string
	seen := map[string]bool{}
	check := func(d *plan.Data) {
		if d == nil {
			return
		}
		files := []string{d.Dump}
		for _, f := range slices.Sorted(maps.Keys(d.Dumps)) {
			files = append(files, d.Dumps[f])
		}
		for _, f := range files {
			if f == "" || seen[f] {
				continue
			}
			seen[f] = true
			if _, err := os.Stat(f); err != nil {
				out = append(out, fmt.Sprintf("%s:%d: data dump %s: %v: its servers' cells will fail (generate or fetch it first)", p.File, d.Line, f, errors.Unwrap(err)))
			}
		}
	}
	check(p.Data)
	for _, s := range p.Servers {
		check(s.Data)
	}
	return out
}
