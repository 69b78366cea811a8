package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/data/dumpload"
	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/hostinfo"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/secret"
	"github.com/dbarena/dbarena/internal/server/target"
)

// loadShownErrors is how many failed statements the output lists.
const loadShownErrors = 10

type loadFlags struct {
	target, sandbox, database    string
	engine, engineMap, tableOpts string
	keepDefiners                 bool
	deferIndexes                 string
	loadData                     string
	bulk                         string
	threads                      int
	continueOnError              bool
	noChecksum                   bool
	jsonPath, results            string
	progress                     time.Duration
	stallTimeout                 time.Duration
	dropExisting                 bool
	format                       string
	followIncludes               bool
	tags                         [][2]string
	cred                         credentialFlags
}

func (f *loadFlags) flags(fs *pflag.FlagSet) {
	def := dumpload.DefaultOptions()
	fs.StringVar(&f.target, "target", "", "DSN, sandbox:NAME, or empty for the default sandbox")
	fs.StringVar(&f.sandbox, "sandbox", "", "the sandbox NAME (same as --target sandbox:NAME)")
	f.cred.flags(fs)
	fs.StringVar(&f.database, "database", "", "load everything into this database (default: the dump's own, else the target's)")
	fs.StringVar(&f.engine, "engine", "", "storage engine of every CREATE TABLE (MySQL family), e.g. InnoDB, Aria, MyISAM")
	fs.StringVar(&f.engineMap, "engine-map", "", "engine renames for mixed dumps, e.g. MyISAM=Aria,MEMORY=InnoDB")
	fs.StringVar(&f.tableOpts, "table-options", "", `table options added after the engine of every CREATE TABLE, e.g. "TRANSACTIONAL=1 PAGE_CHECKSUM=1"`)
	fs.BoolVar(&f.keepDefiners, "keep-definers", false, "keep DEFINER= of triggers, views and routines (default: the loading account becomes the definer)")
	fs.StringVar(&f.loadData, "load-data", def.LoadData, "MySQL family: send the dump's plain extended INSERTs as LOAD DATA LOCAL INFILE (from memory), which the server parses with less work: on, off, or auto (the default: on for the MySQL family; INSERTs with a note when the server has local_infile off)")
	fs.StringVar(&f.bulk, "bulk", def.Bulk, "MySQL family: load each table's data in one transaction on one connection, tables in parallel (MariaDB >= 10.7 then bulk-loads an empty InnoDB table: no undo log, indexes sorted; a failing row discards the table's earlier rows): on or off (every INSERT autocommitted, on any connection); off by default: it was slower in every measurement")
	fs.StringVar(&f.deferIndexes, "defer-indexes", onOff(def.DeferIndexes), "MySQL family: create plain secondary indexes after the data (one ALTER TABLE per table, tables in parallel): on, off, or auto (only when the dump is larger than the InnoDB buffer pool)")
	fs.IntVar(&f.threads, "threads", def.Threads, "data connections loading in parallel")
	fs.BoolVar(&f.continueOnError, "continue-on-error", false, "count and list failing statements and go on")
	fs.BoolVar(&f.noChecksum, "no-checksum", false, "skip the per-table content checksums after the load (rows and sizes are still read)")
	fs.StringVar(&f.jsonPath, "json", "", "write the load result ("+dumpload.JSONFormat+", every error listed) to this file")
	fs.StringVar(&f.results, "results", "", "results store (as for run); default $DBARENA_HOME/results.db")
	fs.Var(keyValues{&f.tags}, "tag", "KEY=VALUE label stored with the run (repeatable)")
	durationFlag(fs, &f.progress, "progress-interval", 5*time.Second, "print a progress line to stderr every interval")
	durationFlag(fs, &f.stallTimeout, "stall-timeout", def.StallTimeout, "fail the load (status failed) when the server answers nothing, not even a ping, for this long; a warning comes after a sixth of it (at most 10s); 0 waits for ever")
	fs.StringVar(&f.format, "format", def.Format, "what the files are: auto (told from their text), mysqldump or pg_dump (a dump: data loaded in parallel), mysql or psql (a plain SQL script: loaded in order on one connection, as that client runs it)")
	fs.BoolVar(&f.followIncludes, "follow-includes", false, "read the files that client commands name (mysql source FILE and \\. FILE, psql \\i and \\ir), relative to the file that names them and inside the dump's directory; without it such a command stops the load with an error naming file and line")
	fs.BoolVar(&f.dropExisting, "drop-existing", false, "drop each table the dump creates just before its CREATE TABLE (PostgreSQL: with CASCADE), and a database the dump drops and creates again (without --database) just before its CREATE DATABASE: to load again (a dump's DROP DATABASE never runs otherwise)")
}

