package oltp

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/oltp/sbrand"
)

// blockRows is the granule of the initial data: the generator is reseeded
// at every block from (table, block), so a row's k, c and pad depend only on
// its table and id, whatever the number of loader threads.
const blockRows = 1000

// loadSeed is the base seed of the initial data.
const loadSeed = 0x5b7e57

// chunk is one loader job: rows [from, to] of a table.
type chunk struct {
	table    int
	from, to int64
	// withID lists ids explicitly: always with --auto-inc=off, when a
	// table is split between threads, and when a load resumes.
	withID bool
	// resume: the table was there before this prepare, so a statement of
	// the interrupted one may still commit rows of the chunk; rows already
	// there are skipped instead of failing the load.
	resume bool
}

// planChunks spreads spans over threads like cmd_prepare() does (table i
// to thread (i-1) % threads) and, when there are more threads than spans,
// also splits each span into id ranges aligned on blocks. Spans start on a
// block boundary.
func planChunks(c *Config, spans []span, threads int) []chunk {
	if len(spans) == 0 {
		return nil
	}
	parts := int64(1)
	if threads > len(spans) {
		parts = int64((threads + len(spans) - 1) / len(spans))
	}
	var out []chunk
	for _, s := range spans {
		blocks := (s.to - s.from + blockRows) / blockRows
		p := min(parts, blocks)
		for i := int64(0); i < p; i++ {
			out = append(out, chunk{
				table:  s.table,
				from:   s.from + blocks*i/p*blockRows,
				to:     min(s.from-1+blocks*(i+1)/p*blockRows, s.to),
				withID: !c.AutoInc || p > 1 || !s.fresh,
				resume: !s.fresh,
			})
		}
	}
	return out
}

// freshSpans are the spans of a load into tables 1..c.Tables just created.
func freshSpans(c *Config, rows int64) []span {
	if rows <= 0 {
		return nil
	}
	var out []span
	for t := 1; t <= c.Tables; t++ {
		out = append(out, span{table: t, from: 1, to: rows, fresh: true})
	}
	return out
}

