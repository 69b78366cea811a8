package cli

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// dbarenaEnv runs the CLI in-process with the suite's dbarena home, HOME
// set to home and the given extra environment.
func dbarenaEnv(t testing.TB, home string, env map[string]string, args ...string) result {
	t.Helper()
	all := map[string]string{"DBARENA_HOME": suite.home, "HOME": home}
	for k, v := range env {
		all[k] = v
	}
	var out, errb bytes.Buffer
	app := NewApp(&out, &errb, append([]string{"dbarena"}, args...), func(k string) string { return all[k] },
		func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) })
	return result{code: app.Main(context.Background()), stdout: out.String(), stderr: errb.String()}
}

// bareDSN is the sandbox's TCP DSN without its password.
func bareDSN(sb *sandbox.Sandbox) (dsn, password string) {
	tg := sb.Target()
	password = tg.Password
	tg.Password = ""
	return tg.DSN(), password
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPasswordSources connects (dbarena cleanup tpcc, which drops nothing
// another test keeps) with the password from each source on both flavors,
// and checks that without one the server refuses the connection.
func TestPasswordSources(t *testing.T) {
	needServers(t)
	for _, sb := range []*sandbox.Sandbox{suite.mariadb, suite.postgres} {
		dsn, pw := bareDSN(sb)
		fam := sb.Target().Family()
		t.Run(string(fam), func(t *testing.T) {
			dir := t.TempDir()
			pwFile := writeFile(t, filepath.Join(dir, "pw"), pw+"\n", 0o600)
			conventional := map[target.Family]string{target.MySQL: "MYSQL_PWD", target.Postgres: "PGPASSWORD"}[fam]
			type tcase struct {
				name      string
				files     map[string]string // under HOME, mode 0600
				env       map[string]string
				args      []string
				wantCode  int
				wantWarn  string
				worldRead string // a file under HOME made 0644
			}
			cases := []tcase{
				{name: "none", wantCode: ExitUnreachable},
				{name: "password-file", args: []string{"--password-file", pwFile}},
				{name: "DBARENA_PASSWORD", env: map[string]string{"DBARENA_PASSWORD": pw}},
				{name: conventional, env: map[string]string{conventional: pw}},
				{name: "DBARENA_PASSWORD first", env: map[string]string{"DBARENA_PASSWORD": pw, conventional: "wrong"}},
				{name: "argv", wantWarn: "the password in --target is visible to every local user in ps"},
			}
			if fam == target.Postgres {
				cases = append(cases,
					tcase{name: "pgpass", files: map[string]string{".pgpass": "otherhost:*:*:*:wrong\n127.0.0.1:*:*:" + sb.Target().User + ":" + pw + "\n"}},
					tcase{name: "pgpass readable by others", files: map[string]string{".pgpass": "*:*:*:*:" + pw + "\n"},
						worldRead: ".pgpass", wantCode: ExitUnreachable, wantWarn: "has group or world access"})
			} else {
				opt := writeFile(t, filepath.Join(dir, "opt.cnf"), "[client]\npassword="+pw+"\n", 0o600)
				cases = append(cases,
					tcase{name: "my.cnf", files: map[string]string{".my.cnf": "[mysqld]\nport=1\n[client]\npassword=\"" + pw + "\"\n"}},
					tcase{name: "mysql-option-file", args: []string{"--mysql-option-file", opt}},
					tcase{name: "my.cnf world-writable", files: map[string]string{".my.cnf": "[client]\npassword=" + pw + "\n"},
						worldRead: ".my.cnf", wantCode: ExitUnreachable, wantWarn: "world-writable"})
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					home := t.TempDir()
					for name, text := range c.files {
						mode := os.FileMode(0o600)
						if name == c.worldRead {
							mode = 0o646
						}
						writeFile(t, filepath.Join(home, name), text, mode)
					}
					tg := dsn
					if c.name == "argv" {
						tg = sb.Target().DSN()
					}
					r := dbarenaEnv(t, home, c.env, append([]string{"cleanup", "tpcc", "--target", tg}, c.args...)...)
					if r.code != c.wantCode {
						t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.wantCode, r.stdout, r.stderr)
					}
					if c.wantWarn != "" && !strings.Contains(r.stderr, c.wantWarn) {
						t.Errorf("stderr lacks %q: %q", c.wantWarn, r.stderr)
					}
					if c.wantWarn == "" && strings.Contains(r.stderr, "warning") {
						t.Errorf("unexpected warning: %q", r.stderr)
					}
					assertNoPassword(t, "stdout", r.stdout)
					assertNoPassword(t, "stderr", r.stderr)
				})
			}
		})
	}
}

