package dumpload

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/dialect"
)

// job is one unit of data work: a statement, or a whole data file.
type job struct {
	st   dump.Statement
	part *dump.Part
	db   string
	// log is the session statements in effect (a prefix of the dump's
	// append-only session log); a connection replays what it lacks.
	log []string
	tc  *tableCount
	// lane, if set, makes this job a table transaction (bulk.go).
	lane *lane
	// inTx: the statement runs inside a table transaction.
	inTx bool
}

// session is a connection with the session log it has replayed.
type session struct {
	c       conn
	applied int
	// ldCharset and ldOK cache sessionCharset while ldApplied is
	// applied+1 (0: not read).
	ldCharset string
	ldOK      bool
	ldStrict  bool
	ldApplied int
}

// catchUp replays the session statements c has not run yet.
func (s *session) catchUp(ctx context.Context, l *loader, log []string) error {
	for s.applied < len(log) {
		q := log[s.applied]
		s.applied++
		if _, err := s.c.exec(ctx, q); err != nil {
			return fmt.Errorf("replay session setting %q: %w", excerpt(q), err)
		}
	}
	return nil
}

// use switches s to database db; a PostgreSQL session reconnects, so it
// replays the session log again (up to log, if given).
func (s *session) use(ctx context.Context, db string, log []string) error {
	if db == "" {
		return nil
	}
	fresh, err := s.c.use(ctx, db)
	if err != nil {
		return err
	}
	if fresh {
		s.applied = 0
		if log != nil {
			return s.catchUp(ctx, nil, log)
		}
	}
	return nil
}

// run loads every part: in-order statements on the schema connection,
// data over the worker pool, post-data at the end.
func (l *loader) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tickDone := make(chan struct{})
	var tickWG sync.WaitGroup
	tickWG.Add(1)
	go func() {
		defer tickWG.Done()
		t := time.NewTicker(l.o.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-tickDone:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				l.report(ctx, l.getPhase())
			}
		}
	}()
	defer func() { close(tickDone); tickWG.Wait() }()
	l.setPhase("schema+data")

	start := l.o.Database
	if start == "" {
		start = l.t.Database
	} else if err := l.ensureDatabase(ctx, start, "", "--database", nil); err != nil {
		return err
	}
	sc, err := l.dl.dial(ctx, start)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	schema := &session{c: sc}
	defer func() { schema.c.close() }()

	p := newPool(ctx, cancel, l)
	st := &streamState{cur: start, schemaDB: start}
	var runErr error
	for i := range l.d.Parts {
		part := &l.d.Parts[i]
		if part.Phase == dump.DataPhase {
			db := part.Database
			if l.o.Database != "" || db == "" {
				db = start
			}
			if db != "" {
				l.addDatabase(db)
			}
			if !p.submit(job{part: part, db: db}) {
				break
			}
			continue
		}
		if runErr = l.stream(ctx, part, schema, p, st); runErr != nil {
			break
		}
	}
	if perr := p.wait(); runErr == nil {
		runErr = perr
	}
	if runErr == nil && ctx.Err() != nil {
		runErr = context.Cause(ctx)
	}
	if runErr != nil {
		return runErr
	}
	// Index builds of different tables in parallel, then the rest of
	// the post-data in order on a fresh connection, replaying the session
	// log in step.
	l.setPhase("post-data")
	if len(st.indexes) > 0 {
		ip := newPool(ctx, cancel, l)
		for _, j := range st.indexes {
			if !ip.submit(j) {
				break
			}
		}
		if err := ip.wait(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
	if len(st.post) == 0 {
		return nil
	}
	pc, err := l.dl.dial(ctx, start)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	post := &session{c: pc}
	defer post.c.close()
	for i := range st.post {
		j := &st.post[i]
		if err := l.execIn(ctx, post, j); err != nil {
			return err
		}
	}
	return nil
}

// streamState carries what spans the parts of one load.
type streamState struct {
	log []string // session statements, in dump order
	cur string   // current database
	// schemaDB is the schema connection's database.
	schemaDB string
	post     []job
	// indexes are post-data index builds (one table each).
	indexes []job
	// lane is the open table transaction's queue (bulk.go), or the
	// dump's own open transaction under autocommit=0 (txn.go).
	lane *lane
	// inTx: the dump opened a transaction (BEGIN, START TRANSACTION):
	// its statements run in order on the schema connection until it
	// ends.
	inTx bool
	// fk: a foreign key was declared before the data (in dump order).
	fk bool
	// settingsAt is the length of log when acOff and fkOff were read
	// from it (0: not yet).
	settingsAt   int
	acOff, fkOff bool
	// drops are the dump's DROP DATABASE statements (name: file:line)
	// kept for --drop-existing until the dump creates the database again.
	drops map[string]string
	// own are the databases the dump creates or uses (qualify.go).
	own map[string]bool
}

// stream reads one part and runs its statements: in order on the schema
// connection, data over the pool, post-data deferred.
func (l *loader) stream(ctx context.Context, part *dump.Part, schema *session, p *pool, ss *streamState) error {
	r, err := l.d.OpenPart(ctx, *part, &l.counter)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			r.Close()
		}
	}()
	// A mydumper file names its database instead of saying USE; the
	// schema connection switches before the file's first schema
	// statement (the database may be created by the file itself).
	if l.o.Database == "" && part.Database != "" && part.Phase != dump.Mixed {
		ss.cur = part.Database
	}
	ss.noteDumpDatabase(part.Database)
	sm := &streamer{l: l, ctx: ctx, schema: schema, p: p, ss: ss, mysql: l.d.Syntax == dump.MySQL}
	// A table transaction ends at the first statement that is not its
	// table's data, and with the part; the dump's own open transaction
	// ends with the part as the client's session does: rolled back.
	defer ss.endPart()
	for {
		if ctx.Err() != nil {
			return nil
		}
		st, err := r.Next()
		if isEOF(err) {
			break
		}
		if err != nil {
			return err
		}
		if sm.mysql {
			if err := l.o.Rewrite.Apply(&st); err != nil {
				return err
			}
			if err := l.qualify(ss, &st); err != nil {
				return err
			}
		}
		if st.Trigger && part.Phase == dump.PostPhase {
			// A trigger file of a directory dump (mydumper) runs after
			// all the data, which other connections may still load, as
			// myloader does: not in dump order, which has none across files.
			st.Kind = dump.PostData
		}
		sm.boundary(&st)
		stop, err := sm.statement(&st)
		if err != nil || stop {
			return err
		}
	}
	closed = true
	return r.Close()
}

