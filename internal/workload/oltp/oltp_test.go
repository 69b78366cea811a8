package oltp

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// recorder is an executor that records statements instead of running them.
type recorder struct {
	prepared []string
	ran      []call
	affected int64
	closed   int // statements closed
}

type call struct {
	text string
	args []any
	ps   bool
}

func (r *recorder) prepare(_ context.Context, st *stmt) error {
	r.prepared = append(r.prepared, st.text)
	return nil
}

func (r *recorder) record(st *stmt) {
	r.ran = append(r.ran, call{text: st.text, args: append([]any(nil), st.args...)})
}

func (r *recorder) query(_ context.Context, st *stmt) error { r.record(st); return nil }

func (r *recorder) exec(_ context.Context, st *stmt) (int64, error) {
	r.record(st)
	return r.affected, nil
}

func (r *recorder) close(*stmt) error { r.closed++; return nil }

func byName(t testing.TB, name string) workload.Workload {
	t.Helper()
	reg := workload.NewRegistry(All()...)
	wl, err := reg.New(name)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

func newTestWorker(t testing.TB, wl *Workload, fam target.Family, id int) (*worker, *recorder) {
	t.Helper()
	rec := &recorder{affected: 1}
	d, _ := dialect.For(fam)
	w, err := wl.newWorker(context.Background(), rec, d, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	return w, rec
}

func TestAllNames(t *testing.T) {
	want := []string{"bulk_insert", "oltp_delete", "oltp_insert", "oltp_point_select", "oltp_read_only",
		"oltp_read_write", "oltp_update_index", "oltp_update_non_index", "oltp_write_only",
		"select_random_points", "select_random_ranges"}
	reg := workload.NewRegistry(All()...)
	if got := reg.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Names() = %v", got)
	}
	for _, n := range want {
		wl := byName(t, n)
		if wl.Description() == "" {
			t.Errorf("%s: no description", n)
		}
		fs := pflag.NewFlagSet(n, pflag.ContinueOnError)
		wl.Flags(fs)
		if errs := wl.Validate(); len(errs) != 0 {
			t.Errorf("%s: defaults invalid: %v", n, errs)
		}
		if _, ok := wl.(workload.Runner); !ok {
			t.Errorf("%s is not a Runner", n)
		}
	}
}

// luaDefaults are oltp_common.lua's options, for when sysbench is not installed.
var luaDefaults = map[string]string{
	"auto-inc": "true", "create-secondary": "true", "delete-inserts": "1", "distinct-ranges": "1",
	"index-updates": "1", "mysql-storage-engine": "innodb", "non-index-updates": "1", "order-ranges": "1",
	"point-selects": "10", "range-selects": "true", "range-size": "100", "secondary": "false",
	"simple-ranges": "1", "skip-trx": "false", "sum-ranges": "1", "table-size": "10000", "tables": "1",
}

// sysbenchDefaults parses `sysbench SCRIPT help`.
func sysbenchDefaults(t *testing.T, script string) map[string]string {
	t.Helper()
	path, err := exec.LookPath("sysbench")
	if err != nil {
		return nil
	}
	out, err := exec.Command(path, script, "help").Output()
	if err != nil {
		t.Logf("sysbench %s help: %v", script, err)
		return nil
	}
	re := regexp.MustCompile(`^\s+--([a-z_]+)(?:=\S+|\[=on\|off\])\s+.*\[([^\]]*)\]$`)
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v := m[2]
		switch v {
		case "on":
			v = "true"
		case "off":
			v = "false"
		}
		got[strings.ReplaceAll(m[1], "_", "-")] = v
	}
	return got
}

