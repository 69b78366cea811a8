package plan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// TestShards: shards: N is the plan's default, a workload's shards
// overrides it, and every step of the workload carries its count.
func TestShards(t *testing.T) {
	p, errs := Parse("s.yaml", []byte(`name: s
servers: [{name: m, flavor: mariadb}]
shards: 3
workloads:
  - oltp_point_select
  - name: oltp_read_only
    shards: 2
  - name: tpcc
    shards: 1
axes:
  threads: [4]
warmup: 0
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string][2]int{"oltp_point_select": {3, 3}, "oltp_read_only": {2, 7}, "tpcc": {1, 9}}
	steps := p.Schedule()
	if len(steps) != 9 {
		t.Fatalf("%d steps, want 9", len(steps))
	}
	for _, s := range steps {
		if w := want[s.Workload]; s.Shards != w[0] || s.ShardsLine != w[1] {
			t.Errorf("%s: %d shards (line %d), want %d (line %d)", s.Workload, s.Shards, s.ShardsLine, w[0], w[1])
		}
		if got, want := s.CoordMap()[CoordShards], map[bool]string{true: strconv.Itoa(s.Shards)}[s.Shards > 1]; got != want {
			t.Errorf("%s: shards coordinate %q, want %q", s.Workload, got, want)
		}
	}
	// One workload by one process and by shards: two cells.
	p, errs = Parse("s.yaml", []byte("name: s\nservers: [{name: m, flavor: mariadb}]\nworkloads: [w, {name: w, shards: 2}]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if c := p.Cells(); len(c) != 2 || c[1].ID != "workload=w,server=m,shards=2" {
		t.Errorf("cells %+v, want 2, the second workload=w,server=m,shards=2", c)
	}
	p, errs = Parse("s.yaml", []byte("name: s\nservers: [{name: m, flavor: mariadb}]\nworkloads: [oltp_point_select]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if s := p.Schedule()[0]; s.Shards != 1 || s.ShardsLine != 0 {
		t.Errorf("default: %d shards (line %d), want 1 (line 0)", s.Shards, s.ShardsLine)
	}
	// jobs: N is the run flag --jobs of the workload's steps.
	p, errs = Parse("s.yaml", []byte("name: s\nservers: [{name: m, flavor: postgres}]\nworkloads: [x, {name: y, jobs: 2, sched: normal, placement: kernel}]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if s := p.Schedule(); s[0].Jobs != 0 || s[len(s)-1].Jobs != 2 {
		t.Errorf("jobs %d and %d, want 0 and 2", s[0].Jobs, s[len(s)-1].Jobs)
	}
	// sched: is the run flag --sched.
	if s := p.Schedule(); s[0].Sched != "" || s[len(s)-1].Sched != "normal" {
		t.Errorf("sched %q and %q, want \"\" and normal", s[0].Sched, s[len(s)-1].Sched)
	}
	// placement: is the run flag --placement.
	if s := p.Schedule(); s[0].Placement != "" || s[len(s)-1].Placement != "kernel" {
		t.Errorf("placement %q and %q, want \"\" and kernel", s[0].Placement, s[len(s)-1].Placement)
	}
	if MaxShards != shard.MaxShards {
		t.Errorf("MaxShards %d, shard.MaxShards %d", MaxShards, shard.MaxShards)
	}
}

func TestShardsErrors(t *testing.T) {
	const head = "name: s\nservers: [{name: m, flavor: mariadb}]\n"
	for _, tc := range []struct{ plan, want string }{
		{head + "workloads: [x]\nshards: 0\n", `s.yaml:4: shards "0": want a whole number from 1 to 1024`},
		{head + "workloads: [x]\nshards: two\n", `s.yaml:4: shards "two": want a whole number from 1 to 1024`},
		{head + "workloads: [x]\nshards: [2]\n", `s.yaml:4: shards: want a single value, not a list`},
		{head + "workloads:\n  - name: x\n    shards: 1025\n", `s.yaml:5: shards "1025": want a whole number from 1 to 1024`},
		{head + "workloads:\n  - name: x\n    shard: 2\n", `s.yaml:5: unknown workload key "shard" (want name, params, shards, jobs, sched, placement, thresholds)`},
		{head + "workloads:\n  - name: x\n    sched: fifo\n", `s.yaml:5: sched: want auto, batch or normal, not "fifo"`},
		{head + "workloads:\n  - name: x\n    placement: pinned\n", `s.yaml:5: placement: want follow or kernel, not "pinned"`},
		{head + "workloads:\n  - name: x\n    jobs: -1\n", `s.yaml:5: jobs "-1": want a whole number from 0 to 4096`},
		{head + "workloads:\n  - name: x\n    shards: 2\nwarmup: auto\n",
			`s.yaml:5: shards 2: a sharded step needs a fixed warmup (warmup: auto ends each shard's at its own time)`},
		{head + "workloads: [x]\nshards: 2\nwarmup: auto\n", `s.yaml:4: shards 2: a sharded step needs a fixed warmup`},
	} {
		_, errs := Parse("s.yaml", []byte(tc.plan))
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.plan, got, tc.want)
		}
	}
}