// streamer runs the statements of one part of the dump, in order, on the
// schema connection or through the data connections' pool.
type streamer struct {
	l      *loader
	ctx    context.Context
	schema *session
	p      *pool
	ss     *streamState
	mysql  bool
}

// boundary ends what st ends: a table transaction, or the dump's own
// transaction at DDL (MySQL commits implicitly), which must not wait on
// the data connections' locks.
func (sm *streamer) boundary(st *dump.Statement) {
	ss := sm.ss
	switch {
	case st.Kind == dump.Skip || st.Kind == dump.Data || st.Kind == dump.DropDatabase:
	case st.Kind == dump.Session && ss.lane != nil && ss.lane.txn:
		// The dump's transaction goes on across SET statements.
	case st.Kind == dump.Txn:
		// handled by statement
	case st.Kind == dump.PostData && !sm.l.d.Script:
		// Deferred: the dump's transaction goes on (ENABLE KEYS
		// inside it); a table transaction ends.
		if ss.lane != nil && !ss.lane.txn {
			ss.closeLane()
		}
	default:
		ss.closeLane()
		sm.p.waitTxns()
	}
}

// statement runs or queues st. stop: the load is over (the pool stopped
// taking work).
func (sm *streamer) statement(st *dump.Statement) (stop bool, err error) {
	l, ctx, ss := sm.l, sm.ctx, sm.ss
	if l.d.Script && (st.Kind == dump.Data || st.Kind == dump.PostData) {
		// A plain script runs in order on one connection.
		return false, l.inOrder(ctx, sm.schema, sm.p, ss, st)
	}
	switch st.Kind {
	case dump.DropDatabase:
		if l.o.DropExisting && l.o.Database == "" {
			// Run only if the dump creates the database again.
			if ss.drops == nil {
				ss.drops = map[string]string{}
			}
			ss.drops[st.Name] = st.Where()
			return false, nil
		}
		l.skipDropDatabase(st)
	case dump.Txn:
		return false, l.txn(ctx, sm.schema, sm.p, ss, st)
	case dump.Skip:
		switch {
		case st.Account:
			l.skipAccount(st)
		case st.Admin:
			l.skipAdmin(st)
		}
	case dump.Session:
		if l.syntax() == dump.Postgres {
			skip, err := l.pgSkipSetting(ctx, sm.schema, st)
			if err != nil {
				return true, l.fail(st, err)
			}
			if skip {
				return false, nil
			}
		}
		ss.log = append(ss.log, st.SQL)
		if ss.lane != nil && ss.lane.txn && !ss.autocommitOff() {
			ss.closeLane() // SET autocommit=1 commits
		}
		if err := sm.schema.catchUp(ctx, l, ss.log); err != nil {
			return true, l.fail(st, err) // the session state is unknown: the part ends
		}
		l.statements.Add(1)
	case dump.Database:
		return false, sm.database(st)
	case dump.Use:
		if l.o.Database != "" {
			return false, nil
		}
		ss.cur = st.Name
		if err := sm.schema.use(ctx, st.Name, ss.log); err != nil {
			return false, l.fail(st, err)
		}
		ss.schemaDB = st.Name
	case dump.Data:
		return sm.data(st)
	case dump.PostData:
		j := job{st: *st, db: ss.cur, log: ss.log[:len(ss.log):len(ss.log)]}
		if st.IndexBuild {
			ss.indexes = append(ss.indexes, j)
		} else {
			ss.post = append(ss.post, j)
		}
	case dump.Schema:
		return false, sm.schemaStatement(st)
	}
	return false, nil
}

