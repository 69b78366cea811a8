// Package pgbench is a pgbench-compatible front end of the script
// workload: `dbarena pgbench` takes pgbench 15's command line (getopt_long
// rules, its option checks and messages word for word), initializes its
// tables (-i) or runs its scripts on dbarena's script engine, and prints
// pgbench's output, progress and log files with pgbench's exit statuses.
package pgbench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// pgbench's exit statuses.
const (
	// ExitOK: the run or initialization succeeded.
	ExitOK = 0
	// ExitUsage: an option, script parse or connection error.
	ExitUsage = 1
	// ExitAbort: a client aborted during the run.
	ExitAbort = 2
)

// Env is what the front end takes from the process: its output streams,
// environment (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD), dbarena's
// version, how a dbarena target is resolved and how Ctrl-C is caught.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Version is dbarena's version, shown by --version and in the run's
	// header.
	Version string
	// Resolve turns a dbarena --target (sandbox:NAME or a DSN) into
	// connection settings, a DSN without a password getting one from
	// the environment or ~/.pgpass.
	Resolve func(ctx context.Context, spec string) (target.Target, error)
	// Interrupts returns a context cancelled on Ctrl-C or SIGTERM, and its
	// stop function.
	Interrupts func(context.Context) (context.Context, context.CancelFunc)
}

// pgbenchOpt is one of pgbench 15's options: its short letter (0 for
// none), long name, and whether it takes an argument.
type pgbenchOpt struct {
	short byte
	long  string
	arg   bool
}

var pgbenchOpts = []pgbenchOpt{
	{'b', "builtin", true}, {'c', "client", true}, {'C', "connect", false}, {'d', "debug", false},
	{'D', "define", true}, {'f', "file", true}, {'F', "fillfactor", true}, {'h', "host", true},
	{'i', "initialize", false}, {'I', "init-steps", true}, {'j', "jobs", true}, {'l', "log", false},
	{'L', "latency-limit", true}, {'M', "protocol", true}, {'n', "no-vacuum", false}, {'N', "skip-some-updates", false},
	{'p', "port", true}, {'P', "progress", true}, {'q', "quiet", false}, {'r', "report-per-command", false},
	{'R', "rate", true}, {'s', "scale", true}, {'S', "select-only", false}, {'t', "transactions", true},
	{'T', "time", true}, {'U', "username", true}, {'v', "vacuum-all", false}, {'V', "version", false},
	{'?', "help", false}, {'E', "", false},
	{0, "unlogged-tables", false}, {0, "tablespace", true}, {0, "index-tablespace", true},
	{0, "sampling-rate", true}, {0, "aggregate-interval", true}, {0, "progress-timestamp", false},
	{0, "log-prefix", true}, {0, "foreign-keys", false}, {0, "random-seed", true}, {0, "show-script", true},
	{0, "partitions", true}, {0, "partition-method", true}, {0, "failures-detailed", false},
	{0, "max-tries", true}, {0, "verbose-errors", false}, {0, "exit-on-abort", false},
	{0, "dbname", true}, // pgbench 17 (where -d is --dbname; here -d stays pgbench 15's --debug)
}

// pgbenchArg is one parsed option: its long name (or letter) and value.
type pgbenchArg struct {
	name, val string
}

// parsePgbenchArgv splits argv as getopt_long does for pgbench: short
// options (bundled, argument attached or next), long options (unique
// prefixes, =value or next), positional arguments anywhere, "--" ends the
// options.
func parsePgbenchArgv(argv []string) (opts []pgbenchArg, pos []string, err error) {
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return opts, append(pos, argv[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			var match *pgbenchOpt
			n := 0
			for k := range pgbenchOpts {
				o := &pgbenchOpts[k]
				if o.long == name {
					match, n = o, 1
					break
				}
				if o.long != "" && strings.HasPrefix(o.long, name) {
					match = o
					n++
				}
			}
			if n == 0 {
				return nil, nil, fmt.Errorf("unrecognized option '%s'", a)
			}
			if n > 1 {
				return nil, nil, fmt.Errorf("option '%s' is ambiguous", a)
			}
			if match.arg && !hasVal {
				if i+1 >= len(argv) {
					return nil, nil, fmt.Errorf("option '--%s' requires an argument", match.long)
				}
				i++
				val = argv[i]
			} else if !match.arg && hasVal {
				return nil, nil, fmt.Errorf("option '--%s' doesn't allow an argument", match.long)
			}
			opts = append(opts, pgbenchArg{match.long, val})
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				var match *pgbenchOpt
				for k := range pgbenchOpts {
					if pgbenchOpts[k].short == a[j] {
						match = &pgbenchOpts[k]
					}
				}
				if match == nil {
					return nil, nil, fmt.Errorf("invalid option -- '%c'", a[j])
				}
				name := match.long
				if name == "" {
					name = string(match.short)
				}
				if !match.arg {
					opts = append(opts, pgbenchArg{name, ""})
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(argv) {
						return nil, nil, fmt.Errorf("option requires an argument -- '%c'", a[j])
					}
					i++
					val = argv[i]
				}
				opts = append(opts, pgbenchArg{name, val})
				break
			}
		default:
			pos = append(pos, a)
		}
	}
	return opts, pos, nil
}

