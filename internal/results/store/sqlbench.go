package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// sql-bench's result files, read so that old sql-bench results sit in the
// store beside dbarena's runs (`dbarena results import RUN-...`). Two
// kinds: run-all-tests' summary (RUN-<server><suffix>-<machine>: a header,
// one "prog: Total time" line per test program, and its "Totals per
// operation" table) and one test program's output (output/<prog>-...: its
// "Time for OP (N): S wallclock secs (U usr S sys + ... = C CPU)" lines).
// Either becomes one run of workload "sql-bench" with the micro report
// section: per operation its seconds (micro.seconds.OP), CPU times and
// count, so that `dbarena compare` sets it beside a micro run.

// SQLBenchWorkload is the workload name of an imported sql-bench run.
const SQLBenchWorkload = "sql-bench"

// ErrNotSQLBench is returned (wrapped, with the file and line) for a file
// that is not a sql-bench result file or is malformed.
var ErrNotSQLBench = errors.New("not a sql-bench result file")

// Figure keys of an imported run (the micro section's are shared with the
// micro workload: see micro.SecondsPrefix).
const (
	sbSeconds      = "micro.seconds."
	sbExtrapolated = "micro.extrapolated."
	sbUsr          = "micro.usr."
	sbSys          = "micro.sys."
	sbWrong        = "micro.wrong."
	// SQLBenchTotalPrefix+PROG is a test program's total seconds.
	SQLBenchTotalPrefix = "sqlbench.total."
	// SQLBenchResolution is the figure holding the resolution of the
	// file's seconds (1: sql-bench rounds wall-clock seconds to whole
	// ones; 0.01 when a file's seconds have fractions), which `compare` reads
	// as its noise.
	SQLBenchResolution = "micro.resolution_s"
)

// maxSQLBenchOps bounds the operations one file may name.
const maxSQLBenchOps = 10000

// IsSQLBench reports whether a file beginning with head is a sql-bench
// result file (what ParseSQLBench reads).
func IsSQLBench(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return bytes.HasPrefix(head, []byte("Benchmark DBD suite:")) || bytes.HasPrefix(head, []byte("Testing server '"))
}

var (
	// run-all-tests' own pattern (compare-results reads the same), with
	// the colon after the count optional: sql-bench prints select_in and
	// select_join_in without it, and "drop table(N)".
	sbTimeRE = regexp.MustCompile(`(?i)^(estimated |)time (?:to|for) ([^\s:(]+)(?: table)?\s*\((\d*)(?::\d*)*\)[^:\d]*:?\s*([\d.]+) .*?secs \(\s*([\d.]+) usr\s*\+*\s*([\d.]+) sys.*=\s+([\d.]+)\s+cpu`)
	sbProgRE = regexp.MustCompile(`(?i)^(\S+):\s*(estimated\s+|)total\s+time:\s+([\d.]+)\s+(?:wallclock\s+|)secs`)
	sbOpRE   = regexp.MustCompile(`^(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*([+?]*)\s*$`)
	sbHostRE = regexp.MustCompile(`^Testing server '([^']*)' at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)`)
	sbVerRE  = regexp.MustCompile(`\d+\.\d+(?:\.\d+)?`)
	sbTotRE  = regexp.MustCompile(`(?i)^(estimated |)total time:\s+([\d.]+)\s+(?:wallclock\s+|)secs`)
)

// sbOp is one operation's figures, summed over the lines naming it.
type sbOp struct {
	secs, usr, sys float64
	count          int64
	estimated      bool
	wrong          bool
}

// sqlBenchPrograms are run-all-tests' test programs, for naming an output
// file's program (some have a dash: alter-table-mysql-Linux...).
var sqlBenchPrograms = []string{"alter-table", "ATIS", "big-tables", "connect", "create", "insert", "select", "transactions", "wisconsin"}

