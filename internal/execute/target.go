package execute

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/dbarena/dbarena/internal/server/credentials"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Targets turns --target values into connection settings: a DSN,
// sandbox:NAME, or "" for the default sandbox (started if needed).
type Targets struct {
	Sandboxes *sandbox.Manager
	// Credentials are the password sources of a DSN without a password
	// (--password-file, --mysql-option-file, DBARENA_PASSWORD...).
	Credentials credentials.Sources
	// ArgvPassword warns of a password typed on the command line, in
	// flag, which every local user sees in ps; instead says what to use.
	ArgvPassword func(flag, instead string)
}

// Resolve resolves spec. A DSN without a password gets one from the
// credential sources; one with a password works but draws the
// ArgvPassword warning. Errors are BadInput (a bad DSN or sandbox name,
// credentials given for a sandbox) or Unreachable (a sandbox that cannot
// start).
func (ts Targets) Resolve(ctx context.Context, spec string) (target.Target, error) {
	m, cred := ts.Sandboxes, ts.Credentials
	if spec == "" || strings.HasPrefix(spec, "sandbox:") {
		if cred.PasswordFile != "" || cred.OptionFile != "" {
			return target.Target{}, wrap(BadInput, errors.New("--password-file and --mysql-option-file apply to a DSN --target; a sandbox keeps its own password"))
		}
	}
	switch {
	case spec == "":
		sb, err := m.Default(ctx)
		if err != nil {
			return target.Target{}, wrap(Unreachable, fmt.Errorf("default sandbox: %w", err))
		}
		return sb.Target(), nil
	case strings.HasPrefix(spec, "sandbox:"):
		name := strings.TrimPrefix(spec, "sandbox:")
		sb, err := m.Get(name)
		if errors.Is(err, sandbox.ErrNotFound) {
			return target.Target{}, wrap(BadInput, fmt.Errorf("--target %s: no such sandbox (see `dbarena server list`)", spec))
		}
		if err != nil {
			return target.Target{}, wrap(Unreachable, fmt.Errorf("--target %s: %w", spec, err))
		}
		if sb.State != sandbox.StateRunning {
			if sb, err = m.Start(ctx, sandbox.Spec{Name: name}); err != nil {
				return target.Target{}, wrap(Unreachable, fmt.Errorf("--target %s: %w", spec, err))
			}
		}
		return sb.Target(), nil
	}
	t, err := target.ParseDSN(spec)
	if err != nil {
		return target.Target{}, wrap(BadInput, fmt.Errorf("--target: %w", err))
	}
	if t.Password != "" {
		if cred.PasswordFile != "" {
			return target.Target{}, wrap(BadInput, errors.New("--target has a password and --password-file gives one: keep only --password-file"))
		}
		if ts.ArgvPassword != nil {
			ts.ArgvPassword("--target", "--password-file or DBARENA_PASSWORD")
		}
		return t, nil
	}
	if _, err := credentials.Resolve(&t, cred); err != nil {
		return target.Target{}, wrap(BadInput, err)
	}
	return t, nil
}

// ResultsPasswordEnv is the variable a --results DSN without a password
// reads first; DBARENA_PASSWORD belongs to --target.
const ResultsPasswordEnv = "DBARENA_RESULTS_PASSWORD"

// StoreDSN returns a --results location with the password of a DSN
// filled in from DBARENA_RESULTS_PASSWORD, MYSQL_PWD or PGPASSWORD, and
// ~/.pgpass or ~/.my.cnf. File paths and unparsable DSNs come back as
// they are (store.Open reports the latter); a
// DSN with a password works but draws the argvPassword warning.
func StoreDSN(loc string, src credentials.Sources, argvPassword func(flag, instead string)) (string, error) {
	if !strings.Contains(loc, "://") {
		return loc, nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return loc, nil
	}
	switch u.Scheme {
	case "mysql", "mariadb", "postgres", "postgresql":
	default:
		return loc, nil // not a store DSN: store.Open says why
	}
	if _, ok := u.User.Password(); ok {
		if argvPassword != nil {
			argvPassword("--results", ResultsPasswordEnv)
		}
		return loc, nil
	}
	t, err := target.ParseDSN(loc)
	if err != nil {
		return loc, nil
	}
	from, err := credentials.Resolve(&t, src)
	if err != nil {
		return "", fmt.Errorf("--results: %w", err)
	}
	if from == "" {
		return loc, nil
	}
	u.User = url.UserPassword(u.User.Username(), t.Password)
	return u.String(), nil
}