// pgbenchInitOnly and pgbenchRunOnly are the options pgbench allows only
// with -i, and only without it.
var (
	pgbenchInitOnly = map[string]bool{"fillfactor": true, "init-steps": true, "quiet": true, "unlogged-tables": true,
		"tablespace": true, "index-tablespace": true, "foreign-keys": true, "partitions": true, "partition-method": true}
	pgbenchRunOnly = map[string]bool{"builtin": true, "client": true, "connect": true, "define": true, "file": true,
		"jobs": true, "log": true, "latency-limit": true, "protocol": true, "skip-some-updates": true, "progress": true,
		"report-per-command": true, "rate": true, "select-only": true, "transactions": true, "time": true,
		"sampling-rate": true, "aggregate-interval": true, "progress-timestamp": true, "log-prefix": true,
		"max-tries": true, "verbose-errors": true, "failures-detailed": true, "exit-on-abort": true}
)

// pgbenchRun is a parsed pgbench command line.
type pgbenchRun struct {
	init       bool
	initOpts   script.InitOptions
	foreignKey bool
	noVacuum   bool
	vacuumAll  bool
	scaleGiven bool
	files      []string // FILE@WEIGHT or builtin NAME@WEIGHT, in order
	builtin    []bool
	defines    []string
	protocol   string
	seed       uint64
	seedGiven  bool
	bench      script.BenchOptions
	host, port string
	user, db   string
	target     string // a dbarena target (--target before pgbench's options)
	showScript string
	listOnly   bool
	help       bool
	version    bool
	debug      bool
	dbOpt      bool // --dbname given
}

// pgbenchErr is an option error: pgbench prints it and exits 1.
type pgbenchErr struct{ lines []string }

func (e *pgbenchErr) Error() string { return strings.Join(e.lines, "\n") }

func perr(format string, args ...any) error {
	return &pgbenchErr{lines: []string{fmt.Sprintf(format, args...)}}
}

// pgbenchInt parses an integer option as pgbench's option_parse_int.
func pgbenchInt(val, opt string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, perr("%s must be in range %d..%d", opt, lo, hi)
		}
		return 0, perr("invalid value \"%s\" for option %s", val, opt)
	}
	if n < lo || n > hi {
		return 0, perr("%s must be in range %d..%d", opt, lo, hi)
	}
	return n, nil
}

// resolveBuiltin finds a built-in script by name or unique prefix.
func resolveBuiltin(name string) (string, error) {
	var found []string
	for _, b := range script.BuiltinNames {
		if b == name {
			return b, nil
		}
		if strings.HasPrefix(b, name) {
			found = append(found, b)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", perr("no builtin script found for name \"%s\"", name)
	}
	return "", perr("ambiguous builtin name: %d builtin scripts found for prefix \"%s\"", len(found), name)
}

// splitPgbenchWeight checks NAME@WEIGHT as pgbench does.
func splitPgbenchWeight(s string) (string, string, error) {
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return s, "1", nil
	}
	w := s[i+1:]
	n, err := strconv.ParseInt(w, 10, 64)
	if err != nil || w == "" {
		return "", "", perr("invalid weight specification: %s", s[i:])
	}
	if n < 0 || n > math.MaxInt32 {
		return "", "", perr("weight specification out of range (0 .. %d): %d", math.MaxInt32, n)
	}
	return s[:i], w, nil
}

