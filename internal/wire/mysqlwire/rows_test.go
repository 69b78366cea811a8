package mysqlwire_test

import (
	"errors"
	"os"
	"testing"
	"time"

	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// typesDDL is a table with a column of each kind a benchmark reads.
const typesDDL = `CREATE TABLE wire_rows (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT,
	mi MEDIUMINT, bi BIGINT, bu BIGINT UNSIGNED, yr YEAR, d DECIMAL(12,2), f FLOAT, g DOUBLE,
	c CHAR(4), v VARCHAR(40), b BLOB, dt DATETIME, dd DATE, n INT NULL)`

const typesInsert = `INSERT INTO wire_rows VALUES
	(1, -5, 250, -300, -70000, -9000000000, 18000000000000000000, 2024, -1234.56, 1.5, -2.25, 'ab', 'hello', x'00ff', '2024-02-03 04:05:06', '2024-02-03', NULL),
	(2, 7, 1, 3, 4, 5, 6, 1999, 0.10, 0, 1e300, '', '', '', '1970-01-01 00:00:00', '1970-01-01', 42)`

const typesSelect = "SELECT id, ti, tu, si, mi, bi, bu, yr, d, f, g, c, v, b, dt, dd, n FROM wire_rows"

// rowValues is what a test reads of a wire_rows row.
type rowValues struct {
	ints   [7]int64 // id, ti, tu, si, mi, bi, yr
	bu     float64
	d, f   float64
	g      float64
	c, v   string
	b      []byte
	n      int64
	nNull  bool
	length int
}

func readTypes(r *Row) (rowValues, error) {
	var x rowValues
	x.length = r.Len()
	for i, col := range []int{0, 1, 2, 3, 4, 5, 7} {
		v, err := r.Int64(col)
		if err != nil {
			return x, err
		}
		x.ints[i] = v
	}
	var err error
	if x.bu, err = r.Float64(6); err != nil {
		return x, err
	}
	if x.d, err = r.Float64(8); err != nil {
		return x, err
	}
	if x.f, err = r.Float64(9); err != nil {
		return x, err
	}
	if x.g, err = r.Float64(10); err != nil {
		return x, err
	}
	x.c, x.v, x.b = string(r.Bytes(11)), string(r.Bytes(12)), append([]byte(nil), r.Bytes(13)...)
	x.nNull = r.IsNull(16)
	if !x.nNull {
		if x.n, err = r.Int64(16); err != nil {
			return x, err
		}
	}
	return x, nil
}

func TestQueryFuncTypes(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	for _, q := range []string{"DROP TABLE IF EXISTS wire_rows", typesDDL, typesInsert} {
		if _, err := c.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []rowValues{
		{ints: [7]int64{1, -5, 250, -300, -70000, -9000000000, 2024}, bu: 18e18, d: -1234.56, f: 1.5, g: -2.25,
			c: "ab", v: "hello", b: []byte{0, 0xff}, nNull: true, length: 17},
		{ints: [7]int64{2, 7, 1, 3, 4, 5, 1999}, bu: 6, d: 0.1, f: 0, g: 1e300, c: "", v: "", b: []byte{}, n: 42, length: 17},
	}
	check := func(name string, got []rowValues) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", name, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.ints != w.ints || g.bu != w.bu || g.d != w.d || g.f != w.f || g.g != w.g || g.c != w.c ||
				g.v != w.v || string(g.b) != string(w.b) || g.n != w.n || g.nNull != w.nNull || g.length != w.length {
				t.Errorf("%s row %d:\n got %+v\nwant %+v", name, i+1, g, w)
			}
		}
	}
	collect := func(rows *[]rowValues) func(r *Row) error {
		return func(r *Row) error {
			x, err := readTypes(r)
			*rows = append(*rows, x)
			return err
		}
	}

	var text []rowValues
	if err := c.QueryFunc(typesSelect+" WHERE id >= ? ORDER BY id", []any{1}, collect(&text)); err != nil {
		t.Fatal(err)
	}
	check("text", text)

	st, err := c.Prepare(typesSelect + " WHERE id >= ? ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for range 2 { // the second run reuses the Conn's buffers
		var bin []rowValues
		if err := st.QueryFunc([]any{1}, collect(&bin)); err != nil {
			t.Fatal(err)
		}
		check("binary", bin)
	}

	// A temporal value in the binary protocol: its binary form.
	var dt []byte
	if err := st.QueryFunc([]any{2}, func(r *Row) error { dt = append(dt[:0], r.Bytes(14)...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(dt) != 0 && len(dt) != 4 && len(dt) != 7 {
		t.Errorf("DATETIME 1970-01-01 00:00:00 in %d bytes", len(dt))
	}
	// Asking a string for a number is an error, not a panic.
	err = st.QueryFunc([]any{1}, func(r *Row) error { _, err := r.Int64(12); return err })
	if err == nil {
		t.Error("Int64 of 'hello': no error")
	}
	var nullErr error
	_ = st.QueryFunc([]any{1}, func(r *Row) error {
		if _, err := r.Int64(16); err != nil && r.IsNull(16) {
			nullErr = err
		}
		return nil
	})
	if nullErr == nil {
		t.Error("Int64 of NULL: no error")
	}
}

func TestQueryFuncErrors(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	// fn's error stops the calls; the reply is read to its end, so that the
	// connection stays in step.
	stop := errors.New("stop")
	calls := 0
	err := c.QueryFunc("SELECT seq FROM seq_1_to_100", nil, func(r *Row) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Fatalf("err %v after %d calls, want stop after 3", err, calls)
	}
	var got int64
	if err := c.QueryFunc("SELECT 41 + 1", nil, func(r *Row) error {
		var err error
		got, err = r.Int64(0)
		return err
	}); err != nil || got != 42 {
		t.Fatalf("after a stopped query: %d, %v", got, err)
	}
	// A server error, then statements without rows and with none matching.
	var se *Error
	if err := c.QueryFunc("SELECT * FROM no_such_table", nil, func(*Row) error { return nil }); !errors.As(err, &se) {
		t.Fatalf("missing table: %v", err)
	}
	st, err := c.Prepare("SELECT seq FROM seq_1_to_10 WHERE seq > ?")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := st.QueryFunc([]any{100}, func(*Row) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("no rows: %d calls, %v", n, err)
	}
	if err := st.QueryFunc([]any{7}, func(*Row) error { n++; return nil }); err != nil || n != 3 {
		t.Fatalf("3 rows: %d calls, %v", n, err)
	}
	if err := c.QueryFunc("DO 1", nil, func(*Row) error { n++; return nil }); err != nil || n != 3 {
		t.Fatalf("no result set: %d calls, %v", n, err)
	}
}

// A DATETIME argument round-trips in both protocols.
func TestTimeArgument(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	ts := time.Date(2025, 6, 7, 8, 9, 10, 123456000, time.UTC)
	for _, q := range []string{"DROP TABLE IF EXISTS wire_time", "CREATE TABLE wire_time (id INT PRIMARY KEY, t DATETIME(6))"} {
		if _, err := c.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	ins, err := c.Prepare("INSERT INTO wire_time VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec([]any{1, ts}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec("INSERT INTO wire_time VALUES (?, ?)", []any{2, ts}); err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec([]any{3, ts.Truncate(time.Second)}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := c.QueryFunc("SELECT t FROM wire_time ORDER BY id", nil, func(r *Row) error {
		got = append(got, string(r.Bytes(0)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"2025-06-07 08:09:10.123456", "2025-06-07 08:09:10.123456", "2025-06-07 08:09:10.000000"}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCaptureRowSeeds writes FuzzRows' seed corpus again from a MariaDB
// sandbox's replies (MYSQLWIRE_CAPTURE=1).
func TestCaptureRowSeeds(t *testing.T) {
	if os.Getenv("MYSQLWIRE_CAPTURE") == "" {
		t.Skip("set MYSQLWIRE_CAPTURE=1 to write testdata/fuzz again")
	}
	cfg, _ := server(t)
	rec := record(t, cfg.Addr)
	pcfg := cfg
	pcfg.Addr = rec.addr
	c, err := Dial(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"DROP TABLE IF EXISTS wire_rows", typesDDL, typesInsert} {
		if _, err := c.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.Prepare(typesSelect)
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	seeds := map[string][]byte{}
	skip := func(*Row) error { return nil }
	if err := st.QueryFunc(nil, skip); err != nil {
		t.Fatal(err)
	}
	seeds["binary-types"] = rec.take()
	if err := c.QueryFunc(typesSelect, nil, skip); err != nil {
		t.Fatal(err)
	}
	seeds["text-types"] = rec.take()
	if err := c.QueryFunc("SELECT seq, seq * 1.5, NULL FROM seq_1_to_3", nil, skip); err != nil {
		t.Fatal(err)
	}
	seeds["text-seq"] = rec.take()
	_ = c.QueryFunc("SELECT * FROM no_such_table", nil, skip)
	seeds["err-missing"] = rec.take()
	writeSeeds(t, "FuzzRows", seeds)
}

// TestParamTypesChange: a statement executed with the same parameter types
// (sent once), then with others, reads each time the values it was given.
func TestParamTypesChange(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	s, err := c.Prepare("SELECT CONCAT(?, '|', ?)")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{int64(5), "x"}, "5|x"},
		{[]any{int64(6), "y"}, "6|y"},
		{[]any{int64(-7), "z"}, "-7|z"},
		{[]any{2.5, "x"}, "2.5|x"},
		{[]any{"s", int64(9)}, "s|9"},
		{[]any{nil, int64(9)}, ""},
		{[]any{int64(1), int64(2)}, "1|2"},
		{[]any{int64(3), int64(4)}, "3|4"},
	} {
		var got string
		if err := s.QueryFunc(tc.args, func(r *Row) error { got = string(r.Bytes(0)); return nil }); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestCachedMetadata: on MariaDB the connection negotiates metadata
// caching, so executions leave the column definitions out; the rows still
// decode with the statement's kept definitions, and with the new ones the
// server sends after the table changed.
func TestCachedMetadata(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	if !CacheMetadata(c) {
		t.Fatal("MariaDB connection without metadata caching")
	}
	for _, q := range []string{"DROP TABLE IF EXISTS wire_meta", "CREATE TABLE wire_meta (id INT PRIMARY KEY, v BIGINT)",
		"INSERT INTO wire_meta VALUES (1, 10), (2, 20)"} {
		if _, err := c.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Prepare("SELECT * FROM wire_meta WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	read := func(id int64) (n int, v float64) {
		t.Helper()
		err := s.QueryFunc([]any{id}, func(r *Row) error {
			n = r.Len()
			var err error
			v, err = r.Float64(1)
			return err
		})
		if err != nil {
			t.Fatalf("id %d: %v", id, err)
		}
		return n, v
	}
	for _, id := range []int64{1, 2, 1} {
		if n, v := read(id); n != 2 || v != float64(10*id) {
			t.Fatalf("id %d: %d columns, v %g", id, n, v)
		}
	}
	// A BIGINT becomes a DOUBLE (8 bytes either way: only the kept type
	// tells them apart) and a column is added.
	for _, q := range []string{"ALTER TABLE wire_meta MODIFY v DOUBLE, ADD w INT DEFAULT 3", "UPDATE wire_meta SET v = v + 0.5"} {
		if _, err := c.Exec(q, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []int64{2, 1, 2} {
		if n, v := read(id); n != 3 || v != float64(10*id)+0.5 {
			t.Fatalf("after ALTER, id %d: %d columns, v %g", id, n, v)
		}
	}
	// Text queries still read their own definitions.
	var got []byte
	if err := c.QueryFunc("SELECT v FROM wire_meta WHERE id = 2", nil, func(r *Row) error { got = append(got, r.Bytes(0)...); return nil }); err != nil || string(got) != "20.5" {
		t.Fatalf("text query: %q, %v", got, err)
	}
	if _, err := c.Exec("DROP TABLE wire_meta", nil); err != nil {
		t.Fatal(err)
	}
}
