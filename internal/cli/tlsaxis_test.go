package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const argvPasswordWarning = "dbarena: warning: the password in --password is visible to every local user in ps; use --password-file\n"

// TestServerStartPasswordFile: `server start --password-file FILE` gives
// the workload account the file's first line, without the argv warning;
// `--password P` still works and prints the warning, once.
func TestServerStartPasswordFile(t *testing.T) {
	needServers(t)
	const pw = "pwfile-secret-7"
	pwFile := writeFile(t, filepath.Join(t.TempDir(), "pw"), pw+"\nnot the password\n", 0o600)
	r := dbarena(t, "server", "start", "cli-pwfile", "--flavor", "mariadb", "--profile", "fast", "--password-file", pwFile).mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "server", "rm", "cli-pwfile") })
	if strings.Contains(r.stderr, "visible to every local user") || strings.Contains(r.stdout+r.stderr, pw) {
		t.Errorf("--password-file: warning or password in the output:\n%s\n%s", r.stdout, r.stderr)
	}
	sb, err := suite.mgr.Get("cli-pwfile")
	if err != nil {
		t.Fatal(err)
	}
	tg := sb.Target()
	tg.Password = pw
	db := openTarget(t, tg)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("the password of --password-file does not log in: %v", err)
	}

	r = dbarena(t, "server", "start", "cli-pwfile", "--password", pw).mustSucceed(t)
	if r.stderr != argvPasswordWarning {
		t.Errorf("--password: stderr %q, want the warning %q", r.stderr, argvPasswordWarning)
	}
}

// TestServerStartPasswordFileErrors: a missing or empty file and both
// flags are one-line usage errors naming the flag.
func TestServerStartPasswordFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, filepath.Join(dir, "empty"), "\nsecond\n", 0o600)
	pw := writeFile(t, filepath.Join(dir, "pw"), "x\n", 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--password-file", filepath.Join(dir, "missing")}, "--password-file: open " + filepath.Join(dir, "missing")},
		{[]string{"--password-file", empty}, "--password-file " + empty + ":1: empty password line"},
		{[]string{"--password-file", pw, "--password", "y"}, "--password and --password-file exclude each other"},
	} {
		r := dbarena(t, append([]string{"server", "start", "cli-pwfile-bad", "--flavor", "mariadb"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