func TestFlagDefaultsMatchSysbench(t *testing.T) {
	for _, script := range []string{"oltp_read_write", "select_random_points", "select_random_ranges"} {
		t.Run(script, func(t *testing.T) {
			want := sysbenchDefaults(t, script)
			if want == nil {
				t.Log("sysbench not on PATH; comparing with the table copied from oltp_common.lua")
				want = luaDefaults
				switch script {
				case "select_random_points":
					want["random-points"] = "10"
				case "select_random_ranges":
					want["number-of-ranges"], want["delta"] = "10", "5"
				}
			}
			delete(want, "pgsql-variant") // not supported (redshift only)
			fs := pflag.NewFlagSet(script, pflag.ContinueOnError)
			byName(t, script).Flags(fs)
			for name, def := range want {
				f := fs.Lookup(name)
				if f == nil {
					t.Errorf("--%s missing", name)
					continue
				}
				if f.DefValue != def {
					t.Errorf("--%s default %q, sysbench has %q", name, f.DefValue, def)
				}
			}
			for name, def := range map[string]string{"ps-mode": "auto", "rand-type": "special"} {
				if f := fs.Lookup(name); f == nil || f.DefValue != def {
					t.Errorf("--%s: want default %q, got %+v", name, def, f)
				}
			}
		})
	}
}

func TestBoolFlagsOnOff(t *testing.T) {
	wl := NewReadWrite()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	wl.Flags(fs)
	if err := fs.Parse([]string{"--auto-inc=off", "--skip-trx", "--range-selects=no"}); err != nil {
		t.Fatal(err)
	}
	c := wl.Config()
	if c.AutoInc || !c.SkipTrx || c.RangeSelects {
		t.Errorf("got %+v", c)
	}
	if err := fs.Parse([]string{"--secondary=maybe"}); err == nil {
		t.Error("--secondary=maybe accepted")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, workload string
		args           []string
		want           []string
	}{
		{"tables", "oltp_read_write", []string{"--tables=0"}, []string{"--tables"}},
		{"table size", "oltp_read_only", []string{"--table-size=0"}, []string{"--table-size"}},
		{"empty insert ok", "oltp_insert", []string{"--table-size=0"}, nil},
		{"negative counts", "oltp_read_write", []string{"--point-selects=-1", "--delete-inserts=-2"},
			[]string{"--point-selects", "--delete-inserts"}},
		{"ps mode", "oltp_point_select", []string{"--ps-mode=always"}, []string{"--ps-mode"}},
		{"engine", "oltp_read_write", []string{"--mysql-storage-engine=innodb; DROP"}, []string{"--mysql-storage-engine"}},
		{"rand", "oltp_read_write", []string{"--rand-spec-iter=0"}, []string{"--rand-spec-iter"}},
		{"random points", "select_random_points", []string{"--random-points=0"}, []string{"--random-points"}},
		{"ranges", "select_random_ranges", []string{"--number-of-ranges=0", "--delta=-1"}, []string{"--number-of-ranges", "--delta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wl := byName(t, tt.workload)
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			wl.Flags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			errs := wl.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d errors", errs, len(tt.want))
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tt.want[i]) {
					t.Errorf("error %q does not name %s", e, tt.want[i])
				}
			}
		})
	}
}

func TestDDL(t *testing.T) {
	c := DefaultConfig()
	mysql := "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n" +
		"  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */ "
	if got := createTableSQL(dialect.MySQLDialect{}, &c, 3); got != mysql {
		t.Errorf("mysql DDL:\n%q\nwant\n%q", got, mysql)
	}
	pg := "CREATE TABLE sbtest1(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n" +
		"  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n)  "
	if got := createTableSQL(dialect.PostgresDialect{}, &c, 1); got != pg {
		t.Errorf("pgsql DDL:\n%q\nwant\n%q", got, pg)
	}
	c.AutoInc, c.Secondary, c.MySQLStorageEngine = false, true, "myisam"
	if got := createTableSQL(dialect.MySQLDialect{}, &c, 2); !strings.Contains(got, "id INTEGER NOT NULL,\n") ||
		!strings.Contains(got, "KEY xid (id)") || !strings.HasSuffix(got, "/*! ENGINE = myisam */ ") {
		t.Errorf("mysql DDL without auto-inc: %q", got)
	}
	if got := createTableSQL(dialect.PostgresDialect{}, &c, 2); !strings.Contains(got, "id INTEGER NOT NULL,\n") {
		t.Errorf("pgsql DDL without auto-inc: %q", got)
	}
	if got := createIndexSQL(12); got != "CREATE INDEX k_12 ON sbtest12(k)" {
		t.Errorf("index: %q", got)
	}
	if got := bulkCreateSQL(2); got != "        CREATE TABLE IF NOT EXISTS sbtest2 (\n          id INTEGER NOT NULL,\n"+
		"          k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id))" {
		t.Errorf("bulk_insert DDL: %q", got)
	}
}