func (a *App) loadCmd(ctx context.Context, args []string) error {
	var f loadFlags
	fs := newFlagSet("load")
	f.flags(fs)
	for _, x := range args {
		if x == "-h" || x == "--help" {
			fmt.Fprint(a.Stdout, loadUsage+fs.FlagUsages())
			return nil
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o, err := f.options(fs.Args())
	if err != nil {
		return err
	}
	if f.jsonPath != "" {
		if err := checkWritable(f.jsonPath); err != nil {
			return usagef("--json: %w", err)
		}
	}
	// Read the dump's head now: a bad file is a usage error before any
	// server is started.
	d, err := dump.OpenAs(o.Files, o.Format)
	if err != nil {
		return usagef("%w", err)
	}
	st, err := a.openStore(ctx, f.results)
	if err != nil {
		return err
	}
	defer st.Close()
	tgt := f.target
	if f.sandbox != "" {
		if tgt != "" {
			return usagef("--sandbox and --target name the same thing: give one")
		}
		tgt = "sandbox:" + f.sandbox
	}
	t, err := a.resolveTarget(ctx, tgt, f.cred)
	if err != nil {
		return err
	}
	pp := console.NewLoadProgress(a.Stderr)
	o.Progress, o.ProgressEvery, o.Warn = pp.Print, f.progress, pp.Warn
	out, err := execute.Load(ctx, st, execute.LoadRequest{Target: t, Dump: d, Options: o, DeferAuto: f.deferIndexes == "auto",
		Home: a.home(), Tags: f.tags, Host: hostinfo.Collect(), Version: Version, Interrupts: a.Interrupts,
		Command: func(t target.Target) []string { return maskArgs(a.Args, t) },
		Began: func(s *execute.Session) {
			fmt.Fprintf(a.Stdout, "Loading %s (%s, %s) into %s %s (%s): %d threads\n", strings.Join(o.Files, " "), d.Format,
				console.Bytes(d.Size), s.Target.Flavor, s.Target.Version, s.Target.MaskedDSN(), o.Threads)
		}})
	if err != nil {
		return exitFor(err)
	}
	res, run, loadErr, storeErr := out.Result, out.Run, out.Err, out.StoreErr
	console.Load(a.Stdout, res, loadShownErrors)
	if f.jsonPath != "" {
		if err := dumpload.WriteJSON(f.jsonPath, dumpload.Document{RunID: run.ID, Target: out.Target.MaskedDSN(), Result: res}); err != nil {
			return failed(fmt.Errorf("--json: %w", err))
		}
	}
	if storeErr != nil {
		return failed(fmt.Errorf("%s", secret.Mask(storeErr.Error())))
	}
	fmt.Fprintf(a.Stdout, "\nStored as run %d (%s) in %s\n", run.ID, run.Status, st.Location())
	switch {
	case res.Interrupted:
		return failed(fmt.Errorf("interrupted after %s, %d statements, %d rows; partial result stored as run %d",
			console.Bytes(res.Bytes), res.Statements, res.Rows, run.ID))
	case loadErr != nil && dumpload.IsBadInput(loadErr):
		return usagef("%w", loadErr)
	case loadErr != nil:
		return failed(loadErr)
	case res.ErrorCount > 0:
		return failed(fmt.Errorf("%d statements failed (--continue-on-error); run %d", res.ErrorCount, run.ID))
	}
	return nil
}

// options turns the flags into load options; errors name the flag.
func (f *loadFlags) options(files []string) (dumpload.Options, error) {
	o := dumpload.Options{Files: files, Database: f.database, Threads: f.threads, ContinueOnError: f.continueOnError,
		NoChecksum: f.noChecksum, DeferIndexes: f.deferIndexes == "on", LoadData: f.loadData, Bulk: f.bulk,
		StallTimeout: f.stallTimeout, DropExisting: f.dropExisting, Format: f.format, FollowIncludes: f.followIncludes,
		Rewrite: dump.Rewrite{Engine: f.engine, TableOptions: strings.TrimSpace(f.tableOpts), KeepDefiners: f.keepDefiners}}
	if len(files) == 0 {
		return o, usagef("no dump given: dbarena load FILE... (see dbarena load --help)")
	}
	switch f.deferIndexes {
	case "on", "off", "auto":
	default:
		return o, usagef("--defer-indexes %q: want on, off or auto", f.deferIndexes)
	}
	if f.progress <= 0 {
		return o, usagef("--progress-interval must be positive")
	}
	if err := o.Validate(); err != nil {
		return o, usagef("%w", err)
	}
	if f.engineMap != "" {
		m, err := dump.ParseEngineMap(f.engineMap)
		if err != nil {
			return o, usagef("--engine-map: %w", err)
		}
		o.Rewrite.EngineMap = m
	}
	return o, nil
}

// onOff renders a boolean default as an on/off flag's value.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
