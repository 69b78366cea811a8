// Package convert turns server logs into a capture file: it runs the
// parser of the log's format (mysqllog, pglog), masks passwords, applies
// the filters, sorts the events by start time and writes them with t_us
// relative to the first.
//
// Sorting is in memory (a stable sort, skipped when the log is already
// in start order, as general logs and statement logs are): a capture
// holds every event before it is written, about 150 bytes plus the
// statement's text per event.
package convert

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/mysqllog"
	"github.com/dbarena/dbarena/internal/capture/pglog"
)

// Log formats (--from).
const (
	MySQLGeneral = "mysql-general"
	MySQLSlow    = "mysql-slow"
	PGCSV        = "pg-csv"
	PGStderr     = "pg-stderr"
	PGSyslog     = "pg-syslog"
	// MySQLGeneralTable is mysql.general_log read from a server (see
	// mysqllog.ReadGeneralTable); it has no files.
	MySQLGeneralTable = "mysql-general-table"
)

// Formats lists the file formats.
var Formats = []string{MySQLGeneral, MySQLSlow, PGCSV, PGStderr, PGSyslog}

// Flavor is the server family of a format: "mysql" or "postgres".
func Flavor(from string) string {
	switch from {
	case PGCSV, PGStderr, PGSyslog:
		return "postgres"
	}
	return "mysql"
}

// Options configure a conversion.
type Options struct {
	// From is the log format (Formats).
	From string
	// SkipBad counts malformed lines instead of failing.
	SkipBad bool
	// Loc is the zone of log times that carry none; nil is UTC.
	Loc *time.Location
	// LogLinePrefix is the log_line_prefix of a pg-stderr log; ""
	// detects a common one.
	LogLinePrefix string
	// PGSessions says where a PostgreSQL log's sessions come from (""
	// is auto: connection lines when the log has them, else each line's
	// %c or %p).
	PGSessions pglog.Sessions
	// SyslogYear is the year of a pg-syslog log's first line (syslog
	// writes none); 0 takes the year the file was last written.
	SyslogYear int
	// Lenient (pg-stderr) ignores lines without the prefix and does not
	// require connection lines (live capture).
	Lenient bool
	// Filter selects events.
	Filter capture.Filter
}

// Validate reports every problem of o.
func (o *Options) Validate() []error {
	var errs []error
	if !slices.Contains(Formats, o.From) {
		errs = append(errs, fmt.Errorf("--from %q: want one of %v", o.From, Formats))
	}
	if o.LogLinePrefix != "" && o.From != PGSyslog {
		if _, err := pglog.CompilePrefix(o.LogLinePrefix); err != nil {
			errs = append(errs, fmt.Errorf("--log-line-prefix: %w", err))
		}
	}
	if o.PGSessions != "" && !slices.Contains(pglog.SessionModes, o.PGSessions) {
		errs = append(errs, fmt.Errorf("--pg-sessions %q: want one of %v", o.PGSessions, pglog.SessionModes))
	}
	for _, k := range o.Filter.Kinds {
		if !slices.Contains(capture.Kinds, k) {
			errs = append(errs, fmt.Errorf("--kinds: unknown kind %q (want %v)", k, capture.Kinds))
		}
	}
	return errs
}

func (o *Options) location() *time.Location {
	if o.Loc == nil {
		return time.UTC
	}
	return o.Loc
}

// Result is what a conversion did.
type Result struct {
	Header capture.Header
	Stats  capture.Stats
	// Events is the number of events written.
	Events int64
	// Bytes is the size of the logs read.
	Bytes int64
}

// Collector gathers records from parsers: it masks passwords, filters,
// drops a connect for a session already open (a session that continues
// from one slow log file into the next), raises a start that would go
// back in time within its session to the session's previous start, and
// writes them sorted.
type Collector struct {
	Filter capture.Filter
	Stats  *capture.Stats
	// chunks hold the records: appending never copies the ones kept.
	chunks [][]capture.Record
	n      int
	open   map[string]bool
	// lastAt is each session's last start: a session's events never go
	// back in time (starts computed from a rounded end time minus a
	// duration can).
	lastAt map[string]int64
	sorted bool
	last   int64
	// file is the log Parse reads; first and lastAt the earliest and
	// latest records kept, where they came from, for the span check.
	file            string
	any             bool
	earlyAt, lateAt int64
	earlyL, lateL   int64
	earlyF, lateF   string
}

