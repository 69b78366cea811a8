package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// Connect says how often a worker opens a new connection: 0 keeps one for
// the whole run (persistent); N > 0 opens a new one before every N-th
// event (1: per event, as pgbench -C; N: as mysqlslap --detach=N).
// It implements pflag.Value for --connect.
type Connect int

// ParseConnect reads a --connect value: persistent, per-event or every=N.
func ParseConnect(s string) (Connect, error) {
	switch v := strings.TrimSpace(s); {
	case v == "persistent":
		return 0, nil
	case v == "per-event":
		return 1, nil
	case strings.HasPrefix(v, "every="):
		n, err := strconv.Atoi(v[len("every="):])
		if err != nil || n < 1 {
			return 0, fmt.Errorf("--connect: every=N needs a whole number N >= 1, got %q", s)
		}
		return Connect(n), nil
	}
	return 0, fmt.Errorf("--connect: %q is not persistent, per-event or every=N", s)
}

// String is the flag form of c.
func (c Connect) String() string {
	switch {
	case c <= 0:
		return "persistent"
	case c == 1:
		return "per-event"
	}
	return "every=" + strconv.Itoa(int(c))
}

// Set parses a --connect value into c.
func (c *Connect) Set(s string) error {
	v, err := ParseConnect(s)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Type names the flag's value in help.
func (c *Connect) Type() string { return "mode" }
