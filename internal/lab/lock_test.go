package lab

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLockPlan(t *testing.T) {
	dir := t.TempDir()
	l, err := LockPlan(dir, "p", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockPlan(dir, "p", 0)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second lock: %v, want LockedError naming pid %d", err, os.Getpid())
	}
	if l2, err := LockPlan(dir, "P", 0); err != nil { // another plan
		t.Fatalf("other plan: %v", err)
	} else {
		l2.Unlock()
	}
	// --wait: taken once the holder lets go.
	go func() {
		time.Sleep(300 * time.Millisecond)
		l.Unlock()
	}()
	l3, err := LockPlan(dir, "p", 10*time.Second)
	if err != nil {
		t.Fatalf("waiting lock: %v", err)
	}
	l3.Unlock()
}

// A holder killed with -9 leaves no stale lock: the kernel releases it.
func TestLockPlanKilledHolder(t *testing.T) {
	if os.Getenv("LAB_LOCK_CHILD") != "" {
		if _, err := LockPlan(os.Getenv("LAB_LOCK_CHILD"), "p", 0); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockPlanKilledHolder$")
	cmd.Env = append(os.Environ(), "LAB_LOCK_CHILD="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("child: %q %v", buf, err)
	}
	_, err := LockPlan(dir, "p", 0)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		cmd.Process.Kill()
		t.Fatalf("lock held by child: %v, want pid %d", err, cmd.Process.Pid)
	}
	if want := "process " + strconv.Itoa(cmd.Process.Pid); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	_ = cmd.Process.Signal(os.Kill)
	_ = cmd.Wait()
	l, err := LockPlan(dir, "p", 0)
	if err != nil {
		t.Fatalf("after kill -9: %v", err)
	}
	l.Unlock()
}