// ParseSQLBench reads one sql-bench result file (name is its path, for
// messages and the program of an output file) into a run. rename gives the
// name an operation is stored under (nil: its own). Dates in the files
// carry no time zone: they are read as UTC.
func ParseSQLBench(name string, r io.Reader, rename func(string) string) (*summary.Run, error) {
	if rename == nil {
		rename = func(s string) string { return s }
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	p := &sbParser{name: name, rename: rename, ops: map[string]*sbOp{},
		run: &summary.Run{Schema: summary.Schema, Status: summary.StatusComplete, Workload: SQLBenchWorkload, Threads: 1,
			Params: map[string]any{}, Tags: map[string]string{"source": "sql-bench", "file": filepath.Base(name)},
			Figures: map[string]float64{SQLBenchResolution: 1}, PerType: map[string]summary.Type{}}}
	p.run.AddSection(summary.SectionMicro)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if ln == 1 {
			line = strings.TrimPrefix(line, "\xef\xbb\xbf")
		}
		if err := p.line(ln, strings.TrimSpace(line)); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", name, err, ErrNotSQLBench)
	}
	return p.finish()
}

// sbParser is ParseSQLBench's state.
type sbParser struct {
	name           string
	rename         func(string) string
	run            *summary.Run
	ops            map[string]*sbOp
	order          []string // operations in the order first named
	kind           string   // "RUN" or "output", "" before the first line
	inTotals       bool     // in a RUN file's "Totals per operation" table
	warned         bool     // an output file's line before was a warning
	total          float64
	haveTotal      bool
	date, server   string
	failedPrograms []string
}

func (p *sbParser) bad(line int, format string, args ...any) error {
	return fmt.Errorf("%s line %d: %s: %w", p.name, line, fmt.Sprintf(format, args...), ErrNotSQLBench)
}

// num reads a number of seconds.
func (p *sbParser) num(line int, s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e12 {
		return 0, p.bad(line, "%q is not a number of seconds", s)
	}
	return f, nil
}

// op is operation n's figures, added when first named.
func (p *sbParser) op(line int, n string) (*sbOp, error) {
	n = p.rename(n)
	if o := p.ops[n]; o != nil {
		return o, nil
	}
	if len(p.ops) >= maxSQLBenchOps {
		return nil, p.bad(line, "more than %d operations", maxSQLBenchOps)
	}
	o := &sbOp{}
	p.ops[n] = o
	p.order = append(p.order, n)
	return o, nil
}

// line reads line ln, t trimmed.
func (p *sbParser) line(ln int, t string) error {
	if p.kind == "" {
		switch {
		case t == "":
			return nil
		case strings.HasPrefix(t, "Benchmark DBD suite:"):
			p.kind = "RUN"
		case sbHostRE.MatchString(t):
			p.kind = "output"
			m := sbHostRE.FindStringSubmatch(t)
			p.server, p.date = m[1], m[2]
			return nil
		default:
			return p.bad(ln, "it begins with neither \"Benchmark DBD suite:\" (a RUN file) nor \"Testing server '\" (an output file)")
		}
	}
	switch {
	case p.kind == "RUN" && !p.inTotals:
		return p.runHeader(ln, t)
	case p.inTotals:
		return p.totalsLine(ln, t)
	}
	return p.outputLine(ln, t)
}

// runHeader reads a RUN file's line before its totals table: the header's
// fields and the test programs' totals.
func (p *sbParser) runHeader(ln int, t string) error {
	run := p.run
	if k, v, ok := strings.Cut(t, ":"); ok && !strings.Contains(k, " total time") {
		v = strings.TrimSpace(v)
		switch k {
		case "Benchmark DBD suite":
			run.Params["sqlbench_version"] = v
			return nil
		case "Date of test":
			p.date = v
			return nil
		case "Running tests on":
			run.Host.OS = v
			return nil
		case "Arguments":
			run.Params["arguments"] = v
			return nil
		case "Comments", "Limits from", "Optimization", "Hardware":
			if v != "" {
				run.Params[strings.ToLower(strings.ReplaceAll(k, " ", "_"))] = v
			}
			return nil
		case "Server version":
			p.server = v
			return nil
		}
	}
	switch {
	case t == "Totals per operation:":
		p.inTotals = true
	case sbProgRE.MatchString(t):
		m := sbProgRE.FindStringSubmatch(t)
		s, err := p.num(ln, m[3])
		if err != nil {
			return err
		}
		run.Figures[SQLBenchTotalPrefix+m[1]] = s
	case strings.Contains(t, ": Test skipped"):
		run.Notes = append(run.Notes, "sql-bench: "+t)
	case strings.HasPrefix(t, "Failed ("), strings.Contains(t, ": Failed ("):
		p.failedPrograms = append(p.failedPrograms, t)
	}
	return nil
}

