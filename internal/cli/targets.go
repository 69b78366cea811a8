package cli

import (
	"context"
	"fmt"

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

// resolveStoreDSN returns a --results location with the password of a DSN
// filled in (execute.StoreDSN).
func (a *App) resolveStoreDSN(loc string) (string, error) {
	loc, err := execute.StoreDSN(loc, a.credentialSources(credentialFlags{}, execute.ResultsPasswordEnv), a.warnArgvPassword)
	if err != nil {
		return "", usagef("%w", err)
	}
	return loc, nil
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
