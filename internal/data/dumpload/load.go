// Package load loads SQL dumps (package dump) into a server: schema first
// on one connection, then the data in parallel over Threads connections,
// each replaying the dump's session settings, then post-data (triggers,
// views, routines, pg_dump's indexes and constraints). It measures what it
// loaded: statements, rows, bytes and, per table, rows and sizes.
package dumpload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Options configure a load. The zero value is the plainest load (one
// connection, indexes where the dump has them, INSERTs); DefaultOptions
// are dbarena load's defaults.
type Options struct {
	// Files are dump files or directories, loaded in order.
	Files []string
	// Database, if set, receives everything: the dump's CREATE DATABASE
	// and USE statements are skipped. Empty: the dump's own database, or
	// the target's if the dump names none.
	Database string
	// Threads is the number of data connections (at least 1).
	Threads int
	// Rewrite changes engines and table options (MySQL family).
	Rewrite dump.Rewrite
	// DeferIndexes (MySQL family) takes plain secondary indexes out of
	// each CREATE TABLE and adds them after the data, one ALTER TABLE per
	// table, tables in parallel.
	DeferIndexes bool
	// ContinueOnError counts failing statements and goes on.
	ContinueOnError bool
	// Admin, if set, is a superuser connection used only to create a
	// database the loading account may not create (a sandbox's), which is
	// then granted to (or owned by) the loading account.
	Admin *target.Target
	// Progress, if set, is called every ProgressEvery (default 5 s) and
	// once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// LoadData sends a MySQL-family dump's plain extended INSERTs as LOAD
	// DATA LOCAL INFILE: "on", "auto" (on for the MySQL family) or "off"
	// (also ""). A server that refuses LOAD DATA LOCAL gets the INSERTs,
	// with a note.
	LoadData string
	// Bulk loads each table's data in one transaction on one connection
	// (tables in parallel), so that MariaDB bulk-loads empty InnoDB
	// tables (bulk.go): "on" (MySQL family; not with ContinueOnError) or
	// "off" (also ""): every statement on any connection, autocommitted.
	Bulk string
	// NoStats skips the per-table figures read after the load.
	NoStats bool
	// NoChecksum reads the per-table rows and sizes without the content
	// checksum (which reads every row once more).
	NoChecksum bool
	// StallTimeout ends a load whose server answers nothing (no progress
	// and no answer to a ping) for that long, with a *LostError; 0 waits
	// for ever. Warn, if set, is told once the server has been silent for
	// a sixth of it (at most 10 s).
	StallTimeout time.Duration
	Warn         func(msg string)
	// Format names the files' format: "" or "auto" (sniffed), mysqldump,
	// pg_dump, or mysql / psql for plain SQL scripts, which load in order
	// on one connection (see dump.OpenAs).
	Format string
	// FollowIncludes reads the files client commands name (mysql
	// source and \., psql \i and \ir), relative to the including file
	// and inside the dump's directory; without it such a command stops
	// the load with a BadInputError naming file and line.
	FollowIncludes bool
	// DropExisting drops each table the dump creates (DROP TABLE IF
	// EXISTS, PostgreSQL with CASCADE) just before its CREATE TABLE, so
	// that a load that failed half-way can run again.
	DropExisting bool
}

// DefaultOptions are dbarena load's defaults, shared by its flags and by
// plans' loads: four data connections, secondary indexes deferred, LOAD
// DATA where the server allows it, no table transactions. The caller sets
// Files and whatever else it changes.
func DefaultOptions() Options {
	return Options{Threads: 4, DeferIndexes: true, LoadData: "auto", Bulk: "off", StallTimeout: DefaultStallTimeout, Format: "auto"}
}

// DefaultStallTimeout is how long a load waits for a server that answers
// nothing before it fails.
const DefaultStallTimeout = 60 * time.Second

// Progress is a snapshot of a running load.
type Progress struct {
	Elapsed    time.Duration
	Bytes      int64 // read from the files on disk
	TotalBytes int64
	Statements int64
	Rows       int64
	Table      string // the table whose data was read last
	Phase      string // schema+data, post-data, stats
	Done       bool
}

// Rate is the input read per second, in MB/s.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Bytes) / 1e6 / p.Elapsed.Seconds()
}

