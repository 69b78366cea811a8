package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/server/credentials"
	"github.com/dbarena/dbarena/internal/server/target"
)

// resolveTarget turns a --target value into connection settings: a DSN,
// sandbox:NAME, or "" for the default sandbox (started if needed). A DSN
// without a password gets one from cred and the environment; one with a
// password works but draws a warning (it is visible in ps).
func (a *App) resolveTarget(ctx context.Context, spec string, cred credentialFlags) (target.Target, error) {
	ts := execute.Targets{Sandboxes: a.sandboxes(), Credentials: a.credentialSources(cred, credentials.DefaultEnv),
		ArgvPassword: a.warnArgvPassword}
	t, err := ts.Resolve(ctx, spec)
	if err != nil {
		return t, exitFor(err)
	}
	return t, nil
}

// resultsPasswordEnv is the variable a --results DSN without a password
// reads first; DBARENA_PASSWORD belongs to --target.
const resultsPasswordEnv = "DBARENA_RESULTS_PASSWORD"

// resolveStoreDSN returns a --results location with the password of a DSN
// filled in from DBARENA_RESULTS_PASSWORD, MYSQL_PWD or PGPASSWORD, and
// ~/.pgpass or ~/.my.cnf. File paths and unparsable DSNs come back as
// they are (store.Open reports the latter).
func (a *App) resolveStoreDSN(loc string) (string, error) {
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
		a.warnArgvPassword("--results", resultsPasswordEnv)
		return loc, nil
	}
	t, err := target.ParseDSN(loc)
	if err != nil {
		return loc, nil
	}
	src, err := credentials.Resolve(&t, a.credentialSources(credentialFlags{}, resultsPasswordEnv))
	if err != nil {
		return "", usagef("--results: %w", err)
	}
	if src == "" {
		return loc, nil
	}
	u.User = url.UserPassword(u.User.Username(), t.Password)
	return u.String(), nil
}

func (a *App) credentialSources(cred credentialFlags, env string) credentials.Sources {
	return credentials.Sources{
		PasswordFile: cred.passwordFile,
		PasswordEnv:  env,
		OptionFile:   cred.optionFile,
		Getenv:       a.Getenv,
		Warn:         func(s string) { fmt.Fprintf(a.Stderr, "dbarena: warning: %s\n", s) },
	}
}

// warnArgvPassword prints the one-line warning for a password typed on
// the command line.
func (a *App) warnArgvPassword(flag, instead string) {
	fmt.Fprintf(a.Stderr, "dbarena: warning: the password in %s is visible to every local user in ps; use %s\n", flag, instead)
}
