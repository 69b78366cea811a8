package script

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// InitSteps are pgbench's initialization steps (-I): d drop, t create
// tables, g client-side generate, G server-side generate, v vacuum,
// p primary keys, f foreign keys.
const InitSteps = "dtgGvpf"

// DefaultInitSteps is pgbench -i's default.
const DefaultInitSteps = "dtgvp"

// scale32BitThreshold is the scale from which pgbench's aid columns are
// bigint.
const scale32BitThreshold = 20000

// InitOptions is how `pgbench -i` builds its tables.
type InitOptions struct {
	Steps           string // InitSteps characters, in order ("" = DefaultInitSteps)
	Scale           int
	Fillfactor      int // 10..100 (0 = 100)
	Unlogged        bool
	Tablespace      string
	IndexTablespace string
	Partitions      int
	PartitionMethod string // "range" or "hash" ("" = range when Partitions > 0)
	Quiet           bool   // -q: progress every 5 s rather than every 100000 rows
}

// CheckSteps validates an -I string as pgbench does.
func CheckSteps(steps string) error {
	for _, c := range steps {
		if c == ' ' {
			continue
		}
		if !strings.ContainsRune(InitSteps, c) {
			return fmt.Errorf("unrecognized initialization step \"%c\"\nAllowed step characters are: \"%s\".", c, InitSteps)
		}
	}
	return nil
}

// quoteIdent quotes a name as PQescapeIdentifier does.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// initTables is pgbench's ddlinfo: table, columns (small scale), columns
// (scale >= 20000), whether it takes a fillfactor.
var initTables = []struct {
	table, small, big string
	fill              bool
}{
	{"pgbench_history", "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)", "tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)", false},
	{"pgbench_tellers", "tid int not null,bid int,tbalance int,filler char(84)", "tid int not null,bid int,tbalance int,filler char(84)", true},
	{"pgbench_accounts", "aid    int not null,bid int,abalance int,filler char(84)", "aid bigint not null,bid int,abalance int,filler char(84)", true},
	{"pgbench_branches", "bid int not null,bbalance int,filler char(88)", "bid int not null,bbalance int,filler char(88)", true},
}

// InitStatements returns the statements of the steps that are plain SQL
// (d, t, v, p, f) as pgbench 15 sends them, keyed by step.
func (o InitOptions) statements(step byte) []string {
	ff := o.Fillfactor
	if ff == 0 {
		ff = 100
	}
	method := o.PartitionMethod
	if o.Partitions > 0 && method == "" {
		method = "range"
	}
	unlogged := ""
	if o.Unlogged {
		unlogged = " unlogged"
	}
	switch step {
	case 'd':
		return []string{"drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"}
	case 't':
		var out []string
		for _, d := range initTables {
			cols := d.small
			if o.Scale >= scale32BitThreshold {
				cols = d.big
			}
			q := fmt.Sprintf("create%s table %s(%s)", unlogged, d.table, cols)
			if o.Partitions > 0 && d.table == "pgbench_accounts" {
				q += " partition by " + method + " (aid)"
			} else if d.fill {
				q += fmt.Sprintf(" with (fillfactor=%d)", ff)
			}
			if o.Tablespace != "" {
				q += " tablespace " + quoteIdent(o.Tablespace)
			}
			out = append(out, q)
		}
		naccounts := int64(accountsPerScale) * int64(o.Scale)
		for p := 1; p <= o.Partitions; p++ {
			q := fmt.Sprintf("create%s table pgbench_accounts_%d\n  partition of pgbench_accounts\n", unlogged, p)
			if method == "range" {
				size := (naccounts + int64(o.Partitions) - 1) / int64(o.Partitions)
				lo, hi := "minvalue", "maxvalue"
				if p > 1 {
					lo = strconv.FormatInt(int64(p-1)*size+1, 10)
				}
				if p < o.Partitions {
					hi = strconv.FormatInt(int64(p)*size+1, 10)
				}
				q += "  for values from (" + lo + ") to (" + hi + ")"
			} else {
				q += fmt.Sprintf("  for values with (modulus %d, remainder %d)", o.Partitions, p-1)
			}
			q += fmt.Sprintf(" with (fillfactor=%d)", ff)
			out = append(out, q)
		}
		return out
	case 'v':
		return []string{"vacuum analyze pgbench_branches", "vacuum analyze pgbench_tellers",
			"vacuum analyze pgbench_accounts", "vacuum analyze pgbench_history"}
	case 'p':
		var out []string
		for _, t := range []string{"pgbench_branches add primary key (bid)", "pgbench_tellers add primary key (tid)", "pgbench_accounts add primary key (aid)"} {
			q := "alter table " + t
			if o.IndexTablespace != "" {
				q += " using index tablespace " + quoteIdent(o.IndexTablespace)
			}
			out = append(out, q)
		}
		return out
	case 'f':
		return []string{
			"alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
			"alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
			"alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
			"alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
			"alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
		}
	}
	return nil
}

