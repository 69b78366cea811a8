package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// SQLBenchFiles lists the sql-bench result files file names: itself when it
// is one, the result files in it when it is a directory (none: the
// directory is not sql-bench's), nothing when it is another file.
func SQLBenchFiles(file string) ([]string, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, nil // the export importer says it
	}
	if !fi.IsDir() {
		ok, err := isSQLBenchFile(file)
		if err != nil || !ok {
			return nil, err
		}
		return []string{file}, nil
	}
	ents, err := os.ReadDir(file)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(file, e.Name())
		if e.Type().IsRegular() {
			if ok, err := isSQLBenchFile(p); err == nil && ok {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("a directory with no sql-bench result file (RUN-* or a test's output)")
	}
	sort.Strings(out)
	return out, nil
}

func isSQLBenchFile(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return IsSQLBench(head[:n]), nil
}

// ReadSQLBenchFiles reads sql-bench result files (SQLBenchFiles), one run
// each; rename gives operations their names (ParseSQLBench).
func ReadSQLBenchFiles(files []string, rename func(string) string) ([]*summary.Run, error) {
	var runs []*summary.Run
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		run, err := ParseSQLBench(p, f, rename)
		f.Close()
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}
