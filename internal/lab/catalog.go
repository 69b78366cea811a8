package lab

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

var labelUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)

// Expand replaces each "catalog: FLAVOR" server of p with every server of
// that flavor in cat (any PostgreSQL for postgres) and the first system
// binary of it that discover finds (called only for such servers), and sets the baseline to the first server when the
// plan names none. It returns warnings for catalogue servers the plan
// names that cat does not hold and for data dumps that do not exist.
func Expand(p *plan.Plan, cat []catalog.Entry, discover func() ([]sandbox.Binary, error)) []string {
	var warnings []string
	var bins []sandbox.Binary
	discovered := false
	var out []plan.Server
	for _, s := range p.Servers {
		switch {
		case s.Catalog != "":
			want, _ := target.ParseFlavor(s.Catalog)
			found := false
			for _, e := range cat {
				if e.Flavor == want {
					c := s
					c.Catalog, c.Server, c.Name = "", e.Name, labelUnsafe.ReplaceAllString(e.Name, "-")
					out, found = append(out, c), true
				}
			}
			if !discovered {
				bins, _ = discover()
				discovered = true
			}
			for _, b := range bins {
				if b.Flavor == want {
					c := s
					c.Catalog, c.Flavor, c.Name = "", string(b.Flavor), "system-"+string(b.Flavor)
					out, found = append(out, c), true
					break
				}
			}
			if !found {
				warnings = append(warnings, fmt.Sprintf("%s:%d: no %s server in the catalogue or on the system", p.File, s.Line, s.Catalog))
			}
		case s.Server != "":
			if !slices.ContainsFunc(cat, func(e catalog.Entry) bool { return e.Name == s.Server }) {
				warnings = append(warnings, fmt.Sprintf("%s:%d: server %q is not in the catalogue: its cells will fail (scripts/fetch-servers, dbarena server import)", p.File, s.Line, s.Server))
			}
			out = append(out, s)
		default:
			out = append(out, s)
		}
	}
	p.Servers = out
	if len(p.Baseline) == 0 && len(out) > 0 {
		p.Baseline = []plan.Param{{Key: "server", Value: out[0].Name}}
	}
	return append(warnings, dataWarnings(p)...)
}
