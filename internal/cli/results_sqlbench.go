package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload/micro"
)

// importSQLBench imports sql-bench's result files when file is one (a
// RUN-* file or an output/* file) or a directory of them, and reports
// whether it was (false: file is left to the export importer).
func (a *App) importSQLBench(ctx context.Context, storePath, file string) (bool, error) {
	files, err := sqlBenchFiles(file)
	if err != nil || len(files) == 0 {
		if err != nil {
			return true, usagef("results import: %s: %v", file, err)
		}
		return false, nil
	}
	var runs []*summary.Run
	for _, f := range files {
		run, err := parseSQLBenchFile(f)
		if err != nil {
			return true, usagef("results import: %v", err)
		}
		runs = append(runs, run)
	}
	st, err := a.openStore(ctx, storePath)
	if err != nil {
		return true, err
	}
	defer st.Close()
	res, err := st.ImportRuns(ctx, runs)
	if err != nil {
		return true, failed(fmt.Errorf("results import: %s: %w", file, err))
	}
	fmt.Fprintf(a.Stdout, "Imported %d sql-bench result file(s) from %s into %s", len(res.IDs), file, st.Location())
	if len(res.IDs) > 0 {
		fmt.Fprintf(a.Stdout, " as runs %s (workload %s)", joinIDs(res.IDs), store.SQLBenchWorkload)
	}
	fmt.Fprintln(a.Stdout)
	if len(res.Skipped) > 0 {
		fmt.Fprintf(a.Stdout, "Skipped %d runs already in the store (runs %s)\n", len(res.Skipped), joinIDs(res.Skipped))
	}
	return true, nil
}

// sqlBenchFiles lists the sql-bench result files file names: itself when it
// is one, the result files in it when it is a directory (none: the
// directory is not sql-bench's), nothing when it is another file.
func sqlBenchFiles(file string) ([]string, error) {
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
	return store.IsSQLBench(head[:n]), nil
}

// parseSQLBenchFile reads one sql-bench result file; operations micro does
// the same way are stored under micro's names (micro.SQLBench).
func parseSQLBenchFile(p string) (*summary.Run, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return store.ParseSQLBench(p, f, micro.SQLBenchName)
}