// database creates the dump's database (CREATE DATABASE), dropping it
// first when the dump dropped it and --drop-existing says so.
func (sm *streamer) database(st *dump.Statement) error {
	l, ss := sm.l, sm.ss
	if l.o.Database != "" {
		return nil
	}
	if where, ok := ss.drops[st.Name]; ok {
		delete(ss.drops, st.Name)
		if err := l.dropDatabase(sm.ctx, st.Name, where); err != nil {
			return err
		}
	}
	if err := l.ensureDatabase(sm.ctx, st.Name, st.SQL, st.Where(), st.DatabaseOptions); err != nil {
		var bi *dump.BadInputError
		if errors.As(err, &bi) {
			return err
		}
		if e := l.fail(st, err); e != nil {
			return e
		}
	}
	l.statements.Add(1)
	return nil
}

// data sends a table's rows: in dump order when the dump's transaction or
// foreign keys ask, as part of the dump's own transaction (autocommit=0),
// through the bulk path, or to the pool.
func (sm *streamer) data(st *dump.Statement) (stop bool, err error) {
	l, ss, p := sm.l, sm.ss, sm.p
	tc := l.table(ss.cur, st.Table)
	l.current.Store(st.Table)
	if ss.cur != "" {
		l.addDatabase(ss.cur)
	}
	j := job{st: *st, db: ss.cur, log: ss.log[:len(ss.log):len(ss.log)], tc: tc}
	switch {
	case ss.inTx || l.dataInOrder(ss):
		return false, l.inOrder(sm.ctx, sm.schema, p, ss, st)
	case sm.mysql && ss.autocommitOff():
		return !l.txnData(p, ss, j), nil
	}
	if p.inTxn(tc.key()) {
		p.drain(tc.key()) // its rows in a transaction not yet committed come first
	}
	if l.bulk {
		return !l.bulkData(p, ss, j), nil
	}
	ss.closeLane()
	p.pending(tc.key(), 1)
	return !p.submit(j), nil
}