// queryCounts runs n events and returns the per-event counts and the statements.
func queryCounts(t *testing.T, w workload.Worker, n int) ([]workload.Queries, error) {
	t.Helper()
	var out []workload.Queries
	for i := 0; i < n; i++ {
		var ev workload.Event
		if err := w.Event(context.Background(), &ev); err != nil {
			return out, err
		}
		out = append(out, ev.Queries)
	}
	return out, nil
}

func TestStatementMix(t *testing.T) {
	tests := []struct {
		workload string
		args     []string
		want     workload.Queries
		prepared int // statements prepared per table
	}{
		{"oltp_read_write", nil, workload.Queries{Read: 14, Write: 4, Other: 2}, 9},
		{"oltp_read_write", []string{"--skip-trx", "--range-selects=off"}, workload.Queries{Read: 10, Write: 4}, 5},
		{"oltp_read_only", nil, workload.Queries{Read: 14, Other: 2}, 5},
		{"oltp_read_only", []string{"--point-selects=3", "--sum-ranges=2"}, workload.Queries{Read: 8, Other: 2}, 5},
		{"oltp_write_only", nil, workload.Queries{Write: 4, Other: 2}, 4},
		{"oltp_write_only", []string{"--delete-inserts=3"}, workload.Queries{Write: 8, Other: 2}, 4},
		{"oltp_point_select", []string{"--point-selects=7"}, workload.Queries{Read: 1}, 1},
		{"oltp_update_index", nil, workload.Queries{Write: 1}, 1},
		{"oltp_update_non_index", []string{"--non-index-updates=2"}, workload.Queries{Write: 2}, 1},
		{"oltp_delete", nil, workload.Queries{Write: 1}, 1},
		{"oltp_insert", nil, workload.Queries{Write: 1}, 0},
		{"select_random_points", nil, workload.Queries{Read: 1}, 0},
		{"select_random_ranges", nil, workload.Queries{Read: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.workload+strings.Join(tt.args, ""), func(t *testing.T) {
			wl := byName(t, tt.workload).(*Workload)
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			wl.Flags(fs)
			args := append([]string{"--tables=3"}, tt.args...)
			if wl.spec.singleTable {
				args = tt.args
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			w, rec := newTestWorker(t, wl, target.MySQL, 0)
			extra := 0
			if wl.spec.init != nil && wl.spec.kinds == nil && tt.workload != "oltp_insert" {
				extra = 1
			}
			if got, want := len(rec.prepared), tt.prepared*wl.cfg.Tables+extra; got != want {
				t.Errorf("prepared %d statements, want %d: %q", got, want, rec.prepared)
			}
			counts, err := queryCounts(t, w, 50)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range counts {
				if q != tt.want {
					t.Fatalf("event queries %+v, want %+v", q, tt.want)
				}
			}
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestReadWriteStatements(t *testing.T) {
	wl := NewReadWrite()
	wl.Flags(pflag.NewFlagSet("t", pflag.ContinueOnError))
	w, rec := newTestWorker(t, wl, target.MySQL, 0)
	if err := w.Event(context.Background(), &workload.Event{}); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range rec.ran {
		texts = append(texts, c.text)
	}
	want := append(append([]string{"BEGIN"}, repeat("SELECT c FROM sbtest1 WHERE id=?", 10)...),
		"SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
		"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
		"SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
		"SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
		"UPDATE sbtest1 SET k=k+1 WHERE id=?",
		"UPDATE sbtest1 SET c=? WHERE id=?",
		"DELETE FROM sbtest1 WHERE id=?",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
		"COMMIT")
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("statements:\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range rec.ran {
		switch {
		case strings.Contains(c.text, "BETWEEN"):
			lo, hi := c.args[0].(int64), c.args[1].(int64)
			if hi-lo != 99 || lo < 1 || lo > 10000 {
				t.Errorf("%s: range [%d, %d]", c.text, lo, hi)
			}
		case strings.HasPrefix(c.text, "INSERT"):
			if c.args[0] != rec.ran[len(rec.ran)-3].args[0] {
				t.Errorf("INSERT id %v differs from the DELETE's %v", c.args[0], rec.ran[len(rec.ran)-3].args[0])
			}
			if s := c.args[2].(string); len(s) != 119 || !regexp.MustCompile(`^(\d{11}-){9}\d{11}$`).MatchString(s) {
				t.Errorf("c = %q", s)
			}
			if s := c.args[3].(string); len(s) != 59 {
				t.Errorf("pad = %q", s)
			}
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestPostgresRebind(t *testing.T) {
	wl := NewReadWrite()
	wl.Flags(pflag.NewFlagSet("t", pflag.ContinueOnError))
	_, rec := newTestWorker(t, wl, target.Postgres, 0)
	for _, want := range []string{"SELECT c FROM sbtest1 WHERE id=$1", "UPDATE sbtest1 SET c=$1 WHERE id=$2",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4)"} {
		found := false
		for _, p := range rec.prepared {
			found = found || p == want
		}
		if !found {
			t.Errorf("%q not prepared; got %q", want, rec.prepared)
		}
	}
}

func TestPSModeDisable(t *testing.T) {
	wl := NewPointSelect()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	wl.Flags(fs)
	_ = fs.Parse([]string{"--ps-mode=disable"})
	if wl.PreparedStatements() {
		t.Error("PreparedStatements() with --ps-mode=disable")
	}
	// The real executor does not prepare in disable mode.
	x := &sqlExecutor{prepared: false}
	st := &stmt{text: "SELECT 1"}
	if err := x.prepare(context.Background(), st); err != nil || st.ps != nil {
		t.Errorf("prepare in disable mode: %v %v", err, st.ps)
	}
}

func TestAffectedRowsCounting(t *testing.T) {
	// sysbench counts a DML that changed no row as "other".
	wl := NewDelete()
	wl.Flags(pflag.NewFlagSet("t", pflag.ContinueOnError))
	w, rec := newTestWorker(t, wl, target.MySQL, 0)
	rec.affected = 0
	var ev workload.Event
	if err := w.Event(context.Background(), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Queries != (workload.Queries{Other: 1}) {
		t.Errorf("got %+v", ev.Queries)
	}
}

func TestInsertText(t *testing.T) {
	tests := []struct {
		name string
		fam  target.Family
		args []string
		re   string
	}{
		{"mysql auto-inc", target.MySQL, nil, `^INSERT INTO sbtest[12] \(id, k, c, pad\) VALUES \(0, \d+, '[-\d]{119}', '[-\d]{59}'\)$`},
		{"pgsql auto-inc", target.Postgres, nil, `^INSERT INTO sbtest[12] \(k, c, pad\) VALUES \(\d+, '[-\d]{119}', '[-\d]{59}'\)$`},
		{"no auto-inc", target.Postgres, []string{"--auto-inc=off"}, `^INSERT INTO sbtest[12] \(id, k, c, pad\) VALUES \(-?\d+, \d+, '[-\d]{119}', '[-\d]{59}'\)$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wl := NewInsert()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			wl.Flags(fs)
			_ = fs.Parse(append([]string{"--tables=2"}, tt.args...))
			w, rec := newTestWorker(t, wl, tt.fam, 0)
			ids := map[any]bool{}
			for i := 0; i < 100; i++ {
				if err := w.Event(context.Background(), &workload.Event{}); err != nil {
					t.Fatal(err)
				}
				txt := rec.ran[i].text
				if !regexp.MustCompile(tt.re).MatchString(txt) {
					t.Fatalf("insert %q does not match %s", txt, tt.re)
				}
				ids[strings.SplitN(strings.SplitN(txt, "VALUES (", 2)[1], ",", 2)[0]] = true
			}
			if !wl.cfg.AutoInc && len(ids) != 100 {
				t.Errorf("unique ids repeated: %d distinct of 100", len(ids))
			}
		})
	}
}

func TestSelectRandomSegments(t *testing.T) {
	wl := NewSelectRandomPoints()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Int("threads", 1, "")
	wl.Flags(fs)
	_ = fs.Parse([]string{"--threads=4", "--table-size=1000", "--random-points=3"})
	for id := 0; id < 4; id++ {
		w, rec := newTestWorker(t, wl, target.MySQL, id)
		if want := "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (?, ?, ?)\n        "; rec.prepared[0] != want {
			t.Fatalf("statement %q", rec.prepared[0])
		}
		for i := 0; i < 200; i++ {
			_ = w.Event(context.Background(), &workload.Event{})
		}
		lo, hi := int64(250*id), int64(250*id+250)
		for _, c := range rec.ran {
			for _, a := range c.args {
				if v := a.(int64); v < lo || v > hi {
					t.Fatalf("thread %d drew k=%d outside [%d, %d]", id, v, lo, hi)
				}
			}
		}
	}

	wr := NewSelectRandomRanges()
	wr.SetThreads(2)
	wr.Flags(pflag.NewFlagSet("t", pflag.ContinueOnError))
	w, rec := newTestWorker(t, wr, target.Postgres, 1)
	want := "        SELECT count(k)\n          FROM sbtest1\n          WHERE k BETWEEN $1 AND $2 OR "
	if !strings.HasPrefix(rec.prepared[0], want) || strings.Count(rec.prepared[0], "BETWEEN") != 10 {
		t.Fatalf("statement %q", rec.prepared[0])
	}
	_ = w.Event(context.Background(), &workload.Event{})
	for i := 0; i < 20; i += 2 {
		a, b := rec.ran[0].args[i].(int64), rec.ran[0].args[i+1].(int64)
		if b-a != 5 || a < 5000 || a > 10000 {
			t.Errorf("range [%d, %d]", a, b)
		}
	}
}

func TestBulkInsertWorker(t *testing.T) {
	rec := &recorder{affected: 1}
	w := newBulkWorker(rec, 1)
	writes := int64(0)
	const n = 100000
	for i := 0; i < n; i++ {
		var ev workload.Event
		if err := w.Event(context.Background(), &ev); err != nil {
			t.Fatal(err)
		}
		writes += ev.Queries.Write
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if writes < 1 || int(writes) != len(rec.ran)-1 {
		t.Errorf("%d writes counted, %d statements", writes, len(rec.ran))
	}
	rows := 0
	for i, c := range rec.ran {
		if len(c.text) >= bulkPacketSize {
			t.Errorf("statement %d is %d bytes", i, len(c.text))
		}
		if i == 0 && !strings.HasPrefix(c.text, "INSERT INTO sbtest2 VALUES(1,1),(2,2),") {
			t.Errorf("first statement starts %q", c.text[:40])
		}
		rows += strings.Count(c.text, "(")
	}
	if rows != n {
		t.Errorf("%d rows sent, want %d", rows, n)
	}
}

func TestPlanChunks(t *testing.T) {
	c := DefaultConfig()
	c.Tables = 2
	if got := planChunks(&c, freshSpans(&c, 10000), 2); len(got) != 2 || got[0].withID || got[1].table != 2 {
		t.Errorf("threads=tables: %+v", got)
	}
	got := planChunks(&c, freshSpans(&c, 10500), 8)
	if len(got) != 8 {
		t.Fatalf("8 threads, 2 tables: %d chunks", len(got))
	}
	for tbl := 1; tbl <= 2; tbl++ {
		next := int64(1)
		for _, ch := range got {
			if ch.table != tbl {
				continue
			}
			if !ch.withID || ch.from != next || (ch.from-1)%blockRows != 0 {
				t.Errorf("chunk %+v, want from %d", ch, next)
			}
			next = ch.to + 1
		}
		if next != 10501 {
			t.Errorf("table %d covered up to %d", tbl, next-1)
		}
	}
	if got := planChunks(&c, freshSpans(&c, 0), 4); got != nil {
		t.Errorf("empty table: %+v", got)
	}
}

func TestRowGenIndependentOfSplit(t *testing.T) {
	c := DefaultConfig()
	whole := newRowGen(&c, 1, 5000)
	var rows []string
	for id := int64(1); id <= 2500; id++ {
		rows = append(rows, string(whole.gen(id, true)))
	}
	part := newRowGen(&c, 1, 5000)
	for _, id := range []int64{1001, 1002, 1500, 2001, 2500, 7} {
		if got := string(part.gen(id, true)); got != rows[id-1] {
			t.Fatalf("row %d: %q, want %q", id, got, rows[id-1])
		}
	}
	re := regexp.MustCompile(`^\(42, \d+, '(\d{11}-){9}\d{11}', '(\d{11}-){4}\d{11}'\)$`)
	if got := string(part.gen(42, true)); !re.MatchString(got) {
		t.Errorf("row %q", got)
	}
	if got := string(part.gen(43, false)); strings.HasPrefix(got, "(43,") {
		t.Errorf("row without id %q", got)
	}
}

func BenchmarkEventReadWrite(b *testing.B) {
	wl := NewReadWrite()
	wl.Flags(pflag.NewFlagSet("t", pflag.ContinueOnError))
	rec := &recorder{affected: 1}
	w, _ := wl.newWorker(context.Background(), rec, dialect.MySQLDialect{}, 0, 1)
	b.ReportAllocs()
	var ev workload.Event
	for i := 0; i < b.N; i++ {
		rec.ran = rec.ran[:0]
		ev = workload.Event{}
		_ = w.Event(context.Background(), &ev)
	}
}

// nopExec discards statements, to measure generation alone.
type nopExec struct{}

func (nopExec) prepare(context.Context, *stmt) error       { return nil }
func (nopExec) query(context.Context, *stmt) error         { return nil }
func (nopExec) exec(context.Context, *stmt) (int64, error) { return 1, nil }
func (nopExec) close(*stmt) error                          { return nil }

func BenchmarkEventGeneration(b *testing.B) {
	for _, name := range []string{"oltp_read_write", "oltp_point_select", "oltp_insert", "select_random_points"} {
		b.Run(name, func(b *testing.B) {
			wl := byName(b, name).(*Workload)
			wl.Flags(pflag.NewFlagSet("t", pflag.ContinueOnError))
			w, err := wl.newWorker(context.Background(), nopExec{}, dialect.MySQLDialect{}, 0, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var ev workload.Event
			for i := 0; i < b.N; i++ {
				_ = w.Event(context.Background(), &ev)
			}
		})
	}
}

func BenchmarkRowGen(b *testing.B) {
	c := DefaultConfig()
	g := newRowGen(&c, 1, 1000000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		g.gen(int64(i%1000000)+1, false)
	}
}

// closer counts Close calls.
type closer struct{ n int }

func (c *closer) Close() error { c.n++; return nil }

// TestCloseEndsSession: a worker whose connection ends the server session
// closes only the connection (the server frees its statements); one on a
// pooled connection closes every statement first.
func TestCloseEndsSession(t *testing.T) {
	for _, ends := range []bool{true, false} {
		wl := setup(t, "oltp_read_write", "--tables=2").(*Workload)
		w, rec := newTestWorker(t, wl, target.Postgres, 0)
		conn := &closer{}
		w.conn, w.endsSession = conn, ends
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want := 0
		if !ends {
			want = 2*9 + 3 // per table: 1 point, 4 range, 4 write statements; custom, BEGIN, COMMIT
		}
		if rec.closed != want || conn.n != 1 {
			t.Errorf("endsSession %v: %d statements closed (want %d), connection closed %d times", ends, rec.closed, want, conn.n)
		}
	}
}
