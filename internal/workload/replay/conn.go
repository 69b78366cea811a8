package replay

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// result is what a statement returned: rows, and with record-results an
// order-independent (or, for ordered statements, ordered) checksum of them.
type result struct {
	rows int64
	sum  uint64
}

// conn is one replayed session's connection.
type conn interface {
	// exec runs a statement as text.
	exec(ctx context.Context, q string, res *result, hashRows, ordered bool) error
	// prepare prepares q server-side as name.
	prepare(ctx context.Context, name, q string) error
	// execPrepared runs the prepared statement name (q, prepared now if
	// the session does not hold it; unnamed when name is "") with text
	// parameters.
	execPrepared(ctx context.Context, name, q string, params []*string, res *result, hashRows, ordered bool) error
	// deallocate drops the prepared statement name.
	deallocate(ctx context.Context, name string) error
	close()
}

// pgCapture reports whether a capture of a server of flavor (its
// header's) holds PostgreSQL's SQL, which replays through pgConn.
func pgCapture(flavor string) bool {
	fam, _ := target.FamilyOf(flavor)
	return fam == target.Postgres
}

// dial opens a connection to db (the target's when "") as a new session.
func dial(ctx context.Context, env workload.Env, db string) (conn, error) {
	if env.Dialect.Family() == target.Postgres {
		t := env.Target
		if db != "" {
			t.Database = db
		}
		cfg, err := dialect.PostgresDialect{}.Config(t, dialect.OpenOptions{Sockets: env.Sockets})
		if err != nil {
			return nil, err
		}
		pc, err := pgconn.ConnectConfig(ctx, &cfg.Config)
		if err != nil {
			return nil, err
		}
		return &pgConn{c: pc, prepared: map[string]string{}}, nil
	}
	c, err := env.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	m := &myConn{c: c, stmts: map[string]*sql.Stmt{}, texts: map[string]string{}}
	if db != "" {
		if _, err := c.ExecContext(ctx, "USE "+env.Dialect.QuoteIdent(db)); err != nil {
			m.close()
			return nil, err
		}
	}
	return m, nil
}

// rowHasher sums rows: each row's hash is added (order-independent) or
// folded in order.
type rowHasher struct {
	h       xxhash.Digest
	ordered bool
}

var null, sep = []byte{0xff, 0}, []byte{0}

func (r *rowHasher) row(res *result, cols [][]byte) {
	r.h.Reset()
	for _, c := range cols {
		if c == nil {
			r.h.Write(null) // NULL differs from ''
		} else {
			r.h.Write(c)
		}
		r.h.Write(sep)
	}
	v := r.h.Sum64()
	if r.ordered {
		res.sum = res.sum*1099511628211 + v
	} else {
		res.sum += v
	}
}

// pgConn is a PostgreSQL session on the wire client.
type pgConn struct {
	c        *pgconn.PgConn
	prepared map[string]string // name -> SQL
	hasher   rowHasher
	params   [][]byte
}

func (p *pgConn) read(rr *pgconn.ResultReader, res *result, hashRows, ordered bool) error {
	p.hasher.ordered = ordered
	var n int64
	for rr.NextRow() {
		n++
		if hashRows {
			p.hasher.row(res, rr.Values())
		}
	}
	tag, err := rr.Close()
	if err != nil {
		return err
	}
	if n == 0 {
		n = tag.RowsAffected()
	}
	res.rows += n
	return nil
}

func (p *pgConn) exec(ctx context.Context, q string, res *result, hashRows, ordered bool) error {
	mrr := p.c.Exec(ctx, q)
	var first error
	for mrr.NextResult() {
		if err := p.read(mrr.ResultReader(), res, hashRows, ordered); err != nil && first == nil {
			first = err
		}
	}
	if err := mrr.Close(); err != nil {
		return err
	}
	return first
}

func (p *pgConn) prepare(ctx context.Context, name, q string) error {
	if _, ok := p.prepared[name]; ok {
		if err := p.deallocate(ctx, name); err != nil {
			return err
		}
	}
	if _, err := p.c.Prepare(ctx, name, q, nil); err != nil {
		return err
	}
	p.prepared[name] = q
	return nil
}

func (p *pgConn) execPrepared(ctx context.Context, name, q string, params []*string, res *result, hashRows, ordered bool) error {
	p.params = p.params[:0]
	for _, v := range params {
		if v == nil {
			p.params = append(p.params, nil)
		} else {
			p.params = append(p.params, []byte(*v))
		}
	}
	if name == "" {
		return p.read(p.c.ExecParams(ctx, q, p.params, nil, nil, nil), res, hashRows, ordered)
	}
	if held, ok := p.prepared[name]; !ok || (q != "" && held != q) {
		if q == "" {
			return errNotPrepared
		}
		if err := p.prepare(ctx, name, q); err != nil {
			return err
		}
	}
	return p.read(p.c.ExecPrepared(ctx, name, p.params, nil, nil), res, hashRows, ordered)
}

func (p *pgConn) deallocate(ctx context.Context, name string) error {
	delete(p.prepared, name)
	return p.c.Deallocate(ctx, name)
}

func (p *pgConn) close() { p.c.Close(context.Background()) }

// myConn is a MySQL-family session: a connection of the run's pool, closed
// (not pooled) at the end of the session.
type myConn struct {
	c      *sql.Conn
	stmts  map[string]*sql.Stmt
	texts  map[string]string // name -> SQL
	hasher rowHasher
	dest   []any
	raw    []sql.RawBytes
	cols   [][]byte
	args   []any
}