// schemaStatement runs a schema statement on the schema connection, once
// the data queued for its table is in; with --defer-indexes a MySQL
// CREATE TABLE's secondary indexes are split off to be built after the
// data.
func (sm *streamer) schemaStatement(st *dump.Statement) error {
	l, ctx, ss, schema := sm.l, sm.ctx, sm.ss, sm.schema
	if st.Meta {
		return &dump.BadInputError{Msg: fmt.Sprintf("%s: psql meta-command \\%s is not supported (dbarena runs SQL only)", st.Where(), st.SQL)}
	}
	if st.Creates && sm.mysql && l.o.DeferIndexes && !l.d.Script {
		if alter := dump.SplitIndexes(st); alter != "" {
			ix := *st
			ix.SQL, ix.Kind, ix.IndexBuild, ix.Creates = alter, dump.PostData, true, false
			ss.indexes = append(ss.indexes, job{st: ix, db: ss.cur, log: ss.log[:len(ss.log):len(ss.log)]})
		}
	}
	if st.Table != "" {
		if st.Creates {
			l.table(ss.cur, st.Table)
			if ss.cur != "" {
				l.addDatabase(ss.cur)
			}
		}
		// Wait for the table's queued data before changing it.
		sm.p.drain(tableKey(ss.cur, l.tableName(st.Table)))
	}
	if st.ForeignKey {
		ss.fk = true
	}
	if err := schema.catchUp(ctx, l, ss.log); err != nil {
		return err
	}
	if ss.cur != "" && ss.cur != ss.schemaDB {
		if err := schema.use(ctx, ss.cur, ss.log); err != nil {
			return l.fail(st, fmt.Errorf("use database %s: %w", ss.cur, err))
		}
		ss.schemaDB = ss.cur
	}
	if st.Creates && st.TableRef != "" && l.o.DropExisting {
		drop := "DROP TABLE IF EXISTS " + st.TableRef
		if !sm.mysql {
			drop += " CASCADE"
		}
		if _, err := schema.c.exec(ctx, drop); err != nil {
			if e := l.fail(st, fmt.Errorf("--drop-existing: %w", err)); e != nil {
				return e
			}
		}
	}
	_, err := schema.c.exec(ctx, st.SQL)
	// After the statement: column types read before it are stale.
	l.schemaGen.Add(1)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if e := l.fail(st, err); e != nil {
			return e
		}
	}
	l.statements.Add(1)
	return nil
}

// execIn runs a deferred or data statement on s in its database and
// session state.
func (l *loader) execIn(ctx context.Context, s *session, j *job) error {
	if err := s.use(ctx, j.db, nil); err != nil {
		return fmt.Errorf("%s: use database %s: %w", j.st.Where(), j.db, err)
	}
	if err := s.catchUp(ctx, l, j.log); err != nil {
		return l.fail(&j.st, err)
	}
	var n int64
	var err error
	if j.st.Kind == dump.Data && j.tc != nil {
		j.tc.send(dump.SentRows(&j.st, l.syntax()))
	}
	// A statement chosen as a deadlock victim (parallel data of one
	// table, InnoDB) was rolled back whole: run it again. Not inside a
	// transaction, which the deadlock rolled back whole.
	retry := func() bool { return !j.inTx && !autocommitOff(j.log) }
	for try := 0; try == 0 || (isDeadlock(err) && try < maxDeadlockRetries && ctx.Err() == nil && retry()); try++ {
		var done bool
		n, done, err = l.tryLoadData(ctx, s, j)
		switch {
		case done:
		case j.st.Copy != nil:
			n, err = s.c.copyIn(ctx, j.st.SQL, j.st.Copy)
		default:
			n, err = s.c.exec(ctx, j.st.SQL)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return l.fail(&j.st, err)
	}
	l.statements.Add(1)
	if j.st.Kind == dump.Data {
		l.rows.Add(n)
		if j.tc != nil {
			j.tc.rows.Add(n)
		}
	}
	return nil
}

// runFile loads a whole data file (mydumper) on s.
func (l *loader) runFile(ctx context.Context, s *session, j *job) error {
	r, err := l.d.OpenPart(ctx, *j.part, &l.counter)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := s.use(ctx, j.db, nil); err != nil {
		return fmt.Errorf("%s: use database %s: %w", r.Name(), j.db, err)
	}
	tc := l.table(j.db, j.part.Table)
	l.current.Store(j.part.Table)
	for ctx.Err() == nil {
		st, err := r.Next()
		if isEOF(err) {
			return nil
		}
		if err != nil {
			return err
		}
		switch st.Kind {
		case dump.Skip, dump.Database, dump.Use:
			switch {
			case st.Account:
				l.skipAccount(&st)
			case st.Admin:
				l.skipAdmin(&st)
			}
			continue
		case dump.DropDatabase:
			l.skipDropDatabase(&st)
			continue
		}
		if st.Kind == dump.Data && st.Table != "" && st.Table != tc.name {
			tc = l.table(j.db, st.Table)
		}
		sj := job{st: st, db: j.db, tc: tc}
		if err := l.execIn(ctx, s, &sj); err != nil {
			return err
		}
	}
	return nil
}

func (tc *tableCount) key() string { return tableKey(tc.db, tc.name) }

func tableKey(db, name string) string { return db + "\x00" + name }

func (l *loader) setPhase(p string) {
	l.mu.Lock()
	l.phase = p
	l.mu.Unlock()
}

func (l *loader) getPhase() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase
}