// load is create_table() for every table: CREATE TABLE, multi-row INSERTs of
// sysbench's rows, then the secondary index k_N. It runs on up to threads
// connections at once. Tables an earlier prepare left are kept when whole,
// completed when not (see resume.go), and refused with cleanupHint when
// they were made with other options.
func load(ctx context.Context, env workload.Env, c *Config, rows, threads int, p workload.Progress, cleanupHint string) error {
	if threads < 1 {
		threads = 1
	}
	d := env.Dialect
	infos, err := inspect(ctx, env, c.Tables)
	if err != nil {
		return err
	}
	// Every existing table is checked before anything changes.
	for t := 1; t <= c.Tables; t++ {
		if !infos[t].exists {
			continue
		}
		if why := mismatch(d, c, infos[t]); why != "" {
			return fmt.Errorf("table %s was prepared with other options (%s); run `%s` first, or prepare with the options it was made with", tableName(t), why, cleanupHint)
		}
		if rows == 0 {
			continue
		}
		bigger, err := loadedBeyond(ctx, env.DB, c, t, int64(rows))
		if err != nil {
			return err
		}
		if bigger {
			return fmt.Errorf("table %s was prepared with a --table-size larger than %d; run `%s` first, or prepare with the --table-size it was made with", tableName(t), rows, cleanupHint)
		}
	}
	var spans, partial []span
	var created []int
	for t := 1; t <= c.Tables; t++ {
		ti := infos[t]
		switch {
		case !ti.exists:
			created = append(created, t)
			if rows > 0 {
				spans = append(spans, span{table: t, from: 1, to: int64(rows), fresh: true})
			}
			continue
		case rows == 0:
			continue
		case ti.kIndex || !c.CreateSecondary:
			// The index comes last: with it, the load most likely ended.
			whole, err := blockEndsPresent(ctx, env.DB, t, int64(rows))
			if err != nil {
				return err
			}
			if whole {
				continue
			}
		}
		l, pt, err := missingSpans(ctx, env.DB, d, t, int64(rows))
		if err != nil {
			return err
		}
		spans, partial = append(spans, l...), append(partial, pt...)
	}
	var total int64
	for _, s := range spans {
		total += s.to - s.from + 1
	}
	p.SetTotal(total)

	if err := workload.Parallel(ctx, threads, len(created), func(ctx context.Context, i int) error {
		t := created[i]
		if _, err := env.DB.ExecContext(ctx, createTableSQL(d, c, t)); err != nil {
			return fmt.Errorf("create table %s: %w", tableName(t), err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := workload.Parallel(ctx, threads, len(partial), func(ctx context.Context, i int) error {
		return emptySpan(ctx, env.DB, partial[i])
	}); err != nil {
		return err
	}

	chunks := planChunks(c, spans, threads)
	if err := workload.Parallel(ctx, threads, len(chunks), func(ctx context.Context, i int) error {
		return loadChunk(ctx, env.DB, d, c, chunks[i], int64(rows), p)
	}); err != nil {
		return err
	}

	return workload.Parallel(ctx, threads, c.Tables, func(ctx context.Context, i int) error {
		t := i + 1
		if q := d.SyncSerial(tableName(t), "id"); q != "" && c.AutoInc && chunksWithID(chunks, t) {
			// Rows went in with explicit ids; move the SERIAL sequence past
			// them so that later INSERTs without an id do not collide.
			if _, err := env.DB.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("set the id sequence of %s: %w", tableName(t), err)
			}
		}
		if c.CreateSecondary && !infos[t].kIndex {
			if _, err := env.DB.ExecContext(ctx, createIndexSQL(t)); err != nil {
				// The interrupted prepare's CREATE INDEX may have ended
				// since the catalog was read.
				if now, ierr := inspect(ctx, env, t); ierr == nil && now[t].kIndex {
					return nil
				}
				return fmt.Errorf("create index k_%d: %w", t, err)
			}
		}
		return nil
	})
}

func chunksWithID(chunks []chunk, table int) bool {
	for _, ch := range chunks {
		if ch.table == table && ch.withID {
			return true
		}
	}
	return false
}

// rowGen produces create_table()'s rows: for each row get_c_value(),
// get_pad_value(), then sb_rand(1, table_size) for k, in that order.
type rowGen struct {
	tableSize int64
	table     int
	rand      *sbrand.Rand
	next      int64 // id the generator is positioned at
	c, pad    []byte
	row       []byte
}

func newRowGen(c *Config, table int, tableSize int64) *rowGen {
	return &rowGen{tableSize: tableSize, table: table, rand: c.Rand.New(0),
		c: make([]byte, 0, 128), pad: make([]byte, 0, 64), row: make([]byte, 0, 256)}
}

// gen returns the VALUES tuple of row id, valid until the next call.
func (g *rowGen) gen(id int64, withID bool) []byte {
	if g.next != id || (id-1)%blockRows == 0 {
		// Reseed at the block start and skip forward to id.
		g.rand.Seed(loadSeed ^ int64(g.table)<<40 ^ (id-1)/blockRows)
		for skip := (id - 1) % blockRows; skip > 0; skip-- {
			g.genRow(0, false)
		}
	}
	g.next = id + 1
	return g.genRow(id, withID)
}

func (g *rowGen) genRow(id int64, withID bool) []byte {
	g.c = g.rand.AppendStr(g.c[:0], cTemplate)
	g.pad = g.rand.AppendStr(g.pad[:0], padTemplate)
	k := g.rand.Default(1, g.tableSize)
	g.row = appendRow(g.row[:0], id, withID, k, g.c, g.pad)
	return g.row
}

// loadChunk writes one chunk with multi-row INSERTs of up to bulkPacketSize
// bytes (db_bulk_insert_next()).
func loadChunk(ctx context.Context, db *sql.DB, d dialect.Dialect, c *Config, ch chunk, tableSize int64, p workload.Progress) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	g := newRowGen(c, ch.table, tableSize)
	buf := make([]byte, 0, bulkPacketSize)
	verb, tail := "INSERT", ""
	if ch.resume {
		verb, tail = d.InsertIgnore()
	}
	buf = bulkInsertHead(buf, verb, ch.table, ch.withID)
	head, first := len(buf), ch.from
	flush := func(last int64) error {
		buf = append(buf, tail...)
		if _, err := conn.ExecContext(ctx, string(buf)); err != nil {
			return fmt.Errorf("load %s rows %d-%d: %w", tableName(ch.table), first, last, err)
		}
		p.Add(last-first+1, int64(len(buf)))
		buf, first = buf[:head], last+1
		return nil
	}
	for id := ch.from; id <= ch.to; id++ {
		row := g.gen(id, ch.withID)
		// db_bulk_insert_next(): room for the row, a ',' and the '\0'.
		comma := 0
		if len(buf) > head {
			comma = 1
		}
		if len(buf)+comma+len(row)+1+len(tail) > bulkPacketSize {
			if comma == 0 {
				return fmt.Errorf("load %s: row %d does not fit a statement", tableName(ch.table), id)
			}
			if err := flush(id - 1); err != nil {
				return err
			}
			comma = 0
		}
		if comma == 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, row...)
	}
	if len(buf) > head {
		return flush(ch.to)
	}
	return nil
}
