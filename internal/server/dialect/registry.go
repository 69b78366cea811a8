// Package dialect is the registry of server flavors: it lists every flavor
// dbarena knows (one line each, below) and finds the one a target needs.
// What a flavor means is package flavor's interface; each flavor lives in
// its own folder (internal/flavor/mysql, internal/flavor/postgres).
package dialect

import (
	"fmt"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/flavor/mysql"
	"github.com/dbarena/dbarena/internal/flavor/postgres"
	"github.com/dbarena/dbarena/internal/server/target"
)

// flavors lists every server flavor, one line each. The first dialect of
// a family is the family's (For).
var flavors = []flavor.Dialect{
	mysql.Dialect{},
	postgres.Dialect{},
}

func init() {
	for _, d := range flavors {
		for _, f := range d.Flavors() {
			target.RegisterFlavor(f, d.Family())
		}
	}
}

// All returns every registered dialect, in registry order.
func All() []Dialect { return append([]Dialect(nil), flavors...) }

// For returns the dialect of a protocol family.
func For(f target.Family) (Dialect, error) {
	for _, d := range flavors {
		if d.Family() == f {
			return d, nil
		}
	}
	return nil, fmt.Errorf("no dialect for family %q", f)
}

// Of returns the dialect that serves t's flavor, or its family's when no
// dialect lists the flavor.
func Of(t target.Target) (Dialect, error) { return ForFlavor(t.Flavor) }

// ForFlavor returns the dialect that serves f, or f's family's when no
// dialect lists f.
func ForFlavor(f target.Flavor) (Dialect, error) {
	for _, d := range flavors {
		for _, g := range d.Flavors() {
			if g == f {
				return d, nil
			}
		}
	}
	return For(f.Family())
}

// MustFor is ForFlavor for a flavor dbarena itself parsed or started
// (registered, hence served): it panics otherwise.
func MustFor(f target.Flavor) Dialect {
	d, err := ForFlavor(f)
	if err != nil {
		panic(err)
	}
	return d
}