// parsePgbench reads pgbench's argv into r, checking it as pgbench 15 does.
func parsePgbench(argv []string, getenv func(string) string) (*pgbenchRun, error) {
	r := &pgbenchRun{protocol: "simple", bench: script.BenchOptions{Clients: 1, Threads: 1, MaxTries: 1}}
	r.initOpts = script.InitOptions{Scale: 1, Fillfactor: 100}
	if len(argv) > 0 && (argv[0] == "--target" || strings.HasPrefix(argv[0], "--target=")) {
		if v, ok := strings.CutPrefix(argv[0], "--target="); ok {
			r.target, argv = v, argv[1:]
		} else if len(argv) > 1 {
			r.target, argv = argv[1], argv[2:]
		} else {
			return nil, perr("--target needs a value")
		}
	}
	opts, pos, err := parsePgbenchArgv(argv)
	if err != nil {
		return nil, &pgbenchErr{lines: []string{err.Error(), "hint: Try \"pgbench --help\" for more information."}}
	}
	p := &pgbenchParser{r: r}
	for _, o := range opts {
		p.initSet = p.initSet || pgbenchInitOnly[o.name]
		p.runSet = p.runSet || pgbenchRunOnly[o.name]
		done, err := p.option(o)
		if err != nil {
			return nil, err
		}
		if done {
			return r, nil
		}
		if len(r.files) > 128 {
			return nil, perr("at most 128 SQL scripts are allowed")
		}
	}
	if len(pos) > 0 && !r.dbOpt { // after --dbname, as pgbench 17, none
		r.db, pos = pos[0], pos[1:]
	}
	if len(pos) > 0 {
		return nil, &pgbenchErr{lines: []string{fmt.Sprintf("too many command-line arguments (first is \"%s\")", pos[0]),
			"hint: Try \"pgbench --help\" for more information."}}
	}
	if r.init {
		if err := p.checkInit(); err != nil {
			return nil, err
		}
		return r, nil
	}
	if err := p.checkRun(); err != nil {
		return nil, err
	}
	return r, nil
}

// pgbenchParser is parsePgbench's state beside the run it fills.
type pgbenchParser struct {
	r               *pgbenchRun
	initSet, runSet bool   // an option only -i takes, or only a run
	steps           string // --init-steps
	maxTriesGiven   bool
}

// option reads one option; done: the command line is complete (--help,
// --version, -b list, --show-script).
func (p *pgbenchParser) option(o pgbenchArg) (done bool, err error) {
	r := p.r
	switch o.name {
	case "help":
		r.help = true
		return true, nil
	case "version":
		r.version = true
		return true, nil
	case "initialize":
		r.init = true
	case "init-steps":
		if err := script.CheckSteps(o.val); err != nil {
			return false, &pgbenchErr{lines: strings.Split(err.Error(), "\n")}
		}
		p.steps = o.val
	case "host":
		r.host = o.val
	case "port":
		r.port = o.val
	case "username":
		r.user = o.val
	case "no-vacuum":
		r.noVacuum = true
	case "vacuum-all":
		r.vacuumAll = true
	case "debug":
		r.debug = true
	case "dbname":
		r.db, r.dbOpt = o.val, true
	case "quiet":
		r.initOpts.Quiet = true
	case "E":
	case "connect":
		r.bench.Connect = true
	case "partition-method":
		if o.val != "range" && o.val != "hash" {
			return false, perr("invalid partition method, expecting \"range\" or \"hash\", got: \"%s\"", o.val)
		}
		r.initOpts.PartitionMethod = o.val
	case "unlogged-tables":
		r.initOpts.Unlogged = true
	case "tablespace":
		r.initOpts.Tablespace = o.val
	case "index-tablespace":
		r.initOpts.IndexTablespace = o.val
	case "foreign-keys":
		r.foreignKey = true
	case "protocol":
		switch o.val {
		case "simple", "extended", "prepared":
			r.protocol = o.val
		default:
			return false, perr("invalid query mode (-M): \"%s\"", o.val)
		}
	case "define":
		name, _, ok := strings.Cut(o.val, "=")
		if !ok || name == "" {
			return false, perr("invalid variable definition: \"%s\"", o.val)
		}
		r.defines = append(r.defines, o.val)
	case "report-per-command":
		r.bench.PerCommand = true
	case "log":
		r.bench.Log = true
	case "progress-timestamp":
		r.bench.ProgressTime = true
	case "log-prefix":
		r.bench.LogPrefix = o.val
	case "failures-detailed":
		r.bench.FailuresDetailed = true
	case "verbose-errors":
		r.bench.VerboseErrors = true
	case "exit-on-abort":
		r.bench.ExitOnAbort = true
	default:
		return p.valueOption(o)
	}
	return false, nil
}

