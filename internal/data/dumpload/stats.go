package dumpload

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/server/dialect"
)

// checksums fills in each table's rows, sizes, engine and content
// checksum (package checksum), one database at a time.
func (l *loader) checksums(ctx context.Context) error {
	byDB := map[string][]int{}
	var dbs []string
	for i, t := range l.res.Tables {
		if _, ok := byDB[t.Database]; !ok {
			dbs = append(dbs, t.Database)
		}
		byDB[t.Database] = append(byDB[t.Database], i)
	}
	d, err := dialect.For(l.t.Family())
	if err != nil {
		return err
	}
	var errs []error
	gone := map[int]bool{} // not base tables after the load
	for _, db := range dbs {
		tg := l.t
		if db != "" {
			tg.Database = db
		}
		h, err := d.Open(tg, dialect.OpenOptions{MaxConns: 1})
		if err != nil {
			return err
		}
		// Every base table of the database: a name the dump created
		// may since have become a view (mydumper's placeholders).
		sums, err := checksum.Run(ctx, h, string(l.t.Flavor), tg.Database, checksum.Options{})
		h.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		found := map[string]checksum.Table{}
		for _, s := range sums {
			found[s.Name] = s
		}
		for _, i := range byDB[db] {
			t := &l.res.Tables[i]
			if s, ok := found[checksumName(t.Name)]; ok {
				t.Rows, t.Checksum, t.DataBytes, t.IndexBytes, t.Engine = s.Rows, s.Sum, s.DataBytes, s.IndexBytes, s.Engine
			} else {
				gone[i] = true
			}
		}
	}
	if len(errs) == 0 && len(gone) > 0 {
		kept := l.res.Tables[:0]
		for i, t := range l.res.Tables {
			if !gone[i] {
				kept = append(kept, t)
			}
		}
		l.res.Tables = kept
	}
	return errors.Join(errs...)
}

// checksumName is a table's name as package checksum lists it: without
// PostgreSQL's default schema.
func checksumName(name string) string {
	return strings.TrimPrefix(name, "public.")
}

// stats fills in each table's row count, sizes and engine from the server.
func (l *loader) stats(ctx context.Context) error {
	var errs []error
	conns := map[string]conn{}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	// One connection for all when it reads every database.
	cross := l.flavor().CrossDatabase()
	for i := range l.res.Tables {
		t := &l.res.Tables[i]
		key := t.Database
		if cross {
			key = ""
		}
		c := conns[key]
		if c == nil {
			var err error
			if c, err = l.dl.dial(ctx, t.Database); err != nil {
				return err
			}
			conns[key] = c
		}
		var err error
		switch c := c.(type) {
		case *myConn:
			err = mysqlTableStats(ctx, c, t)
		case *pgConn:
			err = pgTableStats(ctx, c, t)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
		}
	}
	return errors.Join(errs...)
}

func mysqlTableStats(ctx context.Context, c *myConn, t *Table) error {
	db, name := t.Database, t.Name
	if d, n, ok := strings.Cut(name, "."); ok {
		db, name = d, n
	}
	var engine *string
	var data, index *int64
	err := c.queryRow(ctx, `SELECT ENGINE, DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND TABLE_TYPE = 'BASE TABLE'`, db, name).Scan(&engine, &data, &index)
	if err != nil {
		return err
	}
	if engine != nil {
		t.Engine = *engine
	}
	if data != nil {
		t.DataBytes = *data
	}
	if index != nil {
		t.IndexBytes = *index
	}
	return c.queryRow(ctx, "SELECT COUNT(*) FROM "+quoteMySQL(db)+"."+quoteMySQL(name)).Scan(&t.Rows)
}

func pgTableStats(ctx context.Context, c *pgConn, t *Table) error {
	q := pgQualified(t.Name)
	err := c.queryRow(ctx, "SELECT pg_table_size($1::regclass), pg_indexes_size($1::regclass)", q).Scan(&t.DataBytes, &t.IndexBytes)
	if err != nil {
		return err
	}
	t.Engine = "heap"
	return c.queryRow(ctx, "SELECT count(*) FROM "+q).Scan(&t.Rows)
}

// pgQualified quotes a possibly schema-qualified name.
func pgQualified(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quotePG(p)
	}
	return strings.Join(parts, ".")
}
