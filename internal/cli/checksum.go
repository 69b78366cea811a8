package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/server/dialect"
)

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
	if database != "" && !dialect.MustFor(t.Flavor).CrossDatabase() {
		t.Database, check = database, "" // a PostgreSQL database is chosen by connecting to it
	}
	s, err := execute.Connect(ctx, t, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		if checksum.NoDatabase(err) {
			return usagef("%s", checksum.NoDatabaseMessage(database, t.Database, t.MaskedDSN(), err))
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
			return usagef("%s", checksum.NoDatabaseMessage(database, s.Target.Database, s.Target.MaskedDSN(), nd))
		}
		return failed(fmt.Errorf("%s", s.Target.Mask(err.Error())))
	}
	if database == "" {
		database = s.Target.Database
	}
	fmt.Fprintf(a.Stdout, "Checksums of %s on %s %s (%s)\n", database, s.Target.Flavor, s.Target.Version, s.Target.MaskedDSN())
	console.Checksums(a.Stdout, list)
	if jsonFile != "" {
		if err := checksum.WriteJSON(jsonFile, checksum.Document{Target: s.Target.MaskedDSN(),
			Flavor: string(s.Target.Flavor), Version: s.Target.Version, Database: database, Tables: list}); err != nil {
			return failed(fmt.Errorf("--json: %w", err))
		}
	}
	return nil
}
