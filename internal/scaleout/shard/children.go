package shard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"
)

// NewKey returns a new run ID for a run whose shards run here (--local
// without --run-id): local-TIME-RANDOM.
func NewKey() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "local-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Unresponsive returns why Local killed the shard that stopped
// answering, if one did.
func Unresponsive(exits []error) *UnresponsiveError {
	for _, e := range exits {
		if ue := (*UnresponsiveError)(nil); errors.As(e, &ue) {
			return ue
		}
	}
	return nil
}

// StoppedBy returns the exit error of the shard whose failure before the
// start stopped the others (ErrStopped), if one did.
func StoppedBy(exits []error) error {
	if !slices.ContainsFunc(exits, func(e error) bool { return errors.Is(e, ErrStopped) }) {
		return nil
	}
	for _, e := range exits {
		if e != nil && !errors.Is(e, ErrStopped) {
			return e
		}
	}
	return nil
}

// ChildArgs is the command line of a local shard: the parent's, less
// the flags that make it the parent (--local, --shards, --run-id, --json).
func ChildArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "--") {
			out = append(out, args[i])
			continue
		}
		switch name {
		case "local":
			continue
		case "shards", "run-id", "json":
			if !hasValue {
				i++ // the value is the next argument
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}
