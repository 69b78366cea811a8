package execute

import "errors"

// Kind says what went wrong, so that the caller picks the exit code
// (docs/CLI.md): bad input 2, unreachable target 3, the rest 1.
type Kind int

// Error kinds.
const (
	// Failed: the run or its setup failed (exit 1).
	Failed Kind = iota
	// BadInput: a bad flag, path or value, or a server limit the run would
	// hit (exit 2).
	BadInput
	// Unreachable: the target could not be reached or started (exit 3).
	Unreachable
	// NotReady: the workload's data is missing or incomplete (exit 1, with
	// the command that fixes it).
	NotReady
)

// Error is an error with its Kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of err: that of the first *Error in its chain,
// Failed when there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Failed
}

func wrap(k Kind, err error) error { return &Error{Kind: k, Err: err} }
