// Package script is the `script` workload: pgbench scripts (--file,
// --builtin) and mysqlslap-style one-liners (--query) run with dbarena's
// measurement. Scripts are parsed by package pgscript; one event is one
// run of one script, chosen by weight, and Event.Type is the script's name.
package script

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// Protocols, as pgbench's --protocol.
const (
	Simple   = "simple"
	Extended = "extended"
	Prepared = "prepared"
)

// Workload is `dbarena run script`.
type Workload struct {
	// shellOut receives \shell's output (nil: standard error, so that it
	// stays out of dbarena's own report; pgbench's entry gives stdout).
	shellOut  io.Writer
	files     []string
	builtins  []string
	queries   []string
	delimiter string
	create    string
	protocol  string
	client    string
	scale     int
	defines   []string
	// numberOfQueries is mysqlslap's --number-of-queries (see limit.go).
	numberOfQueries int64

	seeding // --random-seed and pgbench's random streams (seed.go)

	// Set by Validate.
	scripts    []weighted
	totalW     int
	createSQL  []string
	predefined map[string]pgscript.Value
	stmts      int             // SQL commands over all scripts
	vars       *pgscript.Table // every script's variables, by slot

	createOnce sync.Once
	createErr  error
	stats      statsSet

	// init is how prepare builds pgbench's tables on PostgreSQL (pgbench -i).
	init        InitOptions
	foreignKeys bool
	// sources are the scripts' lines by name (dbarena pgbench -r).
	sources map[string][]string
}

type weighted struct {
	s      *pgscript.Script
	weight int
	// base is the index of the script's first command in the flat
	// per-statement statistics.
	base int
}

var (
	_ workload.Workload        = (*Workload)(nil)
	_ workload.Runner          = (*Workload)(nil)
	_ workload.Preparer        = (*Workload)(nil)
	_ workload.Cleaner         = (*Workload)(nil)
	_ workload.Readier         = (*Workload)(nil)
	_ workload.Demander        = (*Workload)(nil)
	_ workload.Reporter        = (*Workload)(nil)
	_ workload.MeasureBeginner = (*Workload)(nil)
)

// New returns the workload with pgbench's defaults.
func New() workload.Workload {
	return &Workload{delimiter: ";", protocol: Simple, client: ClientAuto, scale: 1,
		init: InitOptions{Steps: DefaultInitSteps, Fillfactor: 100}}
}

// All lists the workloads of this package, for the registry.
func All() []func() workload.Workload { return []func() workload.Workload{New} }

// Name implements workload.Workload.
func (wl *Workload) Name() string { return "script" }

// Description implements workload.Workload.
func (wl *Workload) Description() string {
	return "pgbench scripts (--file, --builtin tpcb-like|simple-update|select-only) and mysqlslap-style --query"
}

// Flags implements workload.Workload.
func (wl *Workload) Flags(fs *pflag.FlagSet) {
	wl.initFlags(fs)
	fs.StringArrayVar(&wl.files, "file", nil, "pgbench script FILE[@WEIGHT] (repeatable)")
	fs.StringArrayVar(&wl.builtins, "builtin", nil, "pgbench built-in script NAME[@WEIGHT]: tpcb-like, simple-update, select-only (repeatable; tpcb-like when no script is given, as pgbench)")
	fs.StringArrayVar(&wl.queries, "query", nil, "mysqlslap-style statements \"SQL;SQL\" run in order as one event (repeatable)")
	fs.StringVar(&wl.delimiter, "delimiter", wl.delimiter, "statement delimiter of --query and --create")
	fs.Int64Var(&wl.numberOfQueries, "number-of-queries", 0, "stop after this many --query statements in total across workers (mysqlslap), in whole events; 0 = until --time/--events")
	fs.StringVar(&wl.create, "create", "", "FILE of statements (split at --delimiter) run once before the run")
	fs.StringVar(&wl.protocol, "protocol", wl.protocol, "how statements are sent: simple (text, :vars substituted), extended (parameters), prepared (prepared once per connection)")
	fs.StringVar(&wl.client, "client", wl.client, "client library on PostgreSQL {auto: dbarena's lean wire client, sql: database/sql and pgx}")
	fs.IntVar(&wl.scale, "scale", wl.scale, "pgbench scale factor: prepare loads 100000 x scale accounts; :scale in scripts")
	fs.Var(&wl.rseed, "random-seed", "pgbench's random seed: N, time (the clock; the default) or rand; the same seed draws pgbench's numbers (random functions, :default_seed, script choice)")
	fs.StringArrayVar(&wl.defines, "define", nil, "NAME=VALUE: a variable every script starts with (pgbench -D; repeatable)")
}

// Params implements workload.Workload.
func (wl *Workload) Params() map[string]any {
	p := map[string]any{"protocol": wl.protocol, "client": wl.client, "scale": wl.scale}
	if o := wl.initOptions(); o != (InitOptions{Steps: DefaultInitSteps, Fillfactor: 100, Scale: wl.scale}) {
		p["init"] = o.params()
	}
	if len(wl.files) > 0 {
		p["file"] = wl.files
	}
	if len(wl.builtins) > 0 {
		p["builtin"] = wl.builtins
	}
	if len(wl.queries) > 0 {
		p["query"] = wl.queries
		p["delimiter"] = wl.delimiter
	}
	if wl.create != "" {
		p["create"] = wl.create
	}
	if len(wl.defines) > 0 {
		p["define"] = wl.defines
	}
	seed, _ := wl.runSeed()
	p["random_seed"] = strconv.FormatUint(seed, 10)
	return p
}

