package script

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// shellCommandSize is pgbench's SHELL_COMMAND_SIZE: the longest command
// line of \shell and \setshell, with its terminating byte.
const shellCommandSize = 256

// shell runs c, a \shell or \setshell of s, as pgbench does: its words
// joined by spaces (":name" is the variable's value, "::x" the text ":x")
// run by /bin/sh -c. \shell fails when the command does not exit 0;
// \setshell stores the integer the first line of the command's output
// holds (its exit status is not checked, as pgbench's).
//
// The command runs as the OS user who runs dbarena, in dbarena's working
// directory, with its environment minus password variables (PGPASSWORD,
// MYSQL_PWD and any *PASSWORD*), so a script cannot read the credentials
// of the server; never as root: under root it runs as the user sudo
// started dbarena for (SUDO_UID/SUDO_GID) or else as nobody. It never has
// the database's admin rights (it gets no connection). Its output goes to
// dbarena's standard error, so that it does not mix with the report.
func (w *worker) shell(ctx context.Context, s *pgscript.Script, c *pgscript.Cmd) error {
	name := "shell"
	if c.Kind == pgscript.SetShell {
		name = "setshell"
	}
	fail := func(f string, a ...any) error {
		return &pgscript.Error{File: s.Name, Line: c.Line, Msg: name + ": " + fmt.Sprintf(f, a...)}
	}
	var b strings.Builder
	for i, a := range c.Args {
		arg := a
		switch {
		case strings.HasPrefix(a, "::"):
			arg = a[1:]
		case strings.HasPrefix(a, ":"):
			v, ok := w.st.Get(a[1:])
			if !ok {
				return fail("undefined variable %q", a)
			}
			arg = v.Text()
		}
		if b.Len()+len(arg)+min(i, 1) >= shellCommandSize-1 {
			return fail("shell command is too long")
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(arg)
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", b.String())
	cmd.Env = shellEnv(os.Environ())
	cmd.Stdin = nil
	cmd.Stderr = os.Stderr
	if cred := shellCredential(); cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if c.Kind == pgscript.Shell {
		cmd.Stdout = os.Stderr
		if w.wl.shellOut != nil {
			cmd.Stdout = w.wl.shellOut
		}
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fail("could not launch shell command (%v)", err)
		}
		return nil
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail("could not launch shell command (%v)", err)
	}
	if err := cmd.Start(); err != nil {
		return fail("could not launch shell command (%v)", err)
	}
	line, rerr := bufio.NewReaderSize(out, 64).ReadString('\n')
	if len(line) > 63 { // pgbench reads the first 63 bytes (fgets)
		line = line[:63]
	}
	// Read the rest, so that the command is not killed by a closed pipe.
	_, _ = io.Copy(io.Discard, out)
	_ = cmd.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if line == "" && rerr != nil {
		return fail("could not read result of shell command")
	}
	n, ok := strtolInt(line)
	if !ok {
		return fail("shell command must return an integer (not %q)", line)
	}
	w.st.Set(c.Var, pgscript.IntV(n))
	return nil
}

// strtolInt reads a \setshell result as pgbench: (int) strtol(res, 10)
// followed by nothing but spaces, with at least a character.
func strtolInt(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	j := 0
	if j < len(t) && (t[j] == '+' || t[j] == '-') {
		j++
	}
	k := j
	for k < len(t) && t[k] >= '0' && t[k] <= '9' {
		k++
	}
	if k == j || strings.TrimSpace(t[k:]) != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(t[:k], 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return int64(int32(n)), true // pgbench keeps it in a C int
}

// shellEnv is env without the variables that carry passwords.
func shellEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		if u == "PGPASSWORD" || u == "MYSQL_PWD" || u == "PGPASSFILE" || strings.Contains(u, "PASSWORD") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// shellCredential is the user a shell command runs as when dbarena runs
// as root: the sudo caller, or nobody; nil otherwise (the invoking user).
func shellCredential() *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, err1 := strconv.ParseUint(os.Getenv("SUDO_UID"), 10, 32)
	gid, err2 := strconv.ParseUint(os.Getenv("SUDO_GID"), 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		uid, gid = 65534, 65534 // nobody, nogroup
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}