// valueOption reads an option with a numeric value.
func (p *pgbenchParser) valueOption(o pgbenchArg) (done bool, err error) {
	r := p.r
	var n int64
	switch o.name {
	case "client":
		n, err = pgbenchInt(o.val, "-c/--clients", 1, math.MaxInt32)
		r.bench.Clients = int(n)
	case "jobs":
		n, err = pgbenchInt(o.val, "-j/--jobs", 1, math.MaxInt32)
		r.bench.Threads = int(n)
	case "scale":
		n, err = pgbenchInt(o.val, "-s/--scale", 1, math.MaxInt32)
		r.initOpts.Scale, r.scaleGiven = int(n), true
	case "transactions":
		n, err = pgbenchInt(o.val, "-t/--transactions", 1, math.MaxInt32)
		r.bench.Transactions = n
	case "time":
		n, err = pgbenchInt(o.val, "-T/--time", 1, math.MaxInt32)
		r.bench.Duration = time.Duration(n) * time.Second
	case "fillfactor":
		n, err = pgbenchInt(o.val, "-F/--fillfactor", 10, 100)
		r.initOpts.Fillfactor = int(n)
	case "progress":
		n, err = pgbenchInt(o.val, "-P/--progress", 1, math.MaxInt32)
		r.bench.Progress = int(n)
	case "partitions":
		n, err = pgbenchInt(o.val, "--partitions", 0, math.MaxInt32)
		r.initOpts.Partitions = int(n)
	case "aggregate-interval":
		n, err = pgbenchInt(o.val, "--aggregate-interval", 1, math.MaxInt32)
		r.bench.AggInterval = int(n)
	case "rate":
		f, perr2 := strconv.ParseFloat(o.val, 64)
		if perr2 != nil || f <= 0 {
			return false, perr("invalid rate limit: \"%s\"", o.val)
		}
		r.bench.Rate = f
	case "latency-limit":
		f, perr2 := strconv.ParseFloat(o.val, 64)
		if perr2 != nil || f <= 0 {
			return false, perr("invalid latency limit: \"%s\"", o.val)
		}
		r.bench.LatencyLimit = time.Duration(f * float64(time.Millisecond))
	case "sampling-rate":
		f, perr2 := strconv.ParseFloat(o.val, 64)
		if perr2 != nil || f <= 0 || f > 1 {
			return false, perr("invalid sampling rate: \"%s\"", o.val)
		}
		r.bench.SamplingRate = f
	case "max-tries":
		n, perr2 := strconv.ParseInt(o.val, 10, 32)
		if perr2 != nil || n < 0 {
			return false, perr("invalid number of maximum tries: \"%s\"", o.val)
		}
		r.bench.MaxTries, p.maxTriesGiven = int(n), true
	default:
		return p.scriptOption(o)
	}
	return false, err
}

// scriptOption reads an option that names scripts or their random seed.
func (p *pgbenchParser) scriptOption(o pgbenchArg) (done bool, err error) {
	r := p.r
	switch o.name {
	case "builtin", "select-only", "skip-some-updates":
		spec := o.val
		switch o.name {
		case "select-only":
			spec = "select-only"
		case "skip-some-updates":
			spec = "simple-update"
		}
		if spec == "list" {
			r.listOnly = true
			return true, nil
		}
		name, w, err := splitPgbenchWeight(spec)
		if err != nil {
			return false, err
		}
		full, err := resolveBuiltin(name)
		if err != nil {
			return false, err
		}
		r.files, r.builtin = append(r.files, full+"@"+w), append(r.builtin, true)
	case "file":
		name, w, err := splitPgbenchWeight(o.val)
		if err != nil {
			return false, err
		}
		if name != "-" {
			if _, err := os.Stat(name); err != nil {
				return false, perr("could not open file \"%s\": %s", name, strings.TrimPrefix(errorText(err), "stat "+name+": "))
			}
		}
		r.files, r.builtin = append(r.files, name+"@"+w), append(r.builtin, false)
	case "random-seed":
		switch o.val {
		case "time":
			r.seed = uint64(time.Now().UnixMicro())
		case "rand":
			r.seed = uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())<<32
		default:
			s, err := strconv.ParseUint(o.val, 10, 64)
			if err != nil {
				return false, &pgbenchErr{lines: []string{
					fmt.Sprintf("unrecognized random seed option \"%s\"", o.val),
					"Expecting an unsigned integer, \"time\" or \"rand\"",
					"error while setting random seed from --random-seed option"}}
			}
			r.seed = s
		}
		r.seedGiven = true
	case "show-script":
		if o.val == "list" {
			r.listOnly = true
			return true, nil
		}
		full, err := resolveBuiltin(o.val)
		if err != nil {
			return false, err
		}
		r.showScript = full
		return true, nil
	}
	return false, nil
}

