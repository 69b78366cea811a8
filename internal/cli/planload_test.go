package cli

import (
	"reflect"
	"testing"

	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
)

// TestPlanLoadOptions: a plan's load gets the options of dbarena load
// without flags (deferred indexes, LOAD DATA auto: docs/CLI.md), only its
// threads (default 2) and engine its own.
func TestPlanLoadOptions(t *testing.T) {
	var f loadFlags
	fs := newFlagSet("load")
	f.flags(fs)
	if err := parseFlags(fs, []string{"dump.sql"}); err != nil {
		t.Fatal(err)
	}
	cli, err := f.options(fs.Args())
	if err != nil {
		t.Fatal(err)
	}
	if !cli.DeferIndexes || cli.LoadData != "auto" || cli.Bulk != "off" || cli.Threads != 4 {
		t.Errorf("dbarena load's defaults: %+v", cli)
	}
	for _, c := range []struct {
		job     lab.LoadJob
		threads int
	}{
		{lab.LoadJob{Data: &plan.Data{Threads: 3}, Engine: "Aria"}, 3},
		{lab.LoadJob{Data: &plan.Data{}}, lab.DefaultLoadThreads},
	} {
		pl := lab.LoadOptions("dump.sql", c.job)
		if pl.Threads != c.threads || pl.Rewrite.Engine != c.job.Engine {
			t.Errorf("%+v: threads %d, engine %q", c.job.Data, pl.Threads, pl.Rewrite.Engine)
		}
		pl.Threads, pl.Rewrite = cli.Threads, cli.Rewrite
		if !reflect.DeepEqual(pl, cli) {
			t.Errorf("plan load's options differ from dbarena load's:\nplan %+v\ncli  %+v", pl, cli)
		}
	}
}
