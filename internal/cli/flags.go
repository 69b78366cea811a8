package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	// sysbench spells flags both ways: --table_size and --table-size.
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	return fs
}

// parseFlags parses args and turns pflag's errors into one-line usage errors.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return usagef("see `dbarena help %s` for flags", fs.Name())
		}
		return usagef("%s", oneLine(err.Error()))
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// secondsDuration is a duration flag that also accepts plain seconds, as
// sysbench does (--time=60).
type secondsDuration struct{ d *time.Duration }

func (v secondsDuration) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

func (v secondsDuration) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 {
			return fmt.Errorf("must not be negative")
		}
		if !(n*float64(time.Second) < float64(math.MaxInt64)) { // NaN too
			return fmt.Errorf("%s s is out of range (at most %d s)", s, math.MaxInt64/int64(time.Second))
		}
		*v.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want seconds or a duration like 30s, 5m")
	}
	if d < 0 {
		return fmt.Errorf("must not be negative")
	}
	*v.d = d
	return nil
}

func (v secondsDuration) Type() string { return "duration" }

func durationFlag(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(secondsDuration{p}, name, usage)
}

// keyValues is a repeatable KEY=VALUE flag that keeps order.
type keyValues struct {
	pairs *[][2]string
}

func (v keyValues) String() string {
	if v.pairs == nil {
		return ""
	}
	var parts []string
	for _, p := range *v.pairs {
		parts = append(parts, p[0]+"="+p[1])
	}
	return strings.Join(parts, ",")
}

func (v keyValues) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	*v.pairs = append(*v.pairs, [2]string{strings.TrimSpace(k), val})
	return nil
}

func (v keyValues) Type() string { return "KEY=VALUE" }

// credentialFlags are the password sources of a DSN --target without a
// password (docs/CLI.md, "Secrets").
type credentialFlags struct {
	passwordFile string
	optionFile   string
}

func (c *credentialFlags) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.passwordFile, "password-file", "", "read the --target password from the first line of this file (keeps it out of ps)")
	fs.StringVar(&c.optionFile, "mysql-option-file", "", "MySQL-style option file whose [client] password= is used (default ~/.my.cnf)")
}
