package plan

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// aliasBomb is a "billion laughs": each anchor repeats the one before it ten
// times, so levels levels expand to 10^(levels+1) values.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("name: x\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s*a%d]\n", i, i, strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 9), i-1)
	}
	return b.String()
}

func TestOddInput(t *testing.T) {
	tests := []struct {
		name, plan, want string
	}{
		{"empty", "", "p.yaml: empty plan"},
		{"only comments", "# a plan\n\n# to come\n", "p.yaml: empty plan"},
		{"null", "~\n", "p.yaml:1: a plan is a mapping of keys"},
		{"alias bomb", aliasBomb(8), "p.yaml:6: aliases expand the plan to more than 100000 values"},
		{"alias in its own anchor", "name: x\nservers: &s [*s]\n", "p.yaml:2: alias *s is inside its own anchor &s"},
		{"complex key", "name: x\n? [a]\n: b\n", "p.yaml:2: a key is a single value, not a list"},
		{"huge matrix", "name: x\nservers: [{flavor: mariadb}, {flavor: postgres}]\nworkloads: [w]\nrounds: 1000\naxes:\n  threads: [1, 2, 4, 8, 16, 32]\n",
			"p.yaml:5: the plan expands to 12000 runs (workloads x servers x axis values x rounds); at most 10000"},
		{"huge matrix without axes", "name: x\nservers: [{flavor: mariadb, engines: [" + strings.Repeat("e, ", 20) + "e]}]\nworkloads: [" + strings.Repeat("w, ", 999) + "w]\nrounds: 1000\n",
			"p.yaml:4: the plan expands to 21000000 runs"},
		{"too big", "name: x\ndescription: " + strings.Repeat("x", MaxSize) + "\n", fmt.Sprintf("p.yaml: %d bytes: a plan is at most 64 KiB", MaxSize+22)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Parse("p.yaml", []byte(tt.plan))
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), tt.want) {
				t.Errorf("errors %q, want first %q", errs, tt.want)
			}
		})
	}
}

// TestTooBigToExpand checks that a plan whose schedule would be too long or
// too heavy to build is refused, and not returned for further checks.
func TestTooBigToExpand(t *testing.T) {
	var params, threads []string
	for i := range 1000 {
		params = append(params, fmt.Sprintf("p%d: 1", i))
		threads = append(threads, fmt.Sprint(i+1))
	}
	tests := []struct{ name, plan, want string }{
		{"runs", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nrounds: 11\naxes:\n  threads: [" + strings.Join(threads, ", ") + "]\n",
			"p.yaml:5: the plan expands to 11000 runs"},
		{"work", "name: x\nservers: [{flavor: mariadb}]\nworkloads:\n  - name: w\n    params: {" + strings.Join(params, ", ") + "}\naxes:\n  threads: [" + strings.Join(threads, ", ") + "]\n",
			"p.yaml:6: the plan's 3000 runs hold too many parameters, settings and axes to expand"},
		{"many workloads and servers", "name: x\nservers: &s [" + strings.Repeat("{flavor: mariadb}, ", 300) + "{flavor: mysql}]\nworkloads: &w [" + strings.Repeat("w, ", 300) + "w]\nrounds: 1\n",
			"p.yaml:4: the plan expands to 90601 runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := Parse("p.yaml", []byte(tt.plan))
			if p != nil || len(errs) == 0 || !strings.HasPrefix(errs[len(errs)-1].Error(), tt.want) {
				t.Errorf("plan %v, errors %q, want last %q", p != nil, errs, tt.want)
			}
		})
	}
}

// TestAliasBombIsCheap checks that a billion-laughs plan (10^10 values once
// expanded) is refused after reading only what the file holds.
func TestAliasBombIsCheap(t *testing.T) {
	data := []byte(aliasBomb(9))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, errs := Parse("p.yaml", data)
	runtime.ReadMemStats(&after)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "aliases expand the plan") {
		t.Fatalf("errors %q", errs)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("parsing a %d-byte alias bomb allocated %d bytes", len(data), alloc)
	}
}

// TestAliases checks that anchors and aliases, within bounds, work as
// written out.
func TestAliases(t *testing.T) {
	p, errs := Parse("p.yaml", []byte(`name: x
servers:
  - name: a
    flavor: mariadb
    settings: &common
      sync_binlog: 0
      innodb_flush_log_at_trx_commit: 2
  - name: b
    flavor: mysql
    settings: *common
workloads: [oltp_read_only]
axes:
  threads: &t [1, 2]
  tables: *t
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if s := p.Servers[1].Settings; len(s) != 2 || s[0].Key != "sync_binlog" || s[1].Value != "2" {
		t.Errorf("aliased settings = %+v", s)
	}
	if v := p.Axes[1].Values; len(v) != 2 || v[1].Value != "2" {
		t.Errorf("aliased axis = %+v", v)
	}
}

// TestScaleLeavesHugeSizes checks that Scale leaves sizes it cannot scale
// exactly (huge, NaN) for the workload's own check instead of overflowing.
func TestScaleLeavesHugeSizes(t *testing.T) {
	p, errs := Parse("p.yaml", []byte("name: x\nservers: [{flavor: mariadb}]\nworkloads:\n  - name: w\n    params: {table-size: 1e308, warehouses: NaN, scale: 10}\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p.Scale(0.5)
	got := fmt.Sprint(p.Workloads[0].Params)
	if want := "[{table-size 1e308 5} {warehouses NaN 5} {scale 5 5}]"; got != want {
		t.Errorf("params %s, want %s", got, want)
	}
}