// totalsLine reads a line of a RUN file's "Totals per operation" table.
func (p *sbParser) totalsLine(ln int, t string) error {
	if t == "" || strings.HasPrefix(t, "Operation ") {
		return nil
	}
	m := sbOpRE.FindStringSubmatch(t)
	if m == nil {
		if strings.HasPrefix(t, "Test finished") || strings.HasPrefix(t, "Tests with") || strings.HasPrefix(t, "You can find") {
			return nil
		}
		return p.bad(ln, "%q is not a line of the \"Totals per operation\" table", t)
	}
	var f [4]float64
	for i := range f {
		v, err := p.num(ln, m[2+i])
		if err != nil {
			return err
		}
		f[i] = v
	}
	n, err := strconv.ParseInt(m[6], 10, 64)
	if err != nil {
		return p.bad(ln, "%q is not a count", m[6])
	}
	if m[1] == "TOTALS" {
		p.total, p.haveTotal = f[0], true
		return nil
	}
	o, err := p.op(ln, m[1])
	if err != nil {
		return err
	}
	o.secs += f[0]
	o.usr += f[1]
	o.sys += f[2]
	o.count += n
	o.estimated = o.estimated || strings.Contains(m[7], "+")
	o.wrong = o.wrong || strings.Contains(m[7], "?")
	return nil
}

// outputLine reads a line of an output file: "Time for" lines, the total,
// warnings (the next operation's result was wrong) and skipped tests.
func (p *sbParser) outputLine(ln int, t string) error {
	switch {
	case sbTimeRE.MatchString(t):
		m := sbTimeRE.FindStringSubmatch(t)
		var f [3]float64
		for i, s := range []string{m[4], m[5], m[6]} {
			v, err := p.num(ln, s)
			if err != nil {
				return err
			}
			f[i] = v
		}
		n, _ := strconv.ParseInt(m[3], 10, 64)
		o, err := p.op(ln, m[2])
		if err != nil {
			return err
		}
		o.secs += f[0]
		o.usr += f[1]
		o.sys += f[2]
		o.count += n
		o.estimated = o.estimated || m[1] != ""
		o.wrong = o.wrong || p.warned
		p.warned = false
	case sbTotRE.MatchString(t):
		m := sbTotRE.FindStringSubmatch(t)
		s, err := p.num(ln, m[2])
		if err != nil {
			return err
		}
		p.total, p.haveTotal = s, true
	case strings.HasPrefix(strings.ToLower(t), "warning"):
		p.warned = true
	case strings.HasPrefix(t, "Test skipped"):
		p.run.Notes = append(p.run.Notes, "sql-bench: "+t)
	case t != "":
		p.warned = false
	}
	return nil
}

