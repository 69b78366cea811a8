package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNotFound reports a sandbox name with no sandbox.
	ErrNotFound = errors.New("sandbox not found")
	// ErrNoServer reports that no usable server binary was found.
	ErrNoServer = errors.New("no database server binary found")
	// ErrInvalidSpec wraps the problems Spec.Validate reports, and
	// changes Start cannot make to an existing sandbox.
	ErrInvalidSpec = errors.New("invalid sandbox spec")
)

// StartError is a server that failed to initialise, start, answer or take
// its account. It carries the last lines of the server's error log.
type StartError struct {
	// Name is the sandbox name.
	Name string
	// Phase is "initialize", "start", "wait" or "bootstrap".
	Phase string
	// Err is the underlying failure.
	Err error
	// LogFile is the error log the tail comes from.
	LogFile string
	// LogTail holds the last ~20 lines the server wrote during this attempt.
	LogTail string
}

// Error names the sandbox, the phase and the cause, followed by the log tail.
func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox %q: %s failed: %v", e.Name, e.Phase, e.Err)
	if e.LogTail != "" {
		fmt.Fprintf(&b, "\nlast lines of %s:\n%s", e.LogFile, e.LogTail)
	}
	return b.String()
}

// Unwrap returns the underlying failure.
func (e *StartError) Unwrap() error { return e.Err }
