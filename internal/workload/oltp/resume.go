package oltp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/server/dialect"
)

// A prepare resumes what an earlier, interrupted one left: a load writes
// every chunk in ascending id order, chunks start and end on block
// boundaries, and a row's values depend only on its table and id (see
// rowGen). So the blocks of 1..table_size that are not whole are exactly
// what is left to load, and loading them again with explicit ids gives the
// rows an uninterrupted load would have written.

// mismatch says how an existing table differs from what c creates, "" when
// it does not. A missing index k_N is no mismatch: prepare adds it.
func mismatch(d dialect.Dialect, c *Config, ti tableInfo) string {
	for _, col := range []string{"id", "k", "c", "pad"} {
		if !ti.columns[col] {
			return "it has no column " + col
		}
	}
	switch {
	case ti.autoInc && !c.AutoInc:
		return "its id is auto-incremented, --auto-inc=off asks for plain ids"
	case !ti.autoInc && c.AutoInc:
		return "its id is not auto-incremented, --auto-inc=on asks for it"
	case ti.primary && c.Secondary:
		return "its id is the primary key, --secondary=on asks for index xid instead"
	case !ti.primary && !c.Secondary:
		return "its id is not the primary key, --secondary=off asks for one"
	case ti.kIndex && !c.CreateSecondary:
		return "it has the index on k that --create-secondary=off leaves out"
	case d.StorageEngines() && ti.engine != strings.ToLower(c.MySQLStorageEngine):
		return "it uses the storage engine " + ti.engine + ", --mysql-storage-engine asks for " + c.MySQLStorageEngine
	}
	return ""
}

// blockEndsPresent reports whether table t holds the last id of every
// block of 1..rows, by primary-key lookups. An interrupted load always
// leaves the last id of its chunk missing, so this finds every interrupted
// load of dbarena or sysbench without reading the table.
func blockEndsPresent(ctx context.Context, db *sql.DB, t int, rows int64) (bool, error) {
	const batch = 10000 // block ends per statement
	blocks := (rows + blockRows - 1) / blockRows
	q := make([]byte, 0, 64+batch*8)
	for b0 := int64(0); b0 < blocks; b0 += batch {
		b1 := min(b0+batch, blocks)
		q = append(q[:0], "SELECT COUNT(DISTINCT id) FROM "...)
		q = append(q, tableName(t)...)
		q = append(q, " WHERE id IN ("...)
		for b := b0; b < b1; b++ {
			if b > b0 {
				q = append(q, ',')
			}
			q = strconv.AppendInt(q, min((b+1)*blockRows, rows), 10)
		}
		q = append(q, ')')
		var n int64
		if err := db.QueryRowContext(ctx, string(q)).Scan(&n); err != nil {
			return false, fmt.Errorf("probe %s: %w", tableName(t), err)
		}
		if n != b1-b0 {
			return false, nil
		}
	}
	return true, nil
}

// loadedBeyond reports whether table t holds, at id rows+1, the row a
// prepare with a larger --table-size loads there (c and pad depend only on
// the table and the id; oltp_insert's rows have random ones).
func loadedBeyond(ctx context.Context, db *sql.DB, c *Config, t int, rows int64) (bool, error) {
	var cv, pad string
	q := "SELECT c, pad FROM " + tableName(t) + " WHERE id = " + strconv.FormatInt(rows+1, 10)
	switch err := db.QueryRowContext(ctx, q).Scan(&cv, &pad); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("probe %s: %w", tableName(t), err)
	}
	g := newRowGen(c, t, rows+1)
	g.gen(rows+1, true)
	// CHAR columns come back blank-padded from PostgreSQL.
	return strings.TrimRight(cv, " ") == string(g.c) && strings.TrimRight(pad, " ") == string(g.pad), nil
}

// hasID reports whether table t holds a row with the given id.
func hasID(ctx context.Context, db *sql.DB, t int, id int64) (bool, error) {
	var n int64
	q := "SELECT COUNT(*) FROM " + tableName(t) + " WHERE id = " + strconv.FormatInt(id, 10)
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, fmt.Errorf("probe %s: %w", tableName(t), err)
	}
	return n > 0, nil
}

// countIDs counts the distinct ids of table t in 1..rows.
func countIDs(ctx context.Context, db *sql.DB, t int, rows int64) (int64, error) {
	var n int64
	q := "SELECT COUNT(DISTINCT id) FROM " + tableName(t) + " WHERE id BETWEEN 1 AND " + strconv.FormatInt(rows, 10)
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the rows of %s: %w", tableName(t), err)
	}
	return n, nil
}

// span is an id range of one table that prepare loads; fresh spans belong
// to tables this prepare created.
type span struct {
	table    int
	from, to int64
	fresh    bool
}

// blockSize is the number of ids of block b (0-based) in 1..rows.
func blockSize(b, rows int64) int64 { return min((b+1)*blockRows, rows) - b*blockRows }

// missingSpans reads how many ids of each block of 1..rows table t holds
// and returns the blocks that are not whole, consecutive ones merged, and
// those of them that hold some rows, which must be emptied first.
func missingSpans(ctx context.Context, db *sql.DB, d dialect.Dialect, t int, rows int64) (load, partial []span, err error) {
	div := d.IntDiv()
	q := "SELECT (id - 1)" + div + strconv.Itoa(blockRows) + ", COUNT(DISTINCT id) FROM " + tableName(t) +
		" WHERE id BETWEEN 1 AND " + strconv.FormatInt(rows, 10) + " GROUP BY 1"
	res, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, fmt.Errorf("count the rows of %s: %w", tableName(t), err)
	}
	defer res.Close()
	held := map[int64]int64{}
	for res.Next() {
		var b, n int64
		if err := res.Scan(&b, &n); err != nil {
			return nil, nil, fmt.Errorf("count the rows of %s: %w", tableName(t), err)
		}
		held[b] = n
	}
	if err := res.Err(); err != nil {
		return nil, nil, fmt.Errorf("count the rows of %s: %w", tableName(t), err)
	}
	blocks := (rows + blockRows - 1) / blockRows
	for b := int64(0); b < blocks; b++ {
		n := held[b]
		if n >= blockSize(b, rows) {
			continue
		}
		from, to := b*blockRows+1, b*blockRows+blockSize(b, rows)
		if n > 0 {
			partial = append(partial, span{table: t, from: from, to: to})
		}
		if k := len(load) - 1; k >= 0 && load[k].to == from-1 {
			load[k].to = to
		} else {
			load = append(load, span{table: t, from: from, to: to})
		}
	}
	return load, partial, nil
}

// emptySpan deletes the rows of s so that it can be loaded again.
func emptySpan(ctx context.Context, db *sql.DB, s span) error {
	q := "DELETE FROM " + tableName(s.table) + " WHERE id BETWEEN " +
		strconv.FormatInt(s.from, 10) + " AND " + strconv.FormatInt(s.to, 10)
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("empty %s rows %d-%d: %w", tableName(s.table), s.from, s.to, err)
	}
	return nil
}
