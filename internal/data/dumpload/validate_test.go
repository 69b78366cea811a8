package dumpload

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// TestOptionsValidate: each bad option is refused naming its flag; the
// defaults pass.
func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.Threads = 0 }, "--threads"},
		{func(o *Options) { o.Format = "csv" }, "--format"},
		{func(o *Options) { o.Bulk = "yes" }, "--bulk"},
		{func(o *Options) { o.Bulk, o.ContinueOnError = "on", true }, "--continue-on-error"},
		{func(o *Options) { o.LoadData = "maybe" }, "--load-data"},
		{func(o *Options) { o.StallTimeout = 1 }, "--stall-timeout"},
		{func(o *Options) { o.Rewrite = dump.Rewrite{Engine: "Inno DB"} }, "--engine"},
		{func(o *Options) { o.Rewrite = dump.Rewrite{TableOptions: "X=1; DROP"} }, "--table-options"},
	} {
		o := DefaultOptions()
		c.set(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.want, err)
		}
	}
}
