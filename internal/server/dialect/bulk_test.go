package dialect_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	. "github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestRowsFormat: fields are tab-separated, rows newline-ended, NULL is
// \N, and text is escaped as LOAD DATA and COPY read it.
func TestRowsFormat(t *testing.T) {
	var got []byte
	var rows int64
	w := NewRows(func(b []byte, n int64) error {
		got = append(got, b...)
		rows += n
		return nil
	})
	w.Int(-7)
	w.Text("a\tb\nc\\d\re")
	w.Null()
	w.Field()
	w.Buf = append(w.Buf, "raw"...)
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	w.Text(`\N`)
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "-7\ta\\tb\\nc\\\\d\\re\t\\N\traw\n\\\\N\n"
	if string(got) != want || rows != 2 {
		t.Errorf("got %q (%d rows), want %q (2 rows)", got, rows, want)
	}
}

// TestRowsChunks: Rows hands on whole rows in chunks of about 256 KiB,
// counting them.
func TestRowsChunks(t *testing.T) {
	var chunks, rows int64
	var bad bool
	w := NewRows(func(b []byte, n int64) error {
		chunks++
		rows += n
		if len(b) == 0 || b[len(b)-1] != '\n' || int64(strings.Count(string(b), "\n")) != n {
			bad = true
		}
		return nil
	})
	for i := 0; i < 100000; i++ {
		w.Int(int64(i))
		w.Text(strings.Repeat("x", 20))
		if err := w.End(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if rows != 100000 || chunks < 5 || chunks > 20 || bad {
		t.Errorf("%d rows in %d chunks (bad chunk: %v), want 100000 in about 11", rows, chunks, bad)
	}
	// A flush error stops the producer.
	boom := errors.New("boom")
	w = NewRows(func([]byte, int64) error { return boom })
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		w.Text(strings.Repeat("y", 100))
		err = w.End()
	}
	if !errors.Is(err, boom) {
		t.Errorf("End after a failing flush: %v, want boom", err)
	}
}

func TestRefusesLocalFiles(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1148}, true},
		{&mysql.MySQLError{Number: 3948}, true},
		{fmt.Errorf("load: %w", &mysql.MySQLError{Number: 4166}), true},
		{&mysql.MySQLError{Number: 2068}, true},
		{&mysql.MySQLError{Number: 1062}, false},
		{errors.New("1148"), false},
		{nil, false},
	} {
		if got := RefusesLocalFiles(tc.err); got != tc.want {
			t.Errorf("RefusesLocalFiles(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// hostile are text values the bulk format must carry unchanged.
var hostile = []string{"plain", "tab\there", "new\nline", `back\slash`, "cr\rhere", `\N`, `\\N`, "", "trailing\\", "ünïcode ✓", "'quote\"s'"}

// loadHostile loads the hostile values (and a NULL) through s into a new
// table and checks what the server holds and the progress counted.
func loadHostile(t *testing.T, db *sql.DB, d Dialect, s *RowSink, table string, got *atomic.Int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id int PRIMARY KEY, v varchar(100), n int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const extra = 3000 // more rows than one INSERT holds
	gen := func(w *Rows) error {
		for i, v := range hostile {
			w.Int(int64(i))
			w.Text(v)
			w.Null()
			if err := w.End(); err != nil {
				return err
			}
		}
		for i := 0; i < extra; i++ {
			w.Int(int64(1000 + i))
			w.Text("x")
			w.Int(int64(i))
			if err := w.End(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.Load(ctx, conn, BulkTable{Table: table, Columns: "id, v, n"}, gen); err != nil {
		t.Fatal(err)
	}
	if want := int64(len(hostile) + extra); got.Load() != want {
		t.Errorf("progress: %d rows, want %d", got.Load(), want)
	}
	rows, err := db.QueryContext(ctx, d.Rebind("SELECT id, v, n FROM "+table+" WHERE id < ? ORDER BY id"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for ; rows.Next(); i++ {
		var id int
		var v string
		var n sql.NullInt64
		if err := rows.Scan(&id, &v, &n); err != nil {
			t.Fatal(err)
		}
		if id != i || v != hostile[i] || n.Valid {
			t.Errorf("row %d: id %d, v %q, n %v; want v %q, n NULL", i, id, v, n, hostile[i])
		}
	}
	if i != len(hostile) {
		t.Errorf("%d rows, want %d", i, len(hostile))
	}
	var n, sum int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(n) FROM "+table+" WHERE id >= 1000").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != extra || sum != extra*(extra-1)/2 {
		t.Errorf("%d rows summing to %d, want %d and %d", n, sum, extra, extra*(extra-1)/2)
	}
}

// TestRowSink: the bulk path and the INSERT path load the same values on
// both families.
func TestRowSink(t *testing.T) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		env := sandboxtest.Env(t, flavor)
		for _, insertOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s insert-only=%v", flavor, insertOnly), func(t *testing.T) {
				var rows atomic.Int64
				s := NewRowSink(env.Dialect, 500, insertOnly, func(r, _ int64) { rows.Add(r) })
				loadHostile(t, env.DB, env.Dialect, s, "bulk_sink_t", &rows)
				if s.InsertOnly() != insertOnly {
					t.Errorf("InsertOnly %v after the load, want %v", s.InsertOnly(), insertOnly)
				}
			})
		}
	}
}

// TestRowSinkRefused: a MariaDB server with local_infile off refuses the
// bulk path; the sink then sends INSERTs, for this load and the next.
func TestRowSinkRefused(t *testing.T) {
	sb := sandboxtest.StartNamed(t, target.FlavorMariaDB, func(s *sandbox.Spec) {
		s.Settings = append(s.Settings, sandbox.Setting{Key: "local_infile", Value: "0"})
	})
	d := MySQLDialect{}
	db, err := d.Open(sb.Target, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The bare statement is refused with an error RefusesLocalFiles knows.
	_, err = d.LoadText(context.Background(), conn, BulkTable{Table: "nowhere"}, strings.NewReader("1\n"))
	if !RefusesLocalFiles(err) {
		t.Fatalf("LoadText with local_infile off: %v, want a refusal", err)
	}
	var rows atomic.Int64
	s := NewRowSink(d, 500, false, func(r, _ int64) { rows.Add(r) })
	loadHostile(t, db, d, s, "bulk_sink_r", &rows)
	if !s.InsertOnly() {
		t.Error("the sink did not switch to INSERTs")
	}
}

// TestLoadTextModifier: IGNORE keeps the first of duplicate keys on the
// MySQL family; COPY refuses a modifier.
func TestLoadTextModifier(t *testing.T) {
	ctx := context.Background()
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		env := sandboxtest.Env(t, flavor)
		if _, err := env.DB.ExecContext(ctx, "DROP TABLE IF EXISTS bulk_mod"); err != nil {
			t.Fatal(err)
		}
		if _, err := env.DB.ExecContext(ctx, "CREATE TABLE bulk_mod (a int PRIMARY KEY, b int)"); err != nil {
			t.Fatal(err)
		}
		conn, err := env.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := env.Dialect.LoadText(ctx, conn, BulkTable{Table: "bulk_mod", Modifier: "IGNORE"}, strings.NewReader("1\t1\n1\t2\n2\t3\n"))
		conn.Close()
		if flavor == target.FlavorPostgres {
			if err == nil {
				t.Error("COPY with IGNORE: no error")
			}
		} else if err != nil || n != 2 {
			t.Errorf("LOAD DATA IGNORE: %d rows, %v; want 2", n, err)
		}
		_, _ = env.DB.ExecContext(ctx, "DROP TABLE bulk_mod")
	}
}
