package script

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTxLogFormats: -l lines in pgbench 15's formats (doLog), field by
// field, for each option that adds or changes a field.
func TestTxLogFormats(t *testing.T) {
	cases := []struct {
		o     BenchOptions
		r     txResult
		want  string // per-transaction line
		aggRe string // aggregate line after this one transaction
	}{
		{BenchOptions{MaxTries: 1}, txOK, `^3 5 1500 0 \d{10} \d{1,6}$`, `^\d{10} 1 1500 2250000 1500 1500 0$`},
		{BenchOptions{MaxTries: 1}, txSerialization, `^3 5 failed 0 \d{10} \d{1,6}$`, `^\d{10} 0 0 0 0 0 1$`},
		{BenchOptions{MaxTries: 3, FailuresDetailed: true}, txDeadlock, `^3 5 deadlock 0 \d{10} \d{1,6} 1$`, `^\d{10} 0 0 0 0 0 0 1 1 1$`},
		{BenchOptions{MaxTries: 1, FailuresDetailed: true}, txSerialization, `^3 5 serialization 0 \d{10} \d{1,6}$`, `^\d{10} 0 0 0 0 0 1 0$`},
		{BenchOptions{MaxTries: 1, Rate: 10}, txOK, `^3 5 1500 0 \d{10} \d{1,6} 20$`, `^\d{10} 1 1500 2250000 1500 1500 0 20 400 20 20$`},
		{BenchOptions{MaxTries: 1, Rate: 10, LatencyLimit: 1}, txSkipped, `^3 5 skipped 0 \d{10} \d{1,6} 20$`, `^\d{10} 0 0 0 0 0 0 0 0 0 0 1$`},
	}
	for i, c := range cases {
		dir := t.TempDir()
		for _, agg := range []int{0, 1} {
			o := c.o
			o.AggInterval = agg
			o.LogPrefix = filepath.Join(dir, "log")
			o.Threads, o.Clients = 1, 4
			b := &bench{o: o}
			if err := b.openLogs(); err != nil {
				t.Fatal(err)
			}
			tries := 1
			if c.want[len(c.want)-3:] == " 1$" {
				tries = 2
			}
			b.logs[0].log(b, &client{id: 3, cnt: 5}, 0, c.r, 1500, 20, tries, false)
			b.flushAgg()
			b.closeLogs()
			files, _ := filepath.Glob(o.LogPrefix + ".*")
			data, _ := os.ReadFile(files[0])
			os.Remove(files[0])
			line := strings.TrimSpace(string(data))
			re := c.want
			if agg > 0 {
				re = c.aggRe
			}
			if !regexp.MustCompile(re).MatchString(line) {
				t.Errorf("case %d (aggregate %d): %q does not match %s", i, agg, line, re)
			}
		}
	}
}

// TestCheckInit: pgbench's -I, -F and partition checks.
func TestCheckInit(t *testing.T) {
	if err := CheckSteps("dtgGvpf "); err != nil {
		t.Error(err)
	}
	if err := CheckSteps("dtx"); err == nil || !strings.Contains(err.Error(), `unrecognized initialization step "x"`) {
		t.Errorf("dtx: %v", err)
	}
	wl := New().(*Workload)
	wl.init.Fillfactor, wl.init.PartitionMethod = 5, "hash"
	errs := wl.checkInit()
	if len(errs) != 2 {
		t.Errorf("errors %v, want fillfactor and partition-method", errs)
	}
	o := InitOptions{Scale: 1, Fillfactor: 100, Partitions: 3, PartitionMethod: "range", Tablespace: `t"s`}
	tq := strings.Join(o.statements('t'), "\n")
	for _, want := range []string{`create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) partition by range (aid) tablespace "t""s"`,
		"for values from (minvalue) to (33335)", "for values from (33335) to (66669)", "for values from (66669) to (maxvalue) with (fillfactor=100)",
		`create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100) tablespace "t""s"`} {
		if !strings.Contains(tq, want) {
			t.Errorf("create statements lack %q:\n%s", want, tq)
		}
	}
}
