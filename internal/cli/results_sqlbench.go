package cli

import (
	"context"
	"fmt"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/workload/micro"
)

// importSQLBench imports sql-bench's result files when file is one (a
// RUN-* file or an output/* file) or a directory of them, and reports
// whether it was (false: file is left to the export importer).
func (a *App) importSQLBench(ctx context.Context, storePath, file string) (bool, error) {
	files, err := store.SQLBenchFiles(file)
	if err != nil || len(files) == 0 {
		if err != nil {
			return true, usagef("results import: %s: %v", file, err)
		}
		return false, nil
	}
	runs, err := store.ReadSQLBenchFiles(files, micro.SQLBenchName)
	if err != nil {
		return true, usagef("results import: %v", err)
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
