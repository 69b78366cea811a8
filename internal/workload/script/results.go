package script

import (
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// keptResult is the last row of one result of a statement (a query
// string of several statements joined by \; has one result each), kept
// for \aset.
type keptResult struct {
	cols []string
	vals []pgscript.Value
}

// resetKept forgets the rows kept for the previous statement.
func (w *worker) resetKept() {
	w.cols, w.vals, w.rows = w.cols[:0], w.vals[:0], 0
	w.res, w.total, w.kept = -1, 1, w.kept[:0]
}

// newResult starts keeping result k of the statement's reply: the rows
// of the result before it, if any, are kept aside for \aset (\gset uses
// only the last result, as pgbench).
func (w *worker) newResult(k int) {
	if w.rows > 0 {
		w.kept = append(w.kept, keptResult{append([]string(nil), w.cols...), append([]pgscript.Value(nil), w.vals...)})
	}
	w.res, w.rows = k, 0
	w.cols, w.vals = w.cols[:0], w.vals[:0]
}

// keepRow stores a row's columns and values for \gset and \aset. A NULL
// is stored as empty text, as pgbench stores PQgetvalue's "".
func (w *worker) keepRow(r *pgwire.Row) error {
	if r.Result() != w.res || w.rows == 0 {
		w.newResult(r.Result())
		for i := 0; i < r.Len(); i++ {
			w.cols = append(w.cols, r.Name(i))
		}
	}
	w.rows++
	w.vals = w.vals[:0]
	for i := 0; i < r.Len(); i++ {
		if r.IsNull(i) {
			w.vals = append(w.vals, pgscript.StringV(""))
		} else {
			w.vals = append(w.vals, pgscript.StringV(string(r.Bytes(i))))
		}
	}
	return nil
}

// store sets the variables of c's \gset or \aset from the rows kept, as
// pgbench's readCommandResponse: \gset needs exactly one row in the last
// result; \aset stores the last row of every result that has rows (none
// for an empty one).
func (w *worker) store(c *pgscript.Cmd) error {
	if !c.Gset && !c.Aset {
		return nil
	}
	if c.Gset {
		got := w.rows
		if w.res != w.total-1 {
			got = 0 // the last result has no rows (or is not a query's)
		}
		if got != 1 {
			return &pgscript.Error{Line: c.Line, Msg: fmt.Sprintf("\\gset: expected one row, got %d", got)}
		}
		return w.setRow(c, w.cols, w.vals)
	}
	for _, k := range w.kept {
		if err := w.setRow(c, k.cols, k.vals); err != nil {
			return err
		}
	}
	if w.rows > 0 {
		return w.setRow(c, w.cols, w.vals)
	}
	return nil
}

// setRow stores one row into the variables Prefix+column; a column name
// that is not a variable name ("?column?") is an error, as in pgbench.
func (w *worker) setRow(c *pgscript.Cmd, cols []string, vals []pgscript.Value) error {
	for i, col := range cols {
		if i >= len(vals) {
			break
		}
		w.name = append(append(w.name[:0], c.Prefix...), col...)
		if !pgscript.ValidVarNameBytes(w.name) {
			return &pgscript.Error{Line: c.Line, Msg: fmt.Sprintf("\\%s: error storing into variable %s (invalid variable name)", setName(c), w.name)}
		}
		w.st.SetBytes(w.name, vals[i])
	}
	return nil
}

func setName(c *pgscript.Cmd) string {
	if c.Aset {
		return "aset"
	}
	return "gset"
}

// copyErr is pgbench's error for a COPY in a script.
func copyErr(c *pgscript.Cmd, err error) error {
	if errors.Is(err, pgwire.ErrCopy) {
		return &pgscript.Error{Line: c.Line, Msg: "COPY is not supported in pgbench, aborting"}
	}
	return err
}

// endOfScript is pgbench's check at the end of a script: a pipeline or a
// transaction left open (BEGIN without COMMIT) is an error that aborts
// the client.
func (w *worker) endOfScript(s *pgscript.Script) error {
	if (w.pipe != nil || w.pwPipe != nil) && len(s.Cmds) > 0 {
		return &pgscript.Error{File: s.Name, Line: s.Cmds[len(s.Cmds)-1].Line, Msg: "end of script reached with pipeline open"}
	}
	var status byte = 'I'
	switch {
	case w.pw != nil:
		status = w.pw.TxStatus()
	case w.pg != nil:
		status = w.pg.TxStatus()
	}
	if status == 'I' || len(s.Cmds) == 0 {
		return nil
	}
	return &pgscript.Error{File: s.Name, Line: s.Cmds[len(s.Cmds)-1].Line,
		Msg: "end of script reached without completing the last transaction"}
}
