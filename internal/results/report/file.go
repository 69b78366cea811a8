package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// OutputError is a report's -o that cannot be written: bad input.
type OutputError struct{ Msg string }

func (e *OutputError) Error() string { return e.Msg }

// CheckOutput checks that -o names a file in an existing directory
// (CLI.md: -o FILE), so that a mistyped path fails before any work.
func CheckOutput(out string) error {
	if out == "-" {
		return nil
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() || strings.HasSuffix(out, string(filepath.Separator)) {
		return fmt.Errorf("-o %s: is a directory, want a file name such as %s", out, filepath.Join(out, "report.html"))
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("-o %s: directory %s does not exist", out, dir)
	case err != nil:
		return fmt.Errorf("-o %s: %s", out, strings.Join(strings.Fields(err.Error()), " "))
	case !st.IsDir():
		return fmt.Errorf("-o %s: %s is not a directory", out, dir)
	}
	return nil
}

// WriteFile writes rep in format (html, md, csv or json; csvRows for
// csv) to out: a file, written whole (a temporary file renamed into
// place), or "-" for stdout. An out that cannot be created is an
// *OutputError.
func WriteFile(rep *Report, format, out, csvRows string, stdout io.Writer) error {
	if out == "-" {
		w := bufio.NewWriter(stdout)
		var err error
		if format == "csv" {
			err = rep.WriteCSV(w, csvRows)
		} else {
			err = rep.WriteJSON(w)
		}
		if err != nil {
			return err
		}
		return w.Flush()
	}
	tmp := out + ".tmp"
	file, err := os.Create(tmp)
	if err != nil {
		return &OutputError{fmt.Sprintf("-o %s: %s", out, strings.Join(strings.Fields(err.Error()), " "))}
	}
	w := bufio.NewWriter(file)
	switch format {
	case "html":
		err = rep.WriteHTML(w)
	case "md":
		base := strings.TrimSuffix(filepath.Base(out), filepath.Ext(out)) + "-charts"
		err = rep.WriteMarkdown(w, filepath.Join(filepath.Dir(out), base), base)
	case "csv":
		err = rep.WriteCSV(w, csvRows)
	case "json":
		err = rep.WriteJSON(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
