package pglog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
)

// SyslogOptions configure ParseSyslog.
type SyslogOptions struct {
	// Prefix is the server's log_line_prefix (what follows syslog's
	// "[N-M] "); "" detects it.
	Prefix string
	// Year is the year of the log's first line (syslog writes none).
	Year int
	// Sessions says where sessions come from ("" is SessionsAuto).
	Sessions Sessions
}

// ParseSyslog reads a PostgreSQL log written to syslog
// (log_destination=syslog, as rsyslog stores it):
//
//	Feb 11 13:15:39 host postgres[10808]: [7-1] db=d,user=u LOG:  statement: SELECT a,
//	Feb 11 13:15:39 host postgres[10808]: [7-2] #011       b
//
// Each line becomes a stderr line "YYYY-MM-DD HH:MM:SS ±hhmm [PID] REST"
// (the time in in.Loc, the year from o.Year, plus one each time the month
// goes back), read by ParseStderr with the prefix "%t [%p] " + the
// server's log_line_prefix. A chunk [N-M] with M > 1 continues message N:
// "#011" (a tab, as rsyslog writes it) starts a continuation line; a
// chunk that does not start with the prefix and a severity is the rest of
// a line PostgreSQL split at its syslog length limit, joined to it; any
// other starts a line of its own (DETAIL, HINT...). Lines are numbered as
// in the file.
func ParseSyslog(r io.Reader, in *capture.Input, o SyslogOptions, emit func(*capture.Record) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	year := o.Year
	if year == 0 {
		year = time.Now().In(in.Location()).Year()
	}
	// The head, converted, tells the prefix.
	head, _ := br.Peek(256 << 10)
	conv := &syslogConv{year: year, loc: in.Location()}
	var synth bytes.Buffer
	for _, l := range bytes.SplitAfter(head, []byte{'\n'}) {
		if len(l) == 0 || l[len(l)-1] != '\n' {
			break
		}
		if line, ok := conv.line(bytes.TrimSuffix(l, []byte{'\n'}), nil); ok {
			synth.Write(line)
			synth.WriteByte('\n')
		}
	}
	conv.year, conv.lastMon = year, 0
	var pfx *Prefix
	var err error
	if o.Prefix != "" {
		pfx, err = CompilePrefix("%t [%p] " + o.Prefix)
	} else if pfx, err = DetectPrefix(synth.Bytes()); err == nil && (len(pfx.src) < 8 || pfx.src[:8] != "%t [%p] ") {
		err = fmt.Errorf("the lines after syslog's [N-M] do not start with a log_line_prefix dbarena knows: give it with --log-line-prefix")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if o.Prefix == "" && in.Stats != nil {
		in.Stats.Notes = append(in.Stats.Notes, fmt.Sprintf("%s: log_line_prefix %q after syslog's fields (detected; --log-line-prefix to give another)", in.Name, pfx.src[8:]))
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ParseStderr(pr, in, StderrOptions{Prefix: pfx, Sessions: o.Sessions}, emit)
		pr.CloseWithError(io.ErrClosedPipe)
	}()
	conv.pfx = pfx
	werr := convertSyslog(br, conv, pw, in)
	pw.CloseWithError(werr)
	perr := <-done
	if conv.other > 0 && in.Stats != nil {
		if in.Stats.Ignored == nil {
			in.Stats.Ignored = map[string]int64{}
		}
		in.Stats.Ignored["syslog line of another program"] += conv.other
	}
	if werr != nil && werr != io.ErrClosedPipe {
		return werr
	}
	return perr
}

// convertSyslog writes the stderr form of each syslog line to w, one
// line for one (a joined chunk leaves an empty line, so line numbers
// stay those of the file).
func convertSyslog(r io.Reader, c *syslogConv, w io.Writer, in *capture.Input) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	lr := capture.NewLineReader(r)
	var pending []byte // the last line, held while a chunk may continue it
	has, partial := false, false
	blanks := 0
	flush := func() error {
		if has {
			if _, err := bw.Write(pending); err != nil {
				return err
			}
			if !partial {
				if err := bw.WriteByte('\n'); err != nil {
					return err
				}
			}
			has = false
		}
		for ; blanks > 0; blanks-- {
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		if c.foreign(l) {
			c.other++
			blanks++ // not PostgreSQL's: skipped, its number kept
			continue
		}
		if c.join(l) && has {
			pending = append(pending, c.rest...)
			blanks++ // the line joined keeps its number as an empty line
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		line, ok := c.line(l, pending[:0])
		if !ok {
			line = append(pending[:0], l...) // not syslog: ParseStderr says so
		}
		pending, has = line, true
		if lr.Partial {
			partial = true // a cut-off last line keeps having no newline
			break
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// syslogConv turns syslog lines into stderr lines.
type syslogConv struct {
	year    int
	lastMon int
	loc     *time.Location
	pfx     *Prefix // the combined prefix, to tell a split line's rest
	rest    []byte  // join's chunk
	ts      timeCache
	f       fields
	scratch []byte
	// ident is PostgreSQL's syslog_ident, from the first line with a
	// sequence number; other programs' lines are skipped (other).
	ident string
	other int64
}

// foreign says whether l is another program's syslog line.
func (c *syslogConv) foreign(l []byte) bool {
	_, _, _, ident, _, _, _, ok := syslogParts(l)
	return ok && c.ident != "" && string(ident) != c.ident
}

var months = map[string]int{"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6, "Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}

// syslogParts splits "Mon DD HH:MM:SS host ident[PID]: [N-M] rest" (seq
// is M, 0 without "[N-M]").
func syslogParts(l []byte) (mon, day int, hms, ident, pid []byte, seq int, rest []byte, ok bool) {
	if len(l) < 16 || l[3] != ' ' || l[6] != ' ' || l[9] != ':' || l[12] != ':' || l[15] != ' ' {
		return
	}
	mon = months[string(l[:3])]
	d, err := strconv.Atoi(string(bytes.TrimSpace(l[4:6])))
	if mon == 0 || err != nil {
		return
	}
	day, hms = d, l[7:15]
	i := bytes.Index(l[16:], []byte("]: "))
	if i < 0 {
		return
	}
	hdr := l[16 : 16+i]
	j := bytes.LastIndexByte(hdr, '[')
	if j < 0 {
		return
	}
	pid = hdr[j+1:]
	ident = hdr[:j]
	if k := bytes.LastIndexByte(ident, ' '); k >= 0 {
		ident = ident[k+1:] // after the host
	}
	rest = l[16+i+3:]
	seq = 0 // no sequence number (syslog_sequence_numbers=off)
	if len(rest) > 0 && rest[0] == '[' {
		if k := bytes.IndexByte(rest, ']'); k > 0 {
			if _, m, found := bytes.Cut(rest[1:k], []byte{'-'}); found {
				if v, err := strconv.Atoi(string(m)); err == nil {
					seq = v
				}
			}
			rest = bytes.TrimPrefix(rest[k+1:], []byte{' '})
		}
	}
	ok = true
	return
}

// join says whether l continues the line before: a chunk M > 1 that is
// neither a tab-started line nor a line of its own (prefix and severity);
// c.rest is then its text.
func (c *syslogConv) join(l []byte) bool {
	_, _, _, _, _, seq, rest, ok := syslogParts(l)
	if !ok || seq <= 1 || c.pfx == nil || bytes.HasPrefix(rest, []byte("#011")) || bytes.HasPrefix(rest, []byte{'\t'}) {
		return false
	}
	line, ok := c.line(l, c.scratch[:0])
	c.scratch = line
	if ok && c.pfx.match(line, &c.ts, time.UTC, &c.f) {
		if _, _, sev := severity(line[c.f.restOffset:]); sev {
			return false
		}
	}
	c.rest = rest
	return true
}

// line appends l's stderr form to dst.
func (c *syslogConv) line(l, dst []byte) ([]byte, bool) {
	mon, day, hms, ident, pid, seq, rest, ok := syslogParts(l)
	if !ok {
		return dst, false
	}
	if c.ident == "" && seq >= 1 {
		c.ident = string(ident)
	}
	if seq > 1 && (bytes.HasPrefix(rest, []byte("#011")) || bytes.HasPrefix(rest, []byte{'\t'})) {
		dst = append(dst, '\t')
		rest = bytes.TrimPrefix(bytes.TrimPrefix(rest, []byte("#011")), []byte{'\t'})
		return append(dst, bytes.ReplaceAll(rest, []byte("#011"), []byte{'\t'})...), true
	}
	if c.lastMon != 0 && mon < c.lastMon {
		c.year++
	}
	c.lastMon = mon
	h, _ := strconv.Atoi(string(hms[:2]))
	m, _ := strconv.Atoi(string(hms[3:5]))
	s, _ := strconv.Atoi(string(hms[6:8]))
	_, off := time.Date(c.year, time.Month(mon), day, h, m, s, 0, c.loc).Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	dst = fmt.Appendf(dst, "%04d-%02d-%02d %s %c%02d%02d [%s] ", c.year, mon, day, hms, sign, off/3600, off%3600/60, pid)
	return append(dst, bytes.ReplaceAll(rest, []byte("#011"), []byte{'\t'})...), true
}
