package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
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
//	checkpoint  begin a run, print "begun ID", then forever append one
//	      interval and sample (N values each), printing "appended K" after
//	      each commit, and checkpoint every third interval
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
	case "checkpoint":
		return checkpointLoop(ctx, s, n)
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

// checkpointLoop is the "checkpoint" helper mode.
func checkpointLoop(ctx context.Context, s *Store, n int) error {
	r := testRun(os.Getpid()%1000, 0)
	r.Totals.Events = 0
	id, err := s.BeginRun(ctx, r)
	if err != nil {
		return err
	}
	fmt.Printf("begun %d\n", id)
	values := map[string]float64{}
	for j := range n {
		values[fmt.Sprintf("counter.c%d", j)] = float64(j)
	}
	for k := 1; ; k++ {
		iv := summary.Interval{TS: float64(k), Threads: 16, TPS: float64(k), P95MS: 2}
		if err := s.AppendIntervals(ctx, id, []summary.Interval{iv}, []summary.Sample{{TS: float64(k), Values: values}}); err != nil {
			return err
		}
		fmt.Printf("appended %d\n", k)
		if k%3 == 0 {
			r.Totals.Events = int64(k)
			if err := s.Checkpoint(ctx, id, r); err != nil {
				return err
			}
			fmt.Printf("checkpointed %d\n", k)
		}
	}
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
	return c.killCounting(tb, "saved ")
}

// killCounting sends SIGKILL and reaps the child; it returns the numbers
// that followed prefix in the lines it printed.
func (c *child) killCounting(tb testing.TB, prefix string) []int64 {
	tb.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		tb.Fatalf("kill helper: %v", err)
	}
	c.cmd.Wait() // "signal: killed" is expected
	var ids []int64
	for l := range c.lines {
		if id, ok := strings.CutPrefix(l, prefix); ok {
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

// TestKill9Checkpointed kills a process writing a run as it goes
// (AppendIntervals, Checkpoint) at random moments, several times on the
// same file: every time the file passes the integrity check, earlier runs
// are intact, and the killed run reads back "aborted" with every interval
// committed before the kill, in order, and its last checkpoint.
func TestKill9Checkpointed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	s := openTest(t, path)
	earlier := []int64{save(t, s, testRun(0, 10)), save(t, s, testRun(1, 10))}

	type killed struct {
		id        int64
		intervals int
	}
	var runs []killed
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := range 8 {
		// Samples of 1..200 values make transactions of different sizes.
		c := startHelper(t, "checkpoint", path, 1+rng.IntN(200))
		line := c.waitLine(t, "begun ")
		id, err := strconv.ParseInt(strings.TrimPrefix(line, "begun "), 10, 64)
		if err != nil {
			t.Fatalf("helper printed %q", line)
		}
		first, err := strconv.ParseInt(strings.TrimPrefix(c.waitLine(t, "appended "), "appended "), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
		time.Sleep(delay)
		last := first
		if appended := c.killCounting(t, "appended "); len(appended) > 0 {
			last = appended[len(appended)-1]
		}
		t.Logf("round %d: killed after %v, %d intervals reported committed", round, delay, last)

		checkStore(t, path, len(earlier)+len(runs)+1)
		got := mustRun(t, s, id)
		if got.Status != summary.StatusAborted {
			t.Errorf("round %d: killed run %d has status %q, want aborted", round, id, got.Status)
		}
		// The interval being written at the kill may or may not have
		// committed; every reported one has.
		n := len(got.Intervals)
		if int64(n) < last || int64(n) > last+1 {
			t.Errorf("round %d: run %d has %d intervals, %d were committed", round, id, n, last)
		}
		for k, iv := range got.Intervals {
			if iv.TS != float64(k+1) || got.Monitor == nil || len(got.Monitor.Samples) != n || got.Monitor.Samples[k].TS != iv.TS {
				t.Fatalf("round %d: interval %d is %+v, samples %v; want t_s %d with its sample", round, k, iv, got.Monitor, k+1)
			}
		}
		if ev := got.Totals.Events; ev%3 != 0 || ev > int64(n) || int64(n)-ev > 3 {
			t.Errorf("round %d: checkpointed events %d with %d intervals", round, ev, n)
		}
		runs = append(runs, killed{id, n})
		for _, k := range runs {
			if r := mustRun(t, s, k.id); r.Status != summary.StatusAborted || len(r.Intervals) != k.intervals {
				t.Errorf("round %d: earlier killed run %d: %s with %d intervals, want aborted with %d", round, k.id, r.Status, len(r.Intervals), k.intervals)
			}
		}
		for i, id := range earlier {
			want := testRun(i, 10)
			want.ID = id
			sameRun(t, "earlier run", mustRun(t, s, id), want)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	rows, err := s.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	aborted := 0
	for _, r := range rows {
		if r.Status == summary.StatusAborted {
			aborted++
		}
	}
	if aborted != len(runs) {
		t.Errorf("List shows %d aborted runs, want %d", aborted, len(runs))
	}
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
