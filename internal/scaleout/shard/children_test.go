package shard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestChildArgs: a local shard runs the parent's command line less the
// flags that make it the parent, in either spelling.
func TestChildArgs(t *testing.T) {
	got := ChildArgs([]string{"run", "oltp_read_only", "--shards", "3", "--local", "--run-id=r1", "--json", "out.json",
		"--threads", "4", "--shards=3", "--tag", "a=b"})
	want := []string{"run", "oltp_read_only", "--threads", "4", "--tag", "a=b"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.HasPrefix(NewKey(), "local-") || CheckKey(NewKey()) != nil {
		t.Errorf("NewKey %q is not a run ID", NewKey())
	}
}

// TestStoppedBy: the shard whose failure stopped the others is the one
// that did not exit with ErrStopped.
func TestStoppedBy(t *testing.T) {
	cause := errors.New("shard 1: bad flag")
	exits := []error{fmt.Errorf("shard 0: %w", ErrStopped), cause, nil}
	if got := StoppedBy(exits); got != cause {
		t.Errorf("StoppedBy = %v, want %v", got, cause)
	}
	if got := StoppedBy([]error{cause, nil}); got != nil {
		t.Errorf("no shard stopped: StoppedBy = %v", got)
	}
	if Unresponsive(exits) != nil {
		t.Error("Unresponsive found a shard in exits without one")
	}
}