// initStepWords are what pgbench -i prints as each step begins and the
// step's name in its closing timing line.
var initStepWords = map[byte]struct{ log, name string }{
	'd': {"dropping old tables...", "drop tables"},
	't': {"creating tables...", "create tables"},
	'g': {"generating data (client-side)...", "client-side generate"},
	'G': {"generating data (server-side)...", "server-side generate"},
	'v': {"vacuuming...", "vacuum"},
	'p': {"creating primary keys...", "primary keys"},
	'f': {"creating foreign keys...", "foreign keys"},
}

// Init runs pgbench -i's steps on a PostgreSQL connection of db, as pgbench
// 15 does: the same statements, data generated client-side by COPY (FREEZE
// unless accounts is partitioned) or server-side by generate_series, in one
// transaction after a truncate. It prints pgbench's progress lines to
// log (stderr for `dbarena pgbench`). rows, when not nil, is told of the
// rows written.
func Init(ctx context.Context, db *sql.DB, o InitOptions, log io.Writer, rows func(n int64)) error {
	if o.Steps == "" {
		o.Steps = DefaultInitSteps
	}
	if o.Scale < 1 {
		o.Scale = 1
	}
	if err := CheckSteps(o.Steps); err != nil {
		return err
	}
	if log == nil {
		log = io.Discard
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var pg *pgconn.PgConn
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("pgbench init needs a PostgreSQL connection")
		}
		pg = c.Conn().PgConn()
		return nil
	}); err != nil {
		return err
	}
	exec := func(q string) error {
		if err := pg.Exec(ctx, q).Close(); err != nil {
			return fmt.Errorf("query failed: %w\nquery was: %s", err, q)
		}
		return nil
	}
	start := time.Now()
	var times []string
	for i := 0; i < len(o.Steps); i++ {
		step := o.Steps[i]
		if step == ' ' {
			continue
		}
		t0 := time.Now()
		say := initStepWords[step]
		if say.log != "" {
			fmt.Fprintln(log, say.log)
		}
		name := say.name
		var err error
		switch step {
		case 'g':
			err = o.generate(ctx, pg, exec, log, rows)
		case 'G':
			err = o.generateServer(exec, rows)
		default:
			stmts := o.statements(step)
			for k, q := range stmts {
				if step == 't' && k == len(initTables) {
					fmt.Fprintf(log, "creating %d partitions...\n", o.Partitions)
				}
				if err = exec(q); err != nil {
					break
				}
			}
		}
		if err != nil {
			return err
		}
		times = append(times, fmt.Sprintf("%s %.2f s", name, time.Since(t0).Seconds()))
	}
	fmt.Fprintf(log, "done in %.2f s (%s).\n", time.Since(start).Seconds(), strings.Join(times, ", "))
	return nil
}

// generate is step g: COPY of every table in one transaction, as
// pgbench's initGenerateDataClientSide.
func (o InitOptions) generate(ctx context.Context, pg *pgconn.PgConn, exec func(string) error, log io.Writer, rows func(int64)) error {
	if err := exec("begin"); err != nil {
		return err
	}
	if err := exec("truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"); err != nil {
		return err
	}
	scale := int64(o.Scale)
	copyTable := func(table string, n int64, line func(b []byte, i int64) []byte) error {
		q := "copy " + table + " from stdin with (freeze on)"
		if table == "pgbench_accounts" && o.Partitions > 0 {
			q = "copy " + table + " from stdin"
		}
		pr, pw := io.Pipe()
		go func() {
			bw := bufio.NewWriterSize(pw, 64<<10)
			var b []byte
			for i := int64(0); i < n; i++ {
				b = line(b[:0], i)
				if _, err := bw.Write(b); err != nil {
					pw.CloseWithError(err)
					return
				}
				if rows != nil && (i+1)%10000 == 0 {
					rows(10000)
				}
			}
			if rows != nil && n%10000 != 0 {
				rows(n % 10000)
			}
			pw.CloseWithError(bw.Flush())
		}()
		_, err := pg.CopyFrom(ctx, pr, q)
		pr.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		return nil
	}
	// "filler" of branches and tellers is NULL; accounts' is the empty
	// string, blank-padded to 84 characters by char(84).
	err := copyTable("pgbench_branches", scale*branchesPerScale, func(b []byte, i int64) []byte {
		return append(strconv.AppendInt(b, i+1, 10), "\t0\t\\N\n"...)
	})
	if err == nil {
		err = copyTable("pgbench_tellers", scale*tellersPerScale, func(b []byte, i int64) []byte {
			b = append(strconv.AppendInt(b, i+1, 10), '\t')
			return append(strconv.AppendInt(b, i/tellersPerScale+1, 10), "\t0\t\\N\n"...)
		})
	}
	if err == nil {
		err = copyTable("pgbench_accounts", scale*accountsPerScale, func(b []byte, i int64) []byte {
			b = append(strconv.AppendInt(b, i+1, 10), '\t')
			return append(strconv.AppendInt(b, i/accountsPerScale+1, 10), "\t0\t\n"...)
		})
	}
	if err != nil {
		_ = exec("rollback")
		return err
	}
	fmt.Fprintf(log, "%d of %d tuples (100%%) done\n", scale*accountsPerScale, scale*accountsPerScale)
	return exec("commit")
}