// checkInit checks an -i command line and sets its init steps.
func (p *pgbenchParser) checkInit() error {
	r, steps := p.r, p.steps
	if p.runSet {
		return perr("some of the specified options cannot be used in initialization (-i) mode")
	}
	if r.initOpts.Partitions == 0 && r.initOpts.PartitionMethod != "" {
		return perr("--partition-method requires greater than zero --partitions")
	}
	if r.initOpts.Partitions > 0 && r.initOpts.PartitionMethod == "" {
		r.initOpts.PartitionMethod = "range"
	}
	if steps == "" {
		steps = script.DefaultInitSteps
	}
	if r.noVacuum {
		steps = strings.ReplaceAll(steps, "v", "")
	}
	if r.foreignKey && !strings.Contains(steps, "f") {
		steps += "f"
	}
	r.initOpts.Steps = steps
	return nil
}

// checkRun checks a run's command line and completes its options.
func (p *pgbenchParser) checkRun() error {
	r := p.r
	if p.initSet {
		return perr("some of the specified options cannot be used in benchmarking mode")
	}
	b := &r.bench
	if b.Transactions > 0 && b.Duration > 0 {
		return perr("specify either a number of transactions (-t) or a duration (-T), not both")
	}
	if b.Transactions == 0 && b.Duration == 0 {
		b.Transactions = 10
	}
	if len(r.files) == 0 {
		r.files, r.builtin = []string{"tpcb-like@1"}, []bool{true}
	}
	total := 0
	for _, f := range r.files {
		w, _ := strconv.Atoi(f[strings.LastIndexByte(f, '@')+1:])
		total += w
	}
	if total == 0 {
		return perr("total script weight must not be zero")
	}
	if b.Threads > b.Clients {
		b.Threads = b.Clients
	}
	if b.ProgressTime && b.Progress == 0 {
		return perr("--progress-timestamp is allowed only under -P/--progress")
	}
	if b.SamplingRate > 0 && !b.Log {
		return perr("log sampling (--sampling-rate) is allowed only when logging transactions (-l)")
	}
	if b.SamplingRate > 0 && b.AggInterval > 0 {
		return perr("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time")
	}
	if b.AggInterval > 0 && !b.Log {
		return perr("log aggregation is allowed only when actually logging transactions")
	}
	if b.LogPrefix != "" && !b.Log {
		return perr("log file prefix (--log-prefix) is allowed only when logging transactions (-l)")
	}
	if secs := int(b.Duration / time.Second); b.Duration > 0 && b.AggInterval > secs {
		return perr("number of seconds for aggregation (%d) must not be higher than test duration (%d)", b.AggInterval, secs)
	}
	if secs := int(b.Duration / time.Second); b.Duration > 0 && b.AggInterval > 0 && secs%b.AggInterval != 0 {
		return perr("duration (%d) must be a multiple of aggregation interval (%d)", secs, b.AggInterval)
	}
	if p.maxTriesGiven && b.MaxTries == 0 && b.LatencyLimit == 0 && b.Duration == 0 {
		return perr("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)")
	}
	if !r.seedGiven {
		// pgbench seeds from the clock (microseconds) unless told otherwise.
		r.seed = uint64(time.Now().UnixMicro())
	}
	b.Seed = r.seed
	b.Mode = r.protocol
	return nil
}