// ETA estimates the time left from the file sizes; 0 when unknown.
func (p Progress) ETA() time.Duration {
	if p.Bytes <= 0 || p.TotalBytes <= p.Bytes {
		return 0
	}
	return time.Duration(float64(p.Elapsed) * float64(p.TotalBytes-p.Bytes) / float64(p.Bytes))
}

// Result is what a load did.
type Result struct {
	Files     []string  `json:"files"`
	Format    string    `json:"format"`
	Flavor    string    `json:"flavor"`
	Databases []string  `json:"databases"`
	Engine    string    `json:"engine,omitempty"`
	Threads   int       `json:"threads"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// Duration is the load itself (without the per-table figures).
	Duration time.Duration `json:"duration_ns"`
	// DurationS is Duration in seconds.
	DurationS  float64 `json:"duration_s"`
	Bytes      int64   `json:"bytes"`
	Statements int64   `json:"statements"`
	Rows       int64   `json:"rows"`
	// LoadDataStatements counts the INSERTs sent as LOAD DATA LOCAL.
	LoadDataStatements int64 `json:"load_data_statements,omitempty"`
	// Tables are per-table figures, in load order.
	Tables []Table `json:"tables"`
	// ErrorCount counts failed statements (--continue-on-error); Errors
	// lists them.
	ErrorCount  int              `json:"error_count"`
	Errors      []StatementError `json:"errors,omitempty"`
	Interrupted bool             `json:"interrupted,omitempty"`
	// AccountStatementsSkipped counts the account and privilege
	// statements not run (GRANT, REVOKE, CREATE/ALTER/DROP USER or ROLE,
	// SET PASSWORD, SET ROLE...): a load never changes accounts.
	AccountStatementsSkipped int `json:"account_statements_skipped,omitempty"`
	// AdminStatementsSkipped counts the server administration statements
	// not run (FLUSH, RESET, PURGE, CHANGE MASTER...): a load never
	// administers the server.
	AdminStatementsSkipped int `json:"admin_statements_skipped,omitempty"`
	// Notes are adjustments made (definers removed, statements skipped,
	// statements the sandbox's admin ran).
	Notes []string `json:"notes,omitempty"`
}

// Table is one loaded table.
type Table struct {
	Database string `json:"database"`
	Name     string `json:"name"`
	// Sent counts the rows the dump's data statements sent (-1: some
	// statement did not say, see dump.SentRows).
	Sent int64 `json:"sent"`
	// Loaded counts the rows the dump's data statements inserted (as the
	// server reported them; rows of a transaction that did not commit
	// are not counted).
	Loaded int64 `json:"loaded"`
	// Rows is the table's row count after the load (-1 if not read).
	Rows       int64  `json:"rows"`
	DataBytes  int64  `json:"data_bytes"`
	IndexBytes int64  `json:"index_bytes"`
	Engine     string `json:"engine,omitempty"`
	Checksum   string `json:"checksum,omitempty"`
}

// StatementError is a statement the server refused.
type StatementError struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Code is the server's error code ("1064", "42P01").
	Code      string `json:"code,omitempty"`
	Error     string `json:"error"`
	Statement string `json:"statement"`
}

// Where is "file:line".
func (e StatementError) Where() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Error is a statement that stopped the load.
type Error struct {
	StatementError
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (statement: %s)", e.Where(), e.StatementError.Error, e.Statement)
}

func (e *Error) Unwrap() error { return e.Err }

// IsBadInput reports whether err is the dump's fault (unreadable,
// unsplittable, or a table the engine cannot hold) rather than the
// server's.
func IsBadInput(err error) bool {
	var bi *dump.BadInputError
	var se *dump.SyntaxError
	var ee *dump.EngineError
	return errors.As(err, &bi) || errors.As(err, &se) || errors.As(err, &ee)
}

// maxListed bounds Result.Errors.
const maxListed = 10000

// Load loads o.Files into env's server. env.Target says where; the
// loader opens its own connections (env.DB is used for nothing but may
// be the caller's). On error the Result so far is returned with it; an
// interrupted load (ctx ended) has Result.Interrupted set.
func Load(ctx context.Context, env workload.Env, o Options) (*Result, error) {
	if o.Threads < 1 {
		o.Threads = 1
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	d, err := dump.OpenAs(o.Files, o.Format)
	if err != nil {
		return nil, err
	}
	d.FollowIncludes = o.FollowIncludes
	t := env.Target
	// Version comments are read as this server reads them.
	d.Server = dumpServer(t)
	if d.Syntax != SyntaxOf(t) {
		return nil, &dump.BadInputError{Msg: fmt.Sprintf("%s is a %s dump; the target is %s", o.Files[0], d.Format, t.Flavor)}
	}
	dl, err := newDialer(t)
	if err != nil {
		return nil, err
	}
	defer dl.close()
	useLD, err := loadDataMode(o, t)
	if err != nil {
		return nil, err
	}
	bulk, err := bulkMode(o, t)
	if err != nil {
		return nil, &dump.BadInputError{Msg: err.Error()}
	}
	l := &loader{o: o, d: d, dl: dl, t: t, tables: map[string]*tableCount{}, bulk: bulk}
	l.res = &Result{Files: o.Files, Format: string(d.Format), Flavor: string(t.Flavor), Threads: o.Threads,
		StartedAt: time.Now().UTC(), Engine: o.Rewrite.Engine}
	if d.Script {
		l.res.Threads = 1
		l.res.Notes = append(l.res.Notes, fmt.Sprintf("a plain %s script: loaded in order on one connection, as %s runs it", d.Format, d.Format))
	}
	if o.Rewrite.Engine != "" || len(o.Rewrite.EngineMap) > 0 {
		if d.Syntax == dump.Postgres {
			return nil, &dump.BadInputError{Msg: "--engine and --engine-map apply to MySQL-family dumps only"}
		}
	}
	// The watchdog covers the whole load, up to the per-table figures.
	outer := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopWatch := l.watch(ctx, cancel)
	if useLD {
		l.loadData.Store(true)
		l.checkLocalInfile(ctx)
	}
	err = l.run(ctx)
	if n := l.res.AdminStatementsSkipped; n > 0 {
		l.res.Notes = append(l.res.Notes, fmt.Sprintf("%d server administration statements skipped (%s the first: FLUSH, RESET, PURGE, replication...): a load does not administer the server", n, l.firstAdmin))
	}
	if n := l.res.AccountStatementsSkipped; n > 0 {
		l.res.Notes = append(l.res.Notes, fmt.Sprintf("%d account statements skipped (%s the first): a load does not change accounts or privileges", n, l.firstAccount))
	}
	l.res.LoadDataStatements = l.loadDataStatements.Load()
	l.res.EndedAt = time.Now().UTC()
	l.res.Duration = l.res.EndedAt.Sub(l.res.StartedAt)
	l.res.DurationS = l.res.Duration.Seconds()
	l.res.Bytes = l.counter.Load()
	l.res.Statements = l.statements.Load()
	l.res.Rows = l.rows.Load()
	var lost *LostError
	switch {
	case outer.Err() != nil:
		l.res.Interrupted = true
		err = outer.Err()
	case errors.As(context.Cause(ctx), &lost):
		err = lost
	case isConnLost(err) && !errors.As(err, &lost):
		err = &LostError{Err: err}
	}
	for _, k := range l.order {
		tc := l.tables[k]
		sent := tc.sent.Load()
		if tc.unknown.Load() {
			sent = -1
		}
		l.res.Tables = append(l.res.Tables, Table{Database: tc.db, Name: tc.name, Sent: sent, Loaded: tc.rows.Load(), Rows: -1})
	}
	l.res.Databases = l.databases
	if err == nil || !l.res.Interrupted && !errors.As(err, &lost) {
		// Account statements are skipped, but a routine or dynamic SQL
		// (EXECUTE IMMEDIATE, DO) may still change the loading account's
		// own password: say so rather than leave later runs failing.
		if aerr := l.checkAccount(ctx); aerr != nil && err == nil {
			err = aerr
		} else if aerr != nil {
			err = fmt.Errorf("%w; %w", err, aerr)
		}
	}
	if err == nil && !o.NoStats {
		l.report(ctx, "stats")
		serr := error(nil)
		if o.NoChecksum {
			serr = l.stats(ctx)
		} else if serr = l.checksums(ctx); serr != nil {
			serr = errors.Join(serr, l.stats(ctx))
		}
		if serr != nil {
			l.res.Notes = append(l.res.Notes, "per-table figures: "+oneLine(serr.Error()))
		}
	}
	stopWatch()
	if err == nil && errors.As(context.Cause(ctx), &lost) {
		err = lost // stalled while reading the per-table figures
	}
	if err == nil {
		err = l.checkRows()
	}
	l.report(ctx, "done")
	return l.res, err
}

// loader is one load in progress.
type loader struct {
	o  Options
	d  *dump.Dump
	dl *dialer
	t  target.Target

	res        *Result
	counter    dump.Counter
	statements atomic.Int64
	rows       atomic.Int64
	current    atomic.Value // string: the table being read
	// bulk loads each table's data in one transaction (bulk.go).
	bulk bool
	// schemaGen counts the schema and post-data statements run: cached
	// column types older than it are read again.
	schemaGen atomic.Int64
	// loadData is set while the LOAD DATA fast path is on.
	loadData           atomic.Bool
	loadDataStatements atomic.Int64

	mu        sync.Mutex // guards tables, order, databases, res.Errors
	tables    map[string]*tableCount
	order     []string
	databases []string
	phase     string
	firstErr  error
	// firstAccount locates the first account statement skipped,
	// firstAdmin the first server administration statement.
	firstAccount, firstAdmin string
	// noted are the keys of notes given once (noteOnce).
	noted map[string]bool
	// pgSettings caches which pg_dump session settings the server has
	// (pgSkipSetting).
	pgSettings map[string]bool
	// refusedCreates are the tables whose CREATE TABLE the server
	// refused (name: file:line), for the errors of their later
	// statements (mysqlversion.go).
	refusedCreates sync.Map
}

type tableCount struct {
	db, name string
	rows     atomic.Int64
	// sent counts the rows the data statements sent; unknown is set when
	// one of them did not say (dump.SentRows).
	sent    atomic.Int64
	unknown atomic.Bool
}

// send counts n rows sent (n < 0: unknown).
func (tc *tableCount) send(n int64) {
	if n < 0 {
		tc.unknown.Store(true)
		return
	}
	tc.sent.Add(n)
}

// table returns the counter of db.name, adding it in order. PostgreSQL
// names in the default schema lose their "public." (a dump may qualify
// a table in one statement and not in another).
func (l *loader) table(db, name string) *tableCount {
	name = l.tableName(name)
	k := db + "\x00" + name
	l.mu.Lock()
	defer l.mu.Unlock()
	tc := l.tables[k]
	if tc == nil {
		tc = &tableCount{db: db, name: name}
		l.tables[k] = tc
		l.order = append(l.order, k)
	}
	return tc
}

func (l *loader) addDatabase(db string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.databases {
		if x == db {
			return
		}
	}
	l.databases = append(l.databases, db)
}

// fail records a failed statement; it returns the error that stops the
// load, or nil with ContinueOnError.
func (l *loader) fail(st *dump.Statement, err error) error {
	code, isServer := serverError(err)
	if isConnLost(err) {
		return &LostError{Where: printable(st.Where()), Err: err}
	}
	se := StatementError{File: printable(st.File), Line: st.Line, Code: code, Error: maskError(oneLine(err.Error()), st.SQL), Statement: excerpt(st.SQL)}
	if code == "1050" || code == "42P07" {
		se.Error += " (left by an earlier load? load again with --drop-existing)"
	}
	if isServer && l.syntax() == dump.Postgres && pgOlderServerCode(code) {
		if h := pgFeatureHint(st.SQL, l.t.Version); h != "" {
			se.Error += " (" + h + ")"
		}
	}
	if isServer && l.syntax() == dump.MySQL {
		if h := mysqlFeatureHint(st.SQL, code, l.t.Flavor, l.t.Version); h != "" {
			se.Error += " (" + h + ")"
		}
		se.Error += l.refusedCreate(st, code)
	}
	if !isServer {
		return &Error{StatementError: se, Err: err}
	}
	// Every statement the server refused is counted and listed, the one
	// that stops the load too.
	l.mu.Lock()
	defer l.mu.Unlock()
	l.res.ErrorCount++
	if len(l.res.Errors) < maxListed {
		l.res.Errors = append(l.res.Errors, se)
	}
	if !l.o.ContinueOnError {
		return &Error{StatementError: se, Err: err}
	}
	return nil
}

// excerpt shortens a statement for an error message, passwords masked
// and control characters escaped.
func excerpt(s string) string {
	s = oneLine(maskStatement(s))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// oneLine joins s's words with single spaces and escapes what is left
// of control characters (see printable).
func oneLine(s string) string {
	return printable(strings.Join(strings.Fields(s), " "))
}

// report calls the Progress callback.
func (l *loader) report(ctx context.Context, phase string) {
	if l.o.Progress == nil {
		return
	}
	cur, _ := l.current.Load().(string)
	l.o.Progress(Progress{
		Elapsed: time.Since(l.res.StartedAt), Bytes: l.counter.Load(), TotalBytes: l.d.Size,
		Statements: l.statements.Load(), Rows: l.rows.Load(), Table: cur, Phase: phase, Done: phase == "done",
	})
}

// isEOF reports the end of a part.
func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// tableName is a table's name as the loader counts it (see table).
func (l *loader) tableName(name string) string {
	return strings.TrimPrefix(name, l.flavor().SchemaPrefix())
}

// RowsLostError is a load that ran to its end but lost rows: a table
// got fewer rows than the dump sent (statements the server refused,
// duplicates ignored, transactions rolled back), or holds fewer than it
// got. Such a load is never complete.
type RowsLostError struct {
	// Tables describe each table: "NAME: N rows sent, M loaded".
	Tables []string
}

func (e *RowsLostError) Error() string {
	return "rows lost: " + strings.Join(e.Tables, "; ")
}

// checkRows compares, per table, the rows loaded with the rows sent and,
// where the per-table figures were read with checksums, with the rows
// the table holds.
func (l *loader) checkRows() error {
	var lost []string
	for _, t := range l.res.Tables {
		name := printable(t.Name)
		if len(l.res.Databases) > 1 {
			name = printable(t.Database) + "." + name
		}
		switch {
		case t.Sent >= 0 && t.Loaded < t.Sent:
			lost = append(lost, fmt.Sprintf("%s: %d rows sent, %d loaded", name, t.Sent, t.Loaded))
		case t.Sent >= 0 && t.Rows >= 0 && !l.d.Script && t.Rows < min(t.Loaded, t.Sent):
			lost = append(lost, fmt.Sprintf("%s: %d rows sent and loaded, %d in the table after the load", name, min(t.Loaded, t.Sent), t.Rows))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return &RowsLostError{Tables: lost}
}