// ensureDatabase makes sure database name exists for the loading account.
// The loading account runs create (the dump's own CREATE DATABASE, or a
// plain one when create is ""); where it may not, the sandbox's admin
// creates the database with a fixed statement built from the validated
// name and grants it to (PostgreSQL: makes it owned by) the loading
// account. The dump's text never runs as the admin. where locates the
// name for errors (file:line, or the --database flag).
func (l *loader) ensureDatabase(ctx context.Context, name, create, where string, opts map[string]string) error {
	fl := l.flavor()
	if err := checkDatabaseName(name, fl); err != nil {
		return &dump.BadInputError{Msg: where + ": " + err.Error()}
	}
	if create == "" {
		create = fl.CreateDatabase(name)
	}
	c, err := l.dl.dial(ctx, "")
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.close()
	if l.syntax() == dump.Postgres {
		exists, ours, err := pgDatabaseOwned(ctx, c, name)
		switch {
		case err != nil:
			return err
		case exists && !ours:
			return &dump.BadInputError{Msg: fmt.Sprintf("%s: database %s exists and is neither owned by nor open to %s: dbarena does not hand it over; load into another one with --database NAME",
				where, quoteText(name), l.t.User)}
		case exists:
			return nil
		}
	}
	_, err = c.exec(ctx, create)
	if err == nil {
		return nil
	}
	code, _ := serverError(err)
	switch code {
	case "1007", "42P04": // exists
		return nil
	case "1044", "1045", "1227", "42501": // access denied
	default:
		return err
	}
	if l.o.Admin == nil {
		return fmt.Errorf("create database %s: %w (create it first, or load into an existing one with --database)", name, err)
	}
	return l.adminCreate(ctx, c, name, where, opts)
}

func checkDatabaseName(name string, fl dialect.Dialect) error {
	for _, r := range fl.SystemDatabases() {
		if strings.EqualFold(name, r) {
			return fmt.Errorf("database %s is a system database: dbarena does not create, grant or load into it; load into another one with --database NAME", quoteText(name))
		}
	}
	max := fl.MaxNameLen()
	switch {
	case name == "":
		return errors.New("empty database name")
	case len(name) > max:
		return fmt.Errorf("database name %s is longer than %d bytes", quoteText(name), max)
	case strings.TrimRight(name, " ") != name:
		return fmt.Errorf("database name %s ends with a space", quoteText(name))
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || c == '%' || c == '\\' || c == '/' || c == '.' {
			return fmt.Errorf("database name %s: dbarena creates databases whose names have no control characters, %%, \\, / or .", quoteText(name))
		}
	}
	return nil
}