func TestPasswordFlagErrors(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, filepath.Join(dir, "empty"), "\n", 0o600)
	pw := writeFile(t, filepath.Join(dir, "pw"), "secret-pw\n", 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "mysql://u@127.0.0.1:1/db", "--password-file", empty}, "--password-file " + empty + ":1: empty password line"},
		{[]string{"--target", "mysql://u:secret-x@127.0.0.1:1/db", "--password-file", pw}, "keep only --password-file"},
		{[]string{"--target", "sandbox:pg", "--password-file", pw}, "apply to a DSN --target"},
	} {
		r := dbarenaEnv(t, dir, nil, append([]string{"cleanup", "tpcc"}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "secret-") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

func TestResultsDSNPassword(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".pgpass"), "db.example:5432:results:ru:from-pgpass\n", 0o600)
	for _, c := range []struct {
		loc  string
		env  map[string]string
		want string
		warn bool
	}{
		{"/tmp/x.db", map[string]string{execute.ResultsPasswordEnv: "p"}, "/tmp/x.db", false},
		{"mysql://ru@db.example/results", map[string]string{execute.ResultsPasswordEnv: "from-env", "DBARENA_PASSWORD": "target-only"},
			"mysql://ru:from-env@db.example/results", false},
		{"postgres://ru@db.example/results", nil, "postgres://ru:from-pgpass@db.example/results", false},
		{"postgres://ru:typed@db.example/results", map[string]string{execute.ResultsPasswordEnv: "from-env"}, "postgres://ru:typed@db.example/results", true},
	} {
		var out, errb bytes.Buffer
		env := map[string]string{"HOME": home}
		for k, v := range c.env {
			env[k] = v
		}
		a := NewApp(&out, &errb, []string{"dbarena"}, func(k string) string { return env[k] }, nil)
		got, err := a.resolveStoreDSN(c.loc)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.loc, got, err, c.want)
		}
		if warned := strings.Contains(errb.String(), "the password in --results is visible"); warned != c.warn {
			t.Errorf("%s: stderr %q", c.loc, errb.String())
		}
	}
}

// TestNoPasswordInChildArgv runs dbarena as a child process the way a user
// would, with the password in a file, and reads its command line and
// environment from /proc while it runs: neither holds the password.
func TestNoPasswordInChildArgv(t *testing.T) {
	needServers(t)
	prepareSmall(t, "")
	dsn, pw := bareDSN(suite.mariadb)
	pwFile := writeFile(t, filepath.Join(t.TempDir(), "pw"), pw+"\n", 0o600)
	args := []string{"run", "oltp_point_select", "--tables", "2", "--table-size", "2000", "--threads", "1",
		"--time", "600", "--report-interval", "1s", "--target", dsn, "--password-file", pwFile,
		"--results", filepath.Join(t.TempDir(), "r.db")}
	// The arguments are also the child's argv, as in a real invocation;
	// the test binary never parses them (TestMain hands them to the CLI).
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "DBARENA_HOME="+suite.home,
		childEnv+"="+strings.Join(args, "\x1f"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	// Wait for the first interval line: the run is connected and measuring.
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(2 * time.Minute)
	seen := ""
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child ended early:\n%s\n%s", seen, stderr.String())
			}
			seen += l + "\n"
			if strings.Contains(l, "qps:") {
				break wait
			}
		case <-timeout:
			t.Fatalf("child not running after 2 min:\n%s\n%s", seen, stderr.String())
		}
	}
	go func() {
		for range lines { // keep the pipe drained
		}
	}()
	proc := filepath.Join("/proc", itoa(int64(cmd.Process.Pid)))
	cmdline, err := os.ReadFile(filepath.Join(proc, "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cmdline), "--password-file") {
		t.Fatalf("read the wrong process: %q", cmdline)
	}
	environ, err := os.ReadFile(filepath.Join(proc, "environ"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"cmdline": string(cmdline), "environ": string(environ), "stdout": seen, "stderr": stderr.String()} {
		if strings.Contains(text, pw) {
			t.Errorf("the child's %s holds the password", name)
		}
	}
}
