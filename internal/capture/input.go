package capture

import (
	"fmt"
	"time"
)

// Record is an Event with its absolute start time, as a log parser
// produces it before the events are sorted and made relative.
type Record struct {
	// At is the start time in Unix microseconds.
	At int64
	// Line is the log line the record comes from (0: unknown), for
	// errors found after parsing.
	Line int64
	Event
}

// Input is what a log parser is told about the log it reads, and where it
// counts what it left out.
type Input struct {
	// Name is the file name used in errors (file:line).
	Name string
	// SkipBad counts malformed lines instead of failing on the first.
	SkipBad bool
	// Loc is the zone of timestamps that carry none (MySQL's YYMMDD
	// HH:MM:SS); nil is UTC.
	Loc *time.Location
	// Stats receives the counts.
	Stats *Stats
}

// Stats counts what a conversion read and left out.
type Stats struct {
	// Lines is the number of input lines read.
	Lines int64
	// Skipped counts malformed lines left out (SkipBad).
	Skipped int64
	// FirstBad is the first malformed line's error, for the report.
	FirstBad string
	// Ignored counts well-formed log entries that are not events (a
	// MySQL Ping, a PostgreSQL checkpoint message), by what they were.
	Ignored map[string]int64
	// Masked counts statements whose passwords were masked.
	Masked int64
	// Filtered counts events left out by the filters.
	Filtered int64
	// Notes say how the input was read (a detected log_line_prefix).
	Notes []string
	// Warnings are things left out that are not malformed lines (a log's
	// cut-off last entry), each "FILE:LINE: what"; at most maxWarnings.
	Warnings []string
}

// maxWarnings bounds Stats.Warnings.
const maxWarnings = 20

// Warn records a warning about line of the input.
func (in *Input) Warn(line int64, format string, args ...any) {
	if in.Stats == nil || len(in.Stats.Warnings) >= maxWarnings {
		return
	}
	in.Stats.Warnings = append(in.Stats.Warnings, fmt.Sprintf("%s:%d: %s", in.Name, line, fmt.Sprintf(format, args...)))
}

// WarnFile records a warning about the input as a whole ("FILE: what").
func (in *Input) WarnFile(format string, args ...any) {
	if in.Stats == nil || len(in.Stats.Warnings) >= maxWarnings {
		return
	}
	in.Stats.Warnings = append(in.Stats.Warnings, fmt.Sprintf("%s: %s", in.Name, fmt.Sprintf(format, args...)))
}

// CutOff is the warning about a log whose last line has no newline: the
// entry it belongs to (from line first) is cut off and left out.
func (in *Input) CutOff(last, first int64) {
	in.Warn(last, "the log ends in the middle of a line (no newline at the end): the entry from line %d, cut off, is left out", first)
}

// Bad reports a malformed line: an error naming file:line, or, with
// SkipBad, nil after counting it.
func (in *Input) Bad(line int64, format string, args ...any) error {
	err := fmt.Errorf("%s:%d: %s", in.Name, line, fmt.Sprintf(format, args...))
	if !in.SkipBad {
		return err
	}
	if in.Stats != nil {
		in.Stats.Skipped++
		if in.Stats.FirstBad == "" {
			in.Stats.FirstBad = err.Error()
		}
	}
	return nil
}

// Ignore counts a well-formed entry that is not an event.
func (in *Input) Ignore(what string) {
	if in.Stats == nil {
		return
	}
	if in.Stats.Ignored == nil {
		in.Stats.Ignored = map[string]int64{}
	}
	in.Stats.Ignored[what]++
}

// Location is Loc, or UTC.
func (in *Input) Location() *time.Location {
	if in.Loc == nil {
		return time.UTC
	}
	return in.Loc
}

// BadFatal is a malformed line that --skip-bad cannot pass over (the
// log is not of the format given).
func (in *Input) BadFatal(line int64, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", in.Name, line, fmt.Sprintf(format, args...))
}