// errorText is an OS error's message as strerror prints it.
func errorText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		s := pe.Err.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// Main is `dbarena pgbench ARGS...`: pgbench's own command line, its
// output and its exit statuses (ExitOK, ExitUsage for an option or set-up
// error, ExitAbort when a client aborted), on dbarena's script engine.
func Main(ctx context.Context, a Env, argv []string) int {
	stderr := a.Stderr
	logErr := pgbenchLog(stderr)
	r, err := parsePgbench(argv, a.Getenv)
	if err != nil {
		var pe *pgbenchErr
		if errors.As(err, &pe) {
			logErr(pe.lines...)
		} else {
			logErr(err.Error())
		}
		return ExitUsage
	}
	if pgbenchInfo(a, r) {
		return ExitOK
	}
	// The scripts are parsed before connecting, as pgbench does.
	var wl *script.Workload
	if !r.init {
		var errs []error
		if wl, errs = pgbenchWorkload(r, a.Stdout); len(errs) > 0 {
			for _, e := range errs {
				logErr(e.Error())
				var se *pgscript.Error
				if errors.As(e, &se) && se.Source != "" {
					// pgbench shows where in the command.
					fmt.Fprintf(stderr, "%s\n%s^ error found here\n", se.Source, strings.Repeat(" ", se.Column))
				}
			}
			return ExitUsage
		}
	}
	t, d, db, ok := pgbenchConnect(ctx, a, r, logErr)
	if !ok {
		return ExitUsage
	}
	defer db.Close()
	if r.init {
		if err := script.Init(ctx, db, r.initOpts, stderr, nil); err != nil {
			logErr(script.PgMessage(err))
			return ExitUsage
		}
		return ExitOK
	}
	env := workload.Env{DB: db, Dialect: d, Target: t}
	var version string
	if err := db.QueryRowContext(ctx, "SHOW server_version").Scan(&version); err != nil {
		logErr(script.PgMessage(err))
		return ExitUsage
	}
	r.bench.Version = fmt.Sprintf("pgbench (dbarena %s, server %s)", a.Version, strings.Fields(version)[0])
	r.bench.Scale = r.initOpts.Scale
	if r.debug {
		r.bench.Debug = stderr
	}
	if !pgbenchScale(ctx, db, r, wl, t, stderr, logErr) {
		return ExitUsage
	}
	if !r.noVacuum {
		pgbenchVacuum(ctx, db, r.vacuumAll, stderr, logErr)
	}
	if r.seedGiven {
		fmt.Fprintf(stderr, "pgbench: setting random seed to %d\n", r.seed)
	}
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	return wl.RunBench(ctx, env, r.bench, a.Stdout, stderr)
}

// pgbenchLog returns pgbench's error logger: each line "pgbench: error:
// ...", or "pgbench: hint: ..." / "pgbench: detail: ...".
func pgbenchLog(stderr io.Writer) func(lines ...string) {
	return func(lines ...string) {
		for _, l := range lines {
			if strings.HasPrefix(l, "hint: ") || strings.HasPrefix(l, "detail: ") {
				fmt.Fprintf(stderr, "pgbench: %s\n", l)
				continue
			}
			fmt.Fprintf(stderr, "pgbench: error: %s\n", l)
		}
	}
}

// pgbenchInfo prints what --help, --version, -b list and --show-script
// ask, and reports whether the command line asked one.
func pgbenchInfo(a Env, r *pgbenchRun) bool {
	stderr := a.Stderr
	switch {
	case r.help:
		pgbenchHelp(a.Stdout)
	case r.version:
		fmt.Fprintf(a.Stdout, "pgbench (PostgreSQL) 15 (dbarena %s)\n", a.Version)
	case r.listOnly:
		fmt.Fprintln(stderr, "Available builtin scripts:")
		for _, n := range script.BuiltinNames {
			fmt.Fprintf(stderr, "\t%13s: %s\n", n, strings.Trim(script.BuiltinDesc[n], "<>"))
		}
		fmt.Fprintln(stderr)
	case r.showScript != "":
		fmt.Fprintf(stderr, "-- %s: %s\n%s\n", r.showScript, strings.Trim(script.BuiltinDesc[r.showScript], "<>"), script.BuiltinSource(r.showScript))
	default:
		return false
	}
	return true
}

// pgbenchWorkload is the script workload of a run's command line, its
// scripts parsed; \shell writes to stdout.
func pgbenchWorkload(r *pgbenchRun, stdout io.Writer) (*script.Workload, []error) {
	cfg := script.BenchConfig{Protocol: r.protocol, Defines: r.defines, Scale: r.initOpts.Scale, Seed: r.seed, Clients: r.bench.Clients,
		ShellOutput: stdout}
	for i, f := range r.files {
		if r.builtin[i] {
			cfg.Builtins = append(cfg.Builtins, f)
		} else {
			cfg.Files = append(cfg.Files, f)
		}
	}
	cfg.Order = r.builtin
	return script.NewBench(cfg)
}