// NewCollector returns an empty Collector counting into stats.
func NewCollector(f capture.Filter, stats *capture.Stats) *Collector {
	return &Collector{Filter: f, Stats: stats, open: map[string]bool{}, lastAt: map[string]int64{}, sorted: true}
}

// Add takes one record (copied; its strings are kept).
func (c *Collector) Add(r *capture.Record) error {
	switch r.Kind {
	case capture.KindConnect:
		if c.open[r.Session] {
			return nil
		}
		c.open[r.Session] = true
	case capture.KindQuit:
		delete(c.open, r.Session)
	}
	if r.SQL != "" {
		if m, ok := capture.MaskPasswords(r.SQL); ok {
			r.SQL = m
			c.Stats.Masked++
		}
	}
	if last, ok := c.lastAt[r.Session]; ok && r.At < last {
		r.At = last
	}
	c.lastAt[r.Session] = r.At
	if !c.Filter.Keep(r) {
		c.Stats.Filtered++
		return nil
	}
	if r.At < c.last {
		c.sorted = false
	}
	c.last = r.At
	if !c.any || r.At < c.earlyAt {
		c.earlyAt, c.earlyL, c.earlyF = r.At, r.Line, c.file
	}
	if !c.any || r.At > c.lateAt {
		c.lateAt, c.lateL, c.lateF = r.At, r.Line, c.file
	}
	c.any = true
	if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == chunkSize {
		c.chunks = append(c.chunks, make([]capture.Record, 0, chunkSize))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, *r)
	c.n++
	return nil
}

const chunkSize = 8192

// Len is the number of records kept.
func (c *Collector) Len() int { return c.n }

// Write sorts the records by start time (stably: a session's order is
// kept) and writes the capture to w with header h (Start is set from
// the first event).
func (c *Collector) Write(w io.Writer, h capture.Header) (capture.Header, error) {
	if err := c.checkSpan(); err != nil {
		return h, err
	}
	recs := make([]*capture.Record, 0, c.n)
	for _, ch := range c.chunks {
		for i := range ch {
			recs = append(recs, &ch[i])
		}
	}
	if !c.sorted {
		slices.SortStableFunc(recs, func(a, b *capture.Record) int { return cmp.Compare(a.At, b.At) })
	}
	var first int64
	if len(recs) > 0 {
		first = recs[0].At
		h.Start = time.UnixMicro(first).UTC()
	}
	h.Skipped = c.Stats.Skipped
	cw, err := capture.NewWriter(w, h)
	if err != nil {
		return h, err
	}
	if err := encodeParallel(cw, recs, first); err != nil {
		return h, err
	}
	h.Schema = capture.Schema
	return h, cw.Flush()
}

// checkSpan refuses records that would span more than capture.MaxTUS.
func (c *Collector) checkSpan() error {
	if !c.any || c.lateAt-c.earlyAt <= capture.MaxTUS {
		return nil
	}
	where := func(f string, line int64) string {
		if f == "" {
			f = "(log)"
		}
		if line > 0 {
			return fmt.Sprintf("%s:%d", f, line)
		}
		return f
	}
	return fmt.Errorf("%s: time %s is more than 10 years after the log's first event (%s at %s): out of range",
		where(c.lateF, c.lateL), time.UnixMicro(c.lateAt).UTC().Format(time.RFC3339),
		time.UnixMicro(c.earlyAt).UTC().Format(time.RFC3339), where(c.earlyF, c.earlyL))
}

// Parse runs the parser of o.From on r (named name in errors) into c.
// The parser and the collector (masking, filtering, keeping) run on two
// goroutines, handing records over in batches.
func Parse(r io.Reader, name string, o Options, c *Collector) error {
	in := &capture.Input{Name: name, SkipBad: o.SkipBad, Loc: o.Loc, Stats: c.Stats}
	c.file = name
	const batchSize = 1024
	batches := make(chan []capture.Record, 4)
	free := make(chan []capture.Record, 6)
	done := make(chan error, 1)
	go func() {
		var err error
		for b := range batches {
			for i := range b {
				if err == nil {
					err = c.Add(&b[i])
				}
			}
			clear(b)
			select {
			case free <- b[:0]:
			default:
			}
		}
		done <- err
	}()
	batch := make([]capture.Record, 0, batchSize)
	emit := func(rec *capture.Record) error {
		batch = append(batch, *rec)
		if len(batch) == batchSize {
			batches <- batch
			select {
			case batch = <-free:
			default:
				batch = make([]capture.Record, 0, batchSize)
			}
		}
		return nil
	}
	err := parse(r, in, o, emit)
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	if cerr := <-done; err == nil {
		err = cerr
	}
	return err
}