// pgDatabaseOwned looks name up in pg_database: whether it exists and
// whether the loading account owns it or may create schemas in it.
func pgDatabaseOwned(ctx context.Context, c conn, name string) (exists, ours bool, err error) {
	pc := c.(*pgConn)
	err = pc.c.QueryRow(ctx, `SELECT true, pg_get_userbyid(datdba) = current_user OR has_database_privilege(datname, 'CREATE')
		FROM pg_database WHERE datname = $1`, name).Scan(&exists, &ours)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return exists, ours, err
}

// adminCreate creates database name as Admin with fixed statements (the
// name quoted, nothing of the dump's text) and hands it to the loading
// account; each statement is listed in the notes. A database that exists
// already is not the loading account's (it could not create it): refused.
func (l *loader) adminCreate(ctx context.Context, c conn, name, where string, opts map[string]string) error {
	adl, err := newDialer(*l.o.Admin)
	if err != nil {
		return err
	}
	defer adl.close()
	ac, err := adl.dial(ctx, "")
	if err != nil {
		return fmt.Errorf("connect as the sandbox's admin: %w", err)
	}
	defer ac.close()
	exists := func(err error) error {
		if code, _ := serverError(err); code == "1007" || code == "42P04" {
			return &dump.BadInputError{Msg: fmt.Sprintf("%s: database %s exists and is not open to the loading account: dbarena does not grant it; load into another one with --database NAME",
				where, quoteText(name))}
		}
		return fmt.Errorf("create database %s as admin: %w", name, err)
	}
	if l.syntax() == dump.MySQL {
		var who string
		if err := c.(*myConn).c.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&who); err != nil {
			return err
		}
		user, host, ok := strings.Cut(who, "@")
		if !ok {
			return fmt.Errorf("unexpected CURRENT_USER() %q", who)
		}
		create, err := l.adminExec(ctx, ac, "CREATE DATABASE "+quoteMySQL(name), adminOptions(opts, false))
		if err != nil {
			return exists(err)
		}
		// In GRANT, '_' in a database name matches any character.
		grant := "GRANT ALL PRIVILEGES ON " + quoteMySQL(strings.ReplaceAll(name, "_", `\_`)) + ".* TO " + mysqlString(user) + "@" + mysqlString(host)
		if _, err := ac.exec(ctx, grant); err != nil {
			return fmt.Errorf("grant database %s: %w", name, err)
		}
		l.adminNote(create, grant)
		return nil
	}
	create, err := l.adminExec(ctx, ac, "CREATE DATABASE "+quotePG(name)+" OWNER "+quotePG(l.t.User), adminOptions(opts, true))
	if err != nil {
		return exists(err)
	}
	l.adminNote(create)
	return nil
}