// pgbenchConnect opens the command line's server and checks that it
// answers and is PostgreSQL, logging pgbench's errors when not.
func pgbenchConnect(ctx context.Context, a Env, r *pgbenchRun, logErr func(...string)) (target.Target, dialect.Dialect, *sql.DB, bool) {
	t, err := pgbenchTarget(ctx, a, r)
	if err != nil {
		logErr(err.Error())
		return t, nil, nil, false
	}
	d, err := dialect.For(t.Family())
	if err != nil {
		logErr(err.Error())
		return t, nil, nil, false
	}
	db, err := d.Open(t, dialect.OpenOptions{MaxConns: r.bench.Clients + 1})
	if err != nil {
		logErr(t.Mask(err.Error()))
		return t, nil, nil, false
	}
	if err := db.PingContext(ctx); err != nil {
		var pe *pgconn.PgError
		msg := t.Mask(err.Error())
		if errors.As(err, &pe) {
			msg = script.PgMessage(err)
		}
		logErr(fmt.Sprintf("connection to server at \"%s\", port %d failed: %s", t.Host, t.Port, msg))
		if r.init {
			logErr("could not create connection for initialization")
		} else {
			logErr("could not create connection for setup")
		}
		db.Close()
		return t, nil, nil, false
	}
	if _, ok := d.(flavor.PostgresWire); !ok {
		logErr("dbarena pgbench needs a PostgreSQL server")
		db.Close()
		return t, nil, nil, false
	}
	return t, d, db, true
}

// pgbenchScale reads the scale of the built-in scripts' tables from
// pgbench_branches, as pgbench does; false when it cannot (logged).
func pgbenchScale(ctx context.Context, db *sql.DB, r *pgbenchRun, wl *script.Workload, t target.Target, stderr io.Writer, logErr func(...string)) bool {
	if !slices.Contains(r.builtin, true) {
		return true
	}
	var n int
	if err := db.QueryRowContext(ctx, "select count(*) from pgbench_branches").Scan(&n); err != nil {
		logErr("could not count number of branches: " + script.PgMessage(err))
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" {
			fmt.Fprintf(stderr, "pgbench: hint: Perhaps you need to do initialization (\"pgbench -i\") in database \"%s\".\n", t.Database)
		}
		return false
	}
	if n == 0 {
		logErr("invalid count(*) from pgbench_branches: \"0\"")
		return false
	}
	if r.scaleGiven {
		fmt.Fprintf(stderr, "pgbench: warning: scale option ignored, using count from pgbench_branches table (%d)\n", n)
	}
	r.bench.Scale = n
	wl.SetScale(n)
	return true
}

// pgbenchVacuum vacuums the built-in tables before a run, as pgbench does
// without -n (errors are logged and ignored).
func pgbenchVacuum(ctx context.Context, db *sql.DB, all bool, stderr io.Writer, logErr func(...string)) {
	fmt.Fprint(stderr, "starting vacuum...")
	for _, q := range []string{"vacuum pgbench_branches", "vacuum pgbench_tellers", "truncate pgbench_history"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			logErr(script.PgMessage(err))
			fmt.Fprintln(stderr, "pgbench: detail: (ignoring this error and continuing anyway)")
		}
	}
	fmt.Fprintln(stderr, "end.")
	if all {
		fmt.Fprint(stderr, "starting vacuum pgbench_accounts...")
		if _, err := db.ExecContext(ctx, "vacuum analyze pgbench_accounts"); err != nil {
			logErr(script.PgMessage(err))
			fmt.Fprintln(stderr, "pgbench: detail: (ignoring this error and continuing anyway)")
		}
		fmt.Fprintln(stderr, "end.")
	}
}

// pgbenchTarget is the server of a pgbench command line: a dbarena
// --target, or pgbench's -h/-p/-U/DBNAME with PGHOST, PGPORT, PGUSER,
// PGDATABASE and PGPASSWORD (or ~/.pgpass) as libpq reads them.
func pgbenchTarget(ctx context.Context, a Env, r *pgbenchRun) (target.Target, error) {
	if r.target != "" {
		t, err := a.Resolve(ctx, r.target)
		if err == nil && r.db != "" {
			t.Database = r.db
		}
		return t, err
	}
	env := func(v, k, def string) string {
		if v != "" {
			return v
		}
		if e := a.Getenv(k); e != "" {
			return e
		}
		return def
	}
	login := "postgres"
	if u, err := user.Current(); err == nil {
		login = u.Username
	}
	host := env(r.host, "PGHOST", "127.0.0.1")
	port := env(r.port, "PGPORT", "5432")
	usr := env(r.user, "PGUSER", login)
	db := env(r.db, "PGDATABASE", usr)
	dsn := fmt.Sprintf("postgres://%s@%s:%s/%s", usr, host, port, db)
	if strings.HasPrefix(host, "/") {
		dsn = fmt.Sprintf("postgres://%s@/%s?host=%s&port=%s", usr, db, host, port)
	}
	t, err := target.ParseDSN(dsn)
	if err != nil {
		return target.Target{}, err
	}
	if pw := a.Getenv("PGPASSWORD"); pw != "" {
		t.Password = pw
		return t, nil
	}
	return a.Resolve(ctx, dsn)
}

