package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment of a helper child process (see TestHelperProcess).
const (
	envHelperMode = "DBARENA_STORE_TEST_HELPER"
	envHelperPath = "DBARENA_STORE_TEST_PATH"
	envHelperN    = "DBARENA_STORE_TEST_N"
)

// TestHelperProcess is not a test: it is the body of the child processes
// that the tests below start by re-executing the test binary. Modes:
//
//	save  save N runs, then exit 0
//	loop  save runs (N intervals each) forever, printing "saved ID" after each commit
//	hold  print "holding" from inside a SaveRun transaction, then block forever
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelperMode)
	if mode == "" {
		return
	}
	n, _ := strconv.Atoi(os.Getenv(envHelperN))
	if err := helper(mode, os.Getenv(envHelperPath), n); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helper(mode, path string, n int) error {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	switch mode {
	case "save":
		for i := range n {
			if _, err := s.SaveRun(ctx, testRun(os.Getpid()+i, 30)); err != nil {
				return fmt.Errorf("run %d: %w", i, err)
			}
		}
		return s.Close()
	case "loop":
		for i := 0; ; i++ {
			id, err := s.SaveRun(ctx, testRun(i, n))
			if err != nil {
				return fmt.Errorf("run %d: %w", i, err)
			}
			fmt.Printf("saved %d\n", id)
		}
	case "hold":
		s.beforeCommit = func() {
			fmt.Println("holding")
			select {} // until killed
		}
		_, err := s.SaveRun(ctx, testRun(0, n))
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// child is a running helper process and the lines it prints.
type child struct {
	cmd   *exec.Cmd
	lines chan string
}

func startHelper(tb testing.TB, mode, path string, n int) *child {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelperMode+"="+mode, envHelperPath+"="+path, envHelperN+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start helper: %v", err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	tb.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return c
}

// waitLine returns the next line the child prints that starts with prefix.
func (c *child) waitLine(tb testing.TB, prefix string) string {
	tb.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				tb.Fatalf("helper exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			tb.Fatalf("helper did not print %q within a minute", prefix)
		}
	}
}

// kill sends SIGKILL and reaps the child; it returns the ids the child
// reported as committed.
func (c *child) kill(tb testing.TB) []int64 {
	tb.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		tb.Fatalf("kill helper: %v", err)
	}
	c.cmd.Wait() // "signal: killed" is expected
	var ids []int64
	for l := range c.lines {
		if id, ok := strings.CutPrefix(l, "saved "); ok {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				tb.Fatalf("helper printed %q", l)
			}
			ids = append(ids, n)
		}
	}
	return ids
}

func TestConcurrentSaveRunProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	const perProcess = 20
	path := filepath.Join(t.TempDir(), "results.db")
	var children []*child
	for range 2 {
		children = append(children, startHelper(t, "save", path, perProcess))
	}
	// The parent writes too, through its own Store.
	s := openTest(t, path)
	for i := range perProcess {
		save(t, s, testRun(i, 30))
	}
	var wg sync.WaitGroup
	for i, c := range children {
		wg.Go(func() {
			if err := c.cmd.Wait(); err != nil {
				t.Errorf("helper %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	checkStore(t, path, 3*perProcess)
}

func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	t.Run("mid-write", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "results.db")
		committed := map[int64]bool{}
		// Kill at different moments of the save loop; every round appends
		// to the same file, so earlier rounds' runs must survive later kills.
		for round, delay := range []time.Duration{0, 300 * time.Microsecond, time.Millisecond, 3 * time.Millisecond, 7 * time.Millisecond, 20 * time.Millisecond} {
			c := startHelper(t, "loop", path, 500)
			for range 3 {
				c.waitLine(t, "saved ")
			}
			time.Sleep(delay)
			ids := c.kill(t)
			for _, id := range ids {
				committed[id] = true
			}
			all := checkStore(t, path, -1)
			for id := range committed {
				if !containsID(all, id) {
					t.Errorf("round %d: run %d was committed before the kill but is gone", round, id)
				}
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	})

	t.Run("open transaction", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "results.db")
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		earlier := []int64{save(t, s, testRun(0, 10)), save(t, s, testRun(1, 10))}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// A run big enough to spill out of the page cache, so that the WAL
		// holds uncommitted frames when the process dies.
		c := startHelper(t, "hold", path, 100000)
		c.waitLine(t, "holding")
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("WAL size at kill: %d bytes", fi.Size())
		c.kill(t)
		ids := checkStore(t, path, len(earlier))
		for _, id := range earlier {
			if !containsID(ids, id) {
				t.Errorf("earlier run %d is gone", id)
			}
		}
		// The store is still writable and ids keep increasing.
		s2 := openTest(t, path)
		if id := save(t, s2, testRun(2, 1)); id <= earlier[1] {
			t.Errorf("new run id %d, want > %d", id, earlier[1])
		}
	})
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