// optionWord is what an option value passed to the admin may hold.
var optionWord = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,64}$`)

// adminOptions renders a CREATE DATABASE's options that the admin may
// pass on: character set and collation (MySQL family), encoding and
// locale (PostgreSQL, from template0), each value checked against
// optionWord; others are dropped.
func adminOptions(opts map[string]string, pg bool) string {
	ok := func(k string) (string, bool) {
		v, has := opts[k]
		return v, has && optionWord.MatchString(v)
	}
	var b strings.Builder
	if !pg {
		if v, has := ok("CHARSET"); has && !strings.ContainsAny(v, ".@-") {
			b.WriteString(" CHARACTER SET " + v)
		}
		if v, has := ok("COLLATE"); has && !strings.ContainsAny(v, ".@-") {
			b.WriteString(" COLLATE " + v)
		}
		return b.String()
	}
	if v, has := ok("ENCODING"); has {
		b.WriteString(" ENCODING " + pgString(v))
	}
	if v, has := ok("LOCALE"); has {
		b.WriteString(" LC_COLLATE " + pgString(v) + " LC_CTYPE " + pgString(v))
	} else {
		for _, k := range []string{"LC_COLLATE", "LC_CTYPE"} {
			if v, has := ok(k); has {
				b.WriteString(" " + k + " " + pgString(v))
			}
		}
	}
	if b.Len() > 0 {
		return " TEMPLATE template0" + b.String()
	}
	return ""
}

// adminExec runs base with options as the admin, or base alone when the
// server refuses the options (an unknown character set, collation or
// locale), with a note; it returns the statement run.
func (l *loader) adminExec(ctx context.Context, ac conn, base, options string) (string, error) {
	if options != "" {
		_, err := ac.exec(ctx, base+options)
		if err == nil {
			return base + options, nil
		}
		code, _ := serverError(err)
		if code == "1007" || code == "42P04" {
			return "", err
		}
		l.mu.Lock()
		l.res.Notes = append(l.res.Notes, fmt.Sprintf("database options%s refused (%s): created without them", printable(options), oneLine(err.Error())))
		l.mu.Unlock()
	}
	if _, err := ac.exec(ctx, base); err != nil {
		return "", err
	}
	return base, nil
}

// adminNote lists statements the sandbox's admin ran.
func (l *loader) adminNote(stmts ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range stmts {
		l.res.Notes = append(l.res.Notes, "sandbox admin ran: "+printable(q))
	}
}

func mysqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// pool runs data jobs over Threads connections.
type pool struct {
	l      *loader
	ctx    context.Context
	cancel context.CancelCauseFunc
	jobs   chan job
	wg     sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	queued  map[string]int
	err     error
	started bool
	// laneBytes is the statement text queued for table transactions.
	laneBytes int64
	// txns counts the dump's transactions not yet ended (txn.go);
	// txnTables the tables they hold.
	txns      int
	txnTables map[string]int
}

func newPool(ctx context.Context, cancel context.CancelCauseFunc, l *loader) *pool {
	p := &pool{l: l, ctx: ctx, cancel: cancel, jobs: make(chan job, 2*l.o.Threads), queued: map[string]int{}}
	p.cond = sync.NewCond(&p.mu)
	// Waiters (drain, reserve) wake up when the load stops.
	context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	return p
}

// start launches the workers on first use.
func (p *pool) start() {
	if p.started {
		return
	}
	p.started = true
	for i := 0; i < p.l.o.Threads; i++ {
		p.wg.Add(1)
		go p.worker()
	}
}

func (p *pool) worker() {
	defer p.wg.Done()
	var s *session
	defer func() {
		if s != nil {
			s.c.close()
		}
	}()
	for j := range p.jobs {
		if p.ctx.Err() != nil {
			p.done(&j)
			continue
		}
		if s == nil {
			c, err := p.l.dl.dial(p.ctx, j.db)
			if err != nil {
				p.setErr(fmt.Errorf("connect: %w", err))
				p.done(&j)
				continue
			}
			s = &session{c: c}
		}
		var err error
		if j.lane != nil && j.lane.txn {
			if err = p.l.runTxn(p.ctx, p, s, &j); err != nil {
				s.c.close()
				s = nil
			}
		} else if j.lane != nil {
			if err = p.l.runLane(p.ctx, p, s, &j); err != nil {
				// The session may be inside a transaction.
				s.c.close()
				s = nil
			}
		} else if j.part != nil {
			err = p.l.runFile(p.ctx, s, &j)
		} else {
			err = p.l.execIn(p.ctx, s, &j)
		}
		if err != nil {
			p.setErr(err)
		}
		p.done(&j)
	}
}

func (p *pool) setErr(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
		p.cancel(err)
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

// pending counts queued data of a table.
func (p *pool) pending(key string, n int) {
	p.mu.Lock()
	p.queued[key] += n
	if p.queued[key] <= 0 {
		delete(p.queued, key)
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

func (p *pool) done(j *job) {
	if j.tc != nil && j.part == nil {
		p.pending(j.tc.key(), -1)
	}
}

// drain waits until no data of table key is queued or running.
func (p *pool) drain(key string) {
	p.mu.Lock()
	for p.queued[key] > 0 && p.err == nil && p.ctx.Err() == nil {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

// submit queues a job; false when the load is stopping.
func (p *pool) submit(j job) bool {
	p.start()
	select {
	case p.jobs <- j:
		return true
	case <-p.ctx.Done():
		p.done(&j)
		return false
	}
}

// wait ends the pool and returns the first error.
func (p *pool) wait() error {
	close(p.jobs)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil && !errors.Is(p.err, context.Canceled) {
		return p.err
	}
	return nil
}