// finish makes the run of what was read.
func (p *sbParser) finish() (*summary.Run, error) {
	run, name := p.run, p.name
	if p.kind == "" {
		return nil, fmt.Errorf("%s: empty: %w", name, ErrNotSQLBench)
	}
	if len(p.ops) == 0 {
		return nil, fmt.Errorf("%s: no operation times (\"Totals per operation\" in a RUN file, \"Time for\" lines in an output file): %w", name, ErrNotSQLBench)
	}
	if p.kind == "output" {
		base := filepath.Base(name)
		prog := strings.SplitN(base, "-", 2)[0]
		for _, pr := range sqlBenchPrograms {
			if strings.HasPrefix(base, pr+"-") {
				prog = pr
			}
		}
		run.Params["test"] = prog
	}
	run.Tags["sqlbench_file"] = p.kind
	fillSQLBenchTarget(run, p.server)
	if p.date != "" {
		if t, err := time.Parse("2006-01-02 15:04:05", p.date); err == nil {
			run.StartedAt = t.UTC()
		}
	}
	events, sum, fractional := p.fillOps()
	total := p.total
	if !p.haveTotal {
		total = sum
	}
	// sql-bench prints whole wall-clock seconds (with --hires too, in
	// MySQL's 2.15); seconds with a fraction (dbarena's own lines, a newer
	// sql-bench) have two decimals at least.
	if fractional {
		run.Figures[SQLBenchResolution] = 0.01
	}
	run.DurationS = total
	run.UptimeS = total
	run.Totals.Events = events
	if total > 0 {
		run.Throughput.TPS = float64(events) / total
	}
	run.EndedAt = run.StartedAt.Add(time.Duration(total * float64(time.Second)))
	for _, f := range p.failedPrograms {
		run.Notes = append(run.Notes, "sql-bench: "+f)
	}
	if len(p.failedPrograms) > 0 {
		run.Status = summary.StatusFailed
		run.Error = fmt.Sprintf("%d sql-bench test program(s) failed", len(p.failedPrograms))
	}
	slices.Sort(run.Notes)
	return run, nil
}

// fillOps stores the operations' figures in the run and returns their
// count and seconds, and whether any seconds have a fraction.
func (p *sbParser) fillOps() (events int64, sum float64, fractional bool) {
	run := p.run
	for _, n := range p.order {
		o := p.ops[n]
		fractional = fractional || o.secs != math.Trunc(o.secs)
		run.Figures[sbSeconds+n] = o.secs
		run.Figures[sbUsr+n] = o.usr
		run.Figures[sbSys+n] = o.sys
		if o.estimated {
			run.Figures[sbExtrapolated+n] = 1
		}
		typ := summary.Type{Count: o.count}
		if o.wrong {
			run.Figures[sbWrong+n] = 1
			typ.Errors = 1
			typ.ErrorsByCode = map[string]int64{"wrong_result": 1}
			run.Totals.Errors++
			if run.Totals.ErrorsByCode == nil {
				run.Totals.ErrorsByCode = map[string]int64{}
			}
			run.Totals.ErrorsByCode["wrong_result"]++
			run.Notes = append(run.Notes, fmt.Sprintf("%s: sql-bench marked it \"?\" (a wrong result)", n))
		}
		run.PerType[n] = typ
		events += o.count
		sum += o.secs
	}
	return events, sum, fractional
}

// fillSQLBenchTarget reads the server from sql-bench's "Server version"
// ("MySQL 10.11.19 MariaDB 0+deb12u1", "PostgreSQL 15.3 ...").
func fillSQLBenchTarget(run *summary.Run, server string) {
	run.Params["server_version"] = server
	l := strings.ToLower(server)
	switch {
	case strings.Contains(l, "mariadb"):
		run.Target.Flavor = "mariadb"
	case strings.Contains(l, "percona"):
		run.Target.Flavor = "percona"
	case strings.Contains(l, "postgres"), strings.Contains(l, "pg "):
		run.Target.Flavor = "postgres"
	case strings.Contains(l, "mysql"):
		run.Target.Flavor = "mysql"
	}
	run.Target.Version = sbVerRE.FindString(server)
	// The MySQL family's is "MySQL " + VERSION() with each "-" made a
	// space (and "/SSL" after it): undone, it reads as dbarena's.
	if v, ok := strings.CutPrefix(server, "MySQL "); ok && strings.HasPrefix(v, run.Target.Version) {
		v, _, _ = strings.Cut(v, "/")
		run.Target.Version = strings.ReplaceAll(strings.TrimSpace(v), " ", "-")
	}
}