// pgbenchHelp prints pgbench's --help, with what dbarena adds.
func pgbenchHelp(w io.Writer) {
	fmt.Fprint(w, `dbarena pgbench is a benchmarking tool for PostgreSQL, pgbench's command line on dbarena's engine.

Usage:
  dbarena pgbench [--target TARGET] [OPTION]... [DBNAME]

Initialization options:
  -i, --initialize         invokes initialization mode
  -I, --init-steps=[`+script.InitSteps+`]+ (default "`+script.DefaultInitSteps+`")
                           run selected initialization steps
  -F, --fillfactor=NUM     set fill factor
  -n, --no-vacuum          do not run VACUUM during initialization
  -q, --quiet              quiet logging (one message each 5 seconds)
  -s, --scale=NUM          scaling factor
  --foreign-keys           create foreign key constraints between tables
  --index-tablespace=TABLESPACE
                           create indexes in the specified tablespace
  --partition-method=(range|hash)
                           partition pgbench_accounts with this method (default: range)
  --partitions=NUM         partition pgbench_accounts into NUM parts (default: 0)
  --tablespace=TABLESPACE  create tables in the specified tablespace
  --unlogged-tables        create tables as unlogged tables

Options to select what to run:
  -b, --builtin=NAME[@W]   add builtin script NAME weighted at W (default: 1)
                           (use "-b list" to list available scripts)
  -f, --file=FILENAME[@W]  add script FILENAME weighted at W (default: 1)
  -N, --skip-some-updates  skip updates of pgbench_tellers and pgbench_branches
                           (same as "-b simple-update")
  -S, --select-only        perform SELECT-only transactions
                           (same as "-b select-only")

Benchmarking options:
  -c, --client=NUM         number of concurrent database clients (default: 1)
  -C, --connect            establish new connection for each transaction
  -D, --define=VARNAME=VALUE
                           define variable for use by custom script
  -j, --jobs=NUM           number of threads (default: 1)
  -l, --log                write transaction times to log file
  -L, --latency-limit=NUM  count transactions lasting more than NUM ms as late
  -M, --protocol=simple|extended|prepared
                           protocol for submitting queries (default: simple)
  -n, --no-vacuum          do not run VACUUM before tests
  -P, --progress=NUM       show thread progress report every NUM seconds
  -r, --report-per-command report latencies, failures, and retries per command
  -R, --rate=NUM           target rate in transactions per second
  -s, --scale=NUM          report this scale factor in output
  -t, --transactions=NUM   number of transactions each client runs (default: 10)
  -T, --time=NUM           duration of benchmark test in seconds
  -v, --vacuum-all         vacuum all four standard tables before tests
  --aggregate-interval=NUM aggregate data over NUM seconds
  --exit-on-abort          exit when any client is aborted
  --failures-detailed      report the failures grouped by basic types
  --log-prefix=PREFIX      prefix for transaction time log file
                           (default: "pgbench_log")
  --max-tries=NUM          max number of tries to run transaction (default: 1)
  --progress-timestamp     use Unix epoch timestamps for progress
  --random-seed=SEED       set random seed ("time", "rand", integer)
  --sampling-rate=NUM      fraction of transactions to log (e.g., 0.01 for 1%)
  --show-script=NAME       show builtin script code, then exit
  --verbose-errors         print messages of all errors

Common options:
  -d, --debug              print debugging output
  --dbname=DBNAME          database name to connect to (pgbench 17's; DBNAME may also follow the options)
  -h, --host=HOSTNAME      database server host or socket directory
  -p, --port=PORT          database server port number
  -U, --username=USERNAME  connect as specified database user
  -V, --version            output version information, then exit
  -?, --help               show this help, then exit
  --target=TARGET          (dbarena, first argument only) a dbarena target: sandbox:NAME or a DSN

Report bugs to the dbarena issue tracker (pgbench's own: <pgsql-bugs@lists.postgresql.org>).
`)
}