func (m *myConn) read(rows *sql.Rows, res *result, hashRows, ordered bool) error {
	m.hasher.ordered = ordered
	for {
		if hashRows {
			cols, err := rows.Columns()
			if err != nil {
				rows.Close()
				return err
			}
			if len(m.raw) != len(cols) {
				m.raw = make([]sql.RawBytes, len(cols))
				m.dest = make([]any, len(cols))
				m.cols = make([][]byte, len(cols))
				for i := range m.raw {
					m.dest[i] = &m.raw[i]
				}
			}
		}
		for rows.Next() {
			res.rows++
			if hashRows {
				if err := rows.Scan(m.dest...); err != nil {
					rows.Close()
					return err
				}
				for i, r := range m.raw {
					m.cols[i] = r
				}
				m.hasher.row(res, m.cols)
			}
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// changesRows says whether q is a single INSERT, UPDATE, DELETE, REPLACE
// or LOAD DATA without RETURNING: a statement without a result set, whose
// affected rows the MySQL protocol reports only to an exec (a query's
// empty result would count 0).
func changesRows(q string) bool {
	q = strings.TrimRight(strings.TrimSpace(q), "; \t\r\n")
	for {
		q = strings.TrimLeft(q, " \t\r\n")
		switch {
		case strings.HasPrefix(q, "/*!"), strings.HasPrefix(q, "/*M!"):
			return false // executable comment: read as code, keep it simple
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q, "*/")
			if i < 0 {
				return false
			}
			q = q[i+2:]
			continue
		case strings.HasPrefix(q, "--"), strings.HasPrefix(q, "#"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return false
			}
			q = q[i+1:]
			continue
		}
		break
	}
	i := 0
	for i < len(q) && (q[i] >= 'a' && q[i] <= 'z' || q[i] >= 'A' && q[i] <= 'Z') {
		i++
	}
	switch strings.ToLower(q[:i]) {
	case "insert", "update", "delete", "replace", "load":
	default:
		return false
	}
	if strings.IndexByte(q, ';') >= 0 {
		return false // several statements (or a ';' in a literal): read as a query
	}
	return !strings.Contains(strings.ToLower(q), "returning")
}

// affected adds an exec's affected rows to res.
func affected(r sql.Result, res *result) {
	if n, err := r.RowsAffected(); err == nil && n > 0 {
		res.rows += n
	}
}

func (m *myConn) exec(ctx context.Context, q string, res *result, hashRows, ordered bool) error {
	if changesRows(q) {
		r, err := m.c.ExecContext(ctx, q)
		if err != nil {
			return err
		}
		affected(r, res)
		return nil
	}
	rows, err := m.c.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	return m.read(rows, res, hashRows, ordered)
}

func (m *myConn) prepare(ctx context.Context, name, q string) error {
	if old := m.stmts[name]; old != nil {
		old.Close()
	}
	st, err := m.c.PrepareContext(ctx, q)
	if err != nil {
		delete(m.stmts, name)
		return err
	}
	m.stmts[name] = st
	m.texts[name] = q
	return nil
}

// errNotPrepared says an execute named a statement this session does not hold.
var errNotPrepared = errors.New("not prepared")

func (m *myConn) execPrepared(ctx context.Context, name, q string, params []*string, res *result, hashRows, ordered bool) error {
	st := m.stmts[name]
	if st == nil || (q != "" && m.texts[name] != q) {
		if q == "" {
			return errNotPrepared
		}
		if err := m.prepare(ctx, name, q); err != nil {
			return err
		}
		st = m.stmts[name]
	}
	m.args = m.args[:0]
	for _, v := range params {
		if v == nil {
			m.args = append(m.args, nil)
		} else {
			m.args = append(m.args, *v)
		}
	}
	if changesRows(q) || (q == "" && changesRows(m.texts[name])) {
		r, err := st.ExecContext(ctx, m.args...)
		if err != nil {
			return err
		}
		affected(r, res)
		return nil
	}
	rows, err := st.QueryContext(ctx, m.args...)
	if err != nil {
		return err
	}
	return m.read(rows, res, hashRows, ordered)
}

func (m *myConn) deallocate(_ context.Context, name string) error {
	if st := m.stmts[name]; st != nil {
		delete(m.stmts, name)
		return st.Close()
	}
	return nil
}

func (m *myConn) close() {
	for _, st := range m.stmts {
		st.Close()
	}
	// A new session must get a new connection: this one is closed, not pooled.
	_ = m.c.Raw(func(any) error { return driver.ErrBadConn })
	m.c.Close()
}

// inline substitutes text parameters for the placeholders of q ($n on
// PostgreSQL, ? in order on MySQL) as quoted literals, outside quotes.
func inline(q string, params []*string, pg bool) string {
	lit := func(i int) string {
		if i < 0 || i >= len(params) {
			return "NULL"
		}
		if params[i] == nil {
			return "NULL"
		}
		v := strings.ReplaceAll(*params[i], "'", "''")
		if !pg {
			v = strings.ReplaceAll(v, `\`, `\\`)
		}
		return "'" + v + "'"
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) && q[j] != c {
				if q[j] == '\\' && !pg {
					j++
				}
				j++
			}
			j = min(j, len(q)-1)
			b.WriteString(q[i : j+1])
			i = j
		case pg && c == '$' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			k, _ := strconv.Atoi(q[i+1 : j])
			b.WriteString(lit(k - 1))
			i = j - 1
		case !pg && c == '?':
			b.WriteString(lit(n))
			n++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