// splitWeight splits "NAME@WEIGHT" (weight 1 when absent).
func splitWeight(flag, s string) (string, int, error) {
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return s, 1, nil
	}
	w, err := strconv.Atoi(s[i+1:])
	if err != nil || w < 0 {
		return "", 0, fmt.Errorf("--%s %s: the weight after @ must be a non-negative integer", flag, s)
	}
	return s[:i], w, nil
}

// Validate implements workload.Workload: it reads and parses every
// script, so that a script error (FILE:LINE) stops the command before the
// run.
func (wl *Workload) Validate() []error {
	var errs []error
	wl.scripts, wl.totalW, wl.stmts = nil, 0, 0
	add := func(s *pgscript.Script, w int) {
		wl.scripts = append(wl.scripts, weighted{s: s, weight: w, base: wl.stmts})
		wl.stmts += len(s.Cmds)
		wl.totalW += w
	}
	switch wl.protocol {
	case Simple, Extended, Prepared:
	default:
		errs = append(errs, fmt.Errorf("--protocol %q: want simple, extended or prepared", wl.protocol))
	}
	if wl.client != ClientAuto && wl.client != ClientSQL {
		errs = append(errs, fmt.Errorf("--client: invalid value %q (want auto or sql)", wl.client))
	}
	if wl.scale < 1 {
		errs = append(errs, fmt.Errorf("--scale %d: must be at least 1", wl.scale))
	}
	errs = append(errs, wl.checkInit()...)
	wl.predefined = map[string]pgscript.Value{}
	for _, d := range wl.defines {
		name, val, ok := strings.Cut(d, "=")
		if !ok || name == "" {
			errs = append(errs, fmt.Errorf("--define %q: want NAME=VALUE", d))
			continue
		}
		wl.predefined[name] = pgscript.StringV(val)
	}
	if n := len(wl.files) + len(wl.builtins); n > pgscript.MaxScripts {
		errs = append(errs, fmt.Errorf("--file/--builtin: %d scripts; at most %d SQL scripts are allowed (as pgbench)", n, pgscript.MaxScripts))
	}
	if len(wl.files)+len(wl.builtins)+len(wl.queries) == 0 {
		// pgbench's default script.
		wl.builtins = []string{"tpcb-like"}
	}
	for _, f := range wl.builtins {
		name, w, err := splitWeight("builtin", f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		src, ok := builtinScripts[name]
		if !ok {
			errs = append(errs, fmt.Errorf("--builtin %q: want tpcb-like, simple-update or select-only", name))
			continue
		}
		s, err := pgscript.Parse(name, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		add(s, w)
	}
	for _, f := range wl.files {
		name, w, err := splitWeight("file", f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("--file: %w", err))
			continue
		}
		s, err := pgscript.Parse(name, string(b))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		add(s, w)
	}
	if wl.delimiter == "" && (len(wl.queries) > 0 || wl.create != "") {
		errs = append(errs, errors.New("--delimiter must not be empty"))
	}
	for i, q := range wl.queries {
		s := literalScript(fmt.Sprintf("query%d", i+1), q, wl.delimiter)
		if len(s.Cmds) == 0 {
			errs = append(errs, fmt.Errorf("--query %q: no statements", q))
			continue
		}
		add(s, 1)
	}
	wl.createSQL = nil
	if wl.create != "" {
		b, err := os.ReadFile(wl.create)
		if err != nil {
			errs = append(errs, fmt.Errorf("--create: %w", err))
		} else {
			for _, c := range literalScript(wl.create, string(b), wl.delimiter).Cmds {
				wl.createSQL = append(wl.createSQL, c.Text)
			}
		}
	}
	if err := wl.checkQueryLimit(); err != nil {
		errs = append(errs, err)
	}
	if len(wl.scripts) > 0 && wl.totalW == 0 {
		errs = append(errs, errors.New("every script has weight 0"))
	}
	var scripts []*pgscript.Script
	for _, s := range wl.scripts {
		scripts = append(scripts, s.s)
		for _, c := range s.s.Cmds {
			if c.Kind == pgscript.StartPipeline && wl.protocol == Simple {
				errs = append(errs, &pgscript.Error{File: s.s.Name, Line: c.Line,
					Msg: "\\startpipeline needs --protocol extended or prepared (as pgbench)"})
				break
			}
		}
	}
	for _, s := range scripts {
		if wl.protocol != Simple {
			if err := s.CheckParams(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := validSeed(); err != nil {
		errs = append(errs, err)
	}
	predef := []string{"scale", "client_id", "default_seed", "random_seed"}
	for n := range wl.predefined {
		predef = append(predef, n)
	}
	// pgbench fails only when a command reads an undefined variable:
	// dbarena warns before the run (Notes).
	wl.varNote = ""
	if err := pgscript.CheckVars(scripts, predef); err != nil {
		wl.varNote = err.Error()
	}
	wl.vars = pgscript.NewTable(predef...)
	for _, s := range scripts {
		wl.vars.Bind(s)
	}
	wl.stats.init(wl)
	return errs
}

// literalScript splits mysqlslap-style text at delimiter into SQL
// commands that are sent as they are (no :variables).
func literalScript(name, text, delimiter string) *pgscript.Script {
	s := &pgscript.Script{Name: name}
	line := 1
	for _, part := range strings.Split(text, delimiter) {
		lead := len(part) - len(strings.TrimLeft(part, " \t\r\n"))
		q := strings.TrimSpace(part)
		if q != "" {
			s.Cmds = append(s.Cmds, pgscript.Cmd{Kind: pgscript.SQL, Line: line + strings.Count(part[:lead], "\n"),
				Text: q, Parts: []pgscript.Part{{Lit: q}}, Class: pgscript.ClassOf(q)})
		}
		line += strings.Count(part, "\n") + strings.Count(delimiter, "\n")
	}
	return s
}