func parse(r io.Reader, in *capture.Input, o Options, emit func(*capture.Record) error) error {
	switch o.From {
	case MySQLGeneral:
		return mysqllog.ParseGeneral(r, in, emit)
	case MySQLSlow:
		return mysqllog.ParseSlow(r, in, emit)
	case PGCSV:
		return pglog.ParseCSVWith(r, in, pglog.CSVOptions{Sessions: o.PGSessions}, emit)
	case PGStderr:
		so := pglog.StderrOptions{Lenient: o.Lenient, Sessions: o.PGSessions}
		if o.LogLinePrefix != "" {
			p, err := pglog.CompilePrefix(o.LogLinePrefix)
			if err != nil {
				return err
			}
			so.Prefix = p
		}
		return pglog.ParseStderr(r, in, so, emit)
	case PGSyslog:
		return pglog.ParseSyslog(r, in, pglog.SyslogOptions{Prefix: o.LogLinePrefix, Year: o.SyslogYear, Sessions: o.PGSessions}, emit)
	}
	return fmt.Errorf("unknown log format %q (want one of %v)", o.From, Formats)
}

// Files converts the logs at paths (read one after the other, as logs of
// one server) and writes the capture to w.
func Files(paths []string, o Options, w io.Writer) (Result, error) {
	var res Result
	if errs := o.Validate(); len(errs) > 0 {
		return res, errs[0]
	}
	c := NewCollector(o.Filter, &res.Stats)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return res, err
		}
		po := o
		if o.From == PGSyslog && o.SyslogYear == 0 {
			if st, err := f.Stat(); err == nil {
				po.SyslogYear = st.ModTime().In(o.location()).Year()
			}
		}
		err = Parse(f, p, po, c)
		if st, serr := f.Stat(); serr == nil {
			res.Bytes += st.Size()
		}
		f.Close()
		if err != nil {
			return res, err
		}
	}
	h := capture.Header{Flavor: Flavor(o.From), Source: o.From, Files: paths}
	h, err := c.Write(w, h)
	res.Header, res.Events = h, int64(c.Len())
	return res, err
}

// ToFile is Files writing to the file out, atomically (a temporary file
// renamed into place). An out that is one of the logs (the same file, by
// any name: a symbolic or hard link) is refused.
func ToFile(paths []string, o Options, out string) (Result, error) {
	if ost, err := os.Stat(out); err == nil {
		for _, p := range paths {
			if ist, err := os.Stat(p); err == nil && os.SameFile(ist, ost) {
				return Result{}, fmt.Errorf("-o %s: it is the log %s (the same file): write the capture elsewhere", out, p)
			}
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return Result{}, err
	}
	defer os.Remove(tmp.Name())
	res, err := Files(paths, o, tmp)
	if err != nil {
		tmp.Close()
		return res, err
	}
	if err := tmp.Close(); err != nil {
		return res, err
	}
	return res, os.Rename(tmp.Name(), out)
}

// encodeParallel encodes the records in batches on every CPU and writes
// the batches in order.
func encodeParallel(cw *capture.Writer, recs []*capture.Record, first int64) error {
	const batch = 4096
	n := (len(recs) + batch - 1) / batch
	results := make([]chan []byte, n)
	for i := range results {
		results[i] = make(chan []byte, 1)
	}
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	workers := min(runtime.GOMAXPROCS(0), n)
	// At most 2 batches per worker are encoded and not yet written; the
	// batches are taken in order, so the next one to write always holds
	// a token. Written buffers go back to the workers.
	tokens := make(chan struct{}, 2*workers)
	free := make(chan []byte, 2*workers)
	for w := 0; w < workers; w++ {
		go func() {
			for {
				tokens <- struct{}{}
				i, ok := <-next
				if !ok {
					<-tokens
					return
				}
				var b []byte
				select {
				case b = <-free:
				default:
				}
				b = b[:0]
				end := min((i+1)*batch, len(recs))
				for _, r := range recs[i*batch : end] {
					r.TUS = r.At - first
					b = capture.AppendEvent(b, &r.Event)
				}
				results[i] <- b
			}
		}()
	}
	var err error
	for i := range results {
		b := <-results[i]
		if err == nil {
			err = cw.WriteEncoded(b)
		}
		<-tokens
		select {
		case free <- b:
		default:
		}
	}
	return err
}