// generateServer is step G, as pgbench's initGenerateDataServerSide.
func (o InitOptions) generateServer(exec func(string) error, rows func(int64)) error {
	scale := o.Scale
	for _, q := range []string{
		"begin",
		"truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
		fmt.Sprintf("insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, %d) as bid", branchesPerScale*scale),
		fmt.Sprintf("insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / %d + 1, 0 from generate_series(1, %d) as tid", tellersPerScale, tellersPerScale*scale),
		fmt.Sprintf("insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / %d + 1, 0, '' from generate_series(1, %d) as aid", accountsPerScale, int64(accountsPerScale)*int64(scale)),
		"commit",
	} {
		if err := exec(q); err != nil {
			_ = exec("rollback")
			return err
		}
	}
	if rows != nil {
		rows(int64(scale) * (accountsPerScale + tellersPerScale + branchesPerScale))
	}
	return nil
}

// checkInit validates the pgbench -i flags as pgbench does.
func (wl *Workload) checkInit() []error {
	var errs []error
	o := &wl.init
	if err := CheckSteps(o.Steps); err != nil {
		errs = append(errs, fmt.Errorf("--init-steps: %w", err))
	}
	if o.Fillfactor < 10 || o.Fillfactor > 100 {
		errs = append(errs, fmt.Errorf("--fillfactor %d: must be in range 10..100", o.Fillfactor))
	}
	if o.Partitions < 0 {
		errs = append(errs, fmt.Errorf("--partitions %d: must be in range 0..2147483647", o.Partitions))
	}
	switch o.PartitionMethod {
	case "":
	case "range", "hash":
		if o.Partitions == 0 {
			errs = append(errs, fmt.Errorf("--partition-method %s requires greater than zero --partitions", o.PartitionMethod))
		}
	default:
		errs = append(errs, fmt.Errorf("--partition-method %q: want \"range\" or \"hash\"", o.PartitionMethod))
	}
	return errs
}

// initOptions are the pgbench -i options prepare uses.
func (wl *Workload) initOptions() InitOptions {
	o := wl.init
	o.Scale = wl.scale
	if wl.foreignKeys && !strings.ContainsRune(o.Steps, 'f') {
		o.Steps += "f"
	}
	return o
}

// initFlags are prepare's pgbench -i flags.
func (wl *Workload) initFlags(fs *pflag.FlagSet) {
	fs.StringVar(&wl.init.Steps, "init-steps", DefaultInitSteps, "prepare on PostgreSQL: pgbench -I steps, in order (d drop, t create, g client-side generate, G server-side generate, v vacuum, p primary keys, f foreign keys)")
	fs.IntVar(&wl.init.Fillfactor, "fillfactor", 100, "prepare on PostgreSQL: fillfactor of pgbench_accounts, _tellers and _branches (pgbench -F, 10..100)")
	fs.BoolVar(&wl.init.Unlogged, "unlogged-tables", false, "prepare on PostgreSQL: create the tables UNLOGGED (pgbench --unlogged-tables)")
	fs.StringVar(&wl.init.Tablespace, "tablespace", "", "prepare on PostgreSQL: create the tables in this tablespace (pgbench --tablespace)")
	fs.StringVar(&wl.init.IndexTablespace, "index-tablespace", "", "prepare on PostgreSQL: create the primary keys in this tablespace (pgbench --index-tablespace)")
	fs.BoolVar(&wl.foreignKeys, "foreign-keys", false, "prepare on PostgreSQL: add foreign keys between the tables (pgbench --foreign-keys, step f)")
	fs.IntVar(&wl.init.Partitions, "partitions", 0, "prepare on PostgreSQL: partition pgbench_accounts in this many parts (pgbench --partitions)")
	fs.StringVar(&wl.init.PartitionMethod, "partition-method", "", "prepare on PostgreSQL: range or hash (pgbench --partition-method; range by default)")
}

// params are the options as the run summary records them, by pgbench's
// option names.
func (o InitOptions) params() map[string]any {
	p := map[string]any{"init_steps": o.Steps, "fillfactor": o.Fillfactor}
	if o.Unlogged {
		p["unlogged_tables"] = true
	}
	if o.Tablespace != "" {
		p["tablespace"] = o.Tablespace
	}
	if o.IndexTablespace != "" {
		p["index_tablespace"] = o.IndexTablespace
	}
	if o.Partitions > 0 {
		p["partitions"] = o.Partitions
		p["partition_method"] = cmp.Or(o.PartitionMethod, "range")
	}
	return p
}
