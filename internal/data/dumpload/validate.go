package dumpload

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// Validate checks the options as `dbarena load` takes them, and returns
// the first problem, naming its flag.
func (o Options) Validate() error {
	if o.Threads < 1 {
		return errors.New("--threads must be at least 1")
	}
	if !validFormat(o.Format) {
		return fmt.Errorf("--format %q: want auto, mysqldump, pg_dump, mysql or psql", o.Format)
	}
	switch o.Bulk {
	case "on", "off":
	default:
		return fmt.Errorf("--bulk %q: want on or off", o.Bulk)
	}
	if o.Bulk == "on" && o.ContinueOnError {
		return errors.New("--bulk on and --continue-on-error exclude each other: in a table's one transaction a failing row discards the table's earlier rows")
	}
	switch o.LoadData {
	case "on", "off", "auto":
	default:
		return fmt.Errorf("--load-data %q: want on, off or auto", o.LoadData)
	}
	if o.StallTimeout < 0 || (o.StallTimeout > 0 && o.StallTimeout < time.Second) {
		return fmt.Errorf("--stall-timeout %s: want 0 (no bound) or at least 1s", o.StallTimeout)
	}
	if e := o.Rewrite.Engine; e != "" && !isEngineWord(e) {
		return fmt.Errorf("--engine %q: not an engine name", e)
	}
	if strings.ContainsAny(o.Rewrite.TableOptions, ";'\"`\\") {
		return fmt.Errorf("--table-options %q: only NAME=VALUE words, without quotes or ;", o.Rewrite.TableOptions)
	}
	return nil
}

func isEngineWord(s string) bool {
	for _, c := range s {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// validFormat reports a --format value dump.OpenAs takes.
func validFormat(f string) bool {
	if f == "auto" {
		return true
	}
	for _, x := range dump.Formats {
		if string(x) == f {
			return true
		}
	}
	return false
}
