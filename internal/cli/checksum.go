package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// checksumJSON is the --json file of `dbarena checksum`.
type checksumJSON struct {
	Format   string           `json:"format"`
	Target   string           `json:"target"`
	Flavor   string           `json:"flavor"`
	Version  string           `json:"version"`
	Database string           `json:"database"`
	Tables   []checksum.Table `json:"tables"`
}

const checksumFormat = "dbarena.checksum/v1"

// checksumCmd prints per-table rows, sizes and content checksums.
func (a *App) checksumCmd(ctx context.Context, args []string) error {
	var tgt, sb, database, tables, jsonFile string
	var cred credentialFlags
	fs := newFlagSet("checksum")
	fs.StringVar(&tgt, "target", "", "DSN, sandbox:NAME, or empty for the default sandbox")
	fs.StringVar(&sb, "sandbox", "", "the sandbox NAME (same as --target sandbox:NAME)")
	fs.StringVar(&database, "database", "", "database to check (default: the target's)")
	fs.StringVar(&tables, "tables", "", "comma-separated tables to check (default: every base table)")
	fs.StringVar(&jsonFile, "json", "", "also write the checksums (dbarena.checksum/v1) to this file")
	cred.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if sb != "" {
		if tgt != "" {
			return usagef("--sandbox and --target name the same thing: give one")
		}
		tgt = "sandbox:" + sb
	}
	var names []string
	for _, n := range strings.Split(tables, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if jsonFile != "" {
		if err := checkWritable(jsonFile); err != nil {
			return usagef("--json: %w", err)
		}
	}
	t, err := a.resolveTarget(ctx, tgt, cred)
	if err != nil {
		return err
	}
	check := database
	if database != "" && t.Family() == target.Postgres {
		t.Database, check = database, "" // a PostgreSQL database is chosen by connecting to it
	}
	s, err := execute.Connect(ctx, t, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		if noDatabase(err) {
			return checksumNoDatabase(database, t.Database, t.MaskedDSN(), err)
		}
		return exitFor(err)
	}
	defer s.Close()
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	list, err := checksum.Run(ctx, s.DB, string(s.Target.Flavor), check, checksum.Options{
		Tables: names,
		Progress: func(done, total int, table string) {
			if table != "" && total > 1 {
				fmt.Fprintf(a.Stderr, "checksum: %d/%d %s\n", done+1, total, table)
			}
		},
	})
	if err != nil {
		if strings.Contains(err.Error(), "checksum: no table") {
			return usagef("--tables: %s", strings.TrimPrefix(err.Error(), "checksum: "))
		}
		var nd *checksum.NoDatabaseError
		if errors.As(err, &nd) {
			return checksumNoDatabase(database, s.Target.Database, s.Target.MaskedDSN(), nd)
		}
		return failed(fmt.Errorf("%s", s.Target.Mask(err.Error())))
	}
	if database == "" {
		database = s.Target.Database
	}
	fmt.Fprintf(a.Stdout, "Checksums of %s on %s %s (%s)\n", database, s.Target.Flavor, s.Target.Version, s.Target.MaskedDSN())
	console.Checksums(a.Stdout, list)
	if jsonFile != "" {
		b, err := json.MarshalIndent(checksumJSON{Format: checksumFormat, Target: s.Target.MaskedDSN(),
			Flavor: string(s.Target.Flavor), Version: s.Target.Version, Database: database, Tables: list}, "", "  ")
		if err != nil {
			return failed(err)
		}
		if err := writePrivate(jsonFile, append(b, '\n')); err != nil {
			return failed(fmt.Errorf("--json: %w", err))
		}
	}
	return nil
}
