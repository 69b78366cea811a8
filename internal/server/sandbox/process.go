package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processEnv is the environment of server processes: minimal, so that
// variables such as PGDATA or MYSQL_HOME of the caller cannot leak in.
func processEnv(home string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	return []string{"PATH=" + path, "HOME=" + home, "LC_ALL=C", "LANG=C", "TZ=UTC"}
}

// runInit runs an initialisation command to completion, appending its
// output to logPath.
func runInit(ctx context.Context, c command, dir string, u osUser, logPath string) error {
	return runInput(ctx, c, nil, dir, u, logPath)
}

// runInput runs a command to completion with stdin (if not nil) as its
// input, appending its output to logPath.
func runInput(ctx context.Context, c command, stdin []byte, dir string, u osUser, logPath string) error {
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = dir
	cmd.Env = processEnv(dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.credential(), Setpgid: true}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "--- dbarena %s: %s\n", time.Now().UTC().Format(time.RFC3339), c)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", c, err)
	}
	return nil
}

// process is a server started by this Manager call. exited is closed when
// it ends, with err holding its exit status; waiting reaps it, so a dead
// server never lingers as a zombie that still answers kill(pid, 0).
type process struct {
	pid    int
	exited chan struct{}
	err    error
}

// startDetached starts c in its own session, so it survives dbarena
// exiting and no terminal signal reaches it; its output goes to logPath.
func startDetached(c command, dir string, u osUser, logPath string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer logf.Close() // the child keeps its own copy
	fmt.Fprintf(logf, "--- dbarena %s: %s\n", time.Now().UTC().Format(time.RFC3339), c)
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = dir
	cmd.Env = append(processEnv(dir), c.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: u.credential()}
	closeInheritedOnExec()
	raiseFileLimit()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// closeInheritedOnExec marks the descriptors dbarena inherited from its own
// parent (beyond stdin, stdout and stderr) close-on-exec, so that a
// long-lived server does not keep them: a flock(1) lock held by a script
// that started dbarena would otherwise stay locked as long as the server
// runs. Descriptors Go opens are close-on-exec already.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// alive reports whether pid exists and its command line mentions marker
// (the data directory or config file), which guards against a recycled pid.
func alive(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		// No procfs: trust kill(pid, 0).
		return !errors.Is(err, os.ErrNotExist) || !procfs()
	}
	return len(cmdline) > 0 && bytes.Contains(cmdline, []byte(marker))
}

func procfs() bool {
	_, err := os.Stat("/proc/self/cmdline")
	return err == nil
}

// groupAlive reports whether any process of the process group pgid (a
// server started with Setsid leads its own group) is still running.
func groupAlive(pgid int) bool {
	return pgid > 0 && syscall.Kill(-pgid, 0) == nil
}

// stopProcess sends sig to pid, waits up to timeout for the process and
// its children (its process group) to exit, then kills the group.
func stopProcess(ctx context.Context, pid int, marker string, sig syscall.Signal, timeout time.Duration) error {
	if alive(pid, marker) {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal pid %d: %w", pid, err)
		}
	}
	gone := func() bool { return !alive(pid, marker) && !groupAlive(pid) }
	if waitFor(ctx, timeout, gone) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stop pid %d: %w", pid, err)
	}
	// Past the timeout: kill what is left of our server's group.
	if groupAlive(pid) {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	} else if alive(pid, marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if waitFor(ctx, 10*time.Second, gone) {
		return nil
	}
	return fmt.Errorf("pid %d still running after SIGKILL", pid)
}

// killLeftovers kills processes left in a dead server's group, e.g.
// PostgreSQL backends whose postmaster was killed; the group id of a
// leader that is gone cannot be reused, so the group is still ours.
func killLeftovers(ctx context.Context, pid int) {
	if !groupAlive(pid) {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	waitFor(ctx, 10*time.Second, func() bool { return !groupAlive(pid) })
}

// waitFor polls cond until it holds, the timeout passes or ctx ends.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
}

// portOpen reports whether something accepts TCP connections on 127.0.0.1:port.
func portOpen(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// listening reports whether a socket listens on TCP port, from
// /proc/net/tcp{,6}: unlike a probe connection it leaves no "aborted
// connection" notes in server logs. Without procfs it falls back to portOpen.
func listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	found := false
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		found = true
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// fields[1] is the local address, fields[3] the state (0A = LISTEN).
			if len(fields) > 3 && fields[3] == "0A" && strings.HasSuffix(fields[1], want) {
				f.Close()
				return true
			}
		}
		f.Close()
	}
	if !found {
		return portOpen(port)
	}
	return false
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logSize is the current size of a log, to tail only what follows.
func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// tailLog returns at most n lines of path written after offset (or of the
// whole file when nothing was written after it): the last ones, preceded
// by earlier error lines that would otherwise be cut off (installers print
// pages of advice after the one line that matters).
func tailLog(path string, offset int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxRead = 256 << 10
	size := logSize(path)
	if offset >= size {
		offset = 0
	}
	if size-offset > maxRead {
		offset = size - maxRead
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxRead)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	var errs []string
	for _, l := range lines[:len(lines)-n] {
		if isErrorLine(l) {
			errs = append(errs, l)
		}
	}
	if max := n / 2; len(errs) > max {
		errs = errs[len(errs)-max:]
	}
	if len(errs) == 0 {
		return strings.Join(lines[len(lines)-n:], "\n")
	}
	out := append(errs, "...")
	out = append(out, lines[len(lines)-(n-len(out)):]...)
	return strings.Join(out, "\n")
}

// isErrorLine spots the error lines of MySQL-family and PostgreSQL logs.
func isErrorLine(l string) bool {
	for _, marker := range []string{"[ERROR]", "ERROR:", "FATAL:", "PANIC:"} {
		if strings.Contains(l, marker) {
			return true
		}
	}
	return false
}
