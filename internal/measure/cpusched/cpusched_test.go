package cpusched

import (
	"runtime"
	"sync"
	"testing"
)

// policies returns every thread's policy, by thread id.
func policies(t *testing.T) map[int]int {
	t.Helper()
	tids, err := threads()
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]int{}
	for _, tid := range tids {
		if p, err := getPolicy(tid); err == nil {
			m[tid] = p
		}
	}
	return m
}

// onNewThread runs f on a goroutine locked to its thread and returns f's
// result. The thread ends with the goroutine (it exits locked), so each
// later call may run on a thread the process creates after Apply.
func onNewThread(f func() string) string {
	var out string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		out = f()
	}()
	wg.Wait()
	return out
}

// TestApply: batch reaches every thread, threads created meanwhile
// inherit it, and restore gives every thread the default back; normal
// changes nothing.
func TestApply(t *testing.T) {
	if Current() != Normal {
		t.Skipf("the test process runs under %s, not the default policy", Current())
	}
	eff, restore, err := Apply(Batch)
	if err != nil || eff != Batch {
		t.Fatalf("Apply(batch) = %q, %v; want batch", eff, err)
	}
	for tid, p := range policies(t) {
		if p != schedBatch {
			t.Errorf("thread %d: policy %s, want batch", tid, policyName(p))
		}
	}
	for range 3 {
		if got := onNewThread(Current); got != Batch {
			t.Errorf("a thread started after Apply runs under %s, want batch", got)
		}
	}
	restore()
	for tid, p := range policies(t) {
		if p != schedOther {
			t.Errorf("after restore, thread %d: policy %s, want normal", tid, policyName(p))
		}
	}

	eff, restore, err = Apply(Normal)
	defer restore()
	if err != nil || eff != Normal {
		t.Errorf("Apply(normal) = %q, %v; want normal", eff, err)
	}
	for tid, p := range policies(t) {
		if p != schedOther {
			t.Errorf("Apply(normal): thread %d under %s", tid, policyName(p))
		}
	}
}

// TestApplyKeepsUsersPolicy: a process started under another policy (chrt)
// keeps it, and restore leaves it alone.
func TestApplyKeepsUsersPolicy(t *testing.T) {
	if Current() != Normal {
		t.Skipf("the test process runs under %s, not the default policy", Current())
	}
	if err := setAll(schedIdle); err != nil {
		t.Fatal(err)
	}
	defer setAll(schedOther)
	eff, restore, err := Apply(Batch)
	if err != nil || eff != "idle" {
		t.Fatalf("Apply(batch) under SCHED_IDLE = %q, %v; want idle", eff, err)
	}
	restore()
	if got := Current(); got != "idle" {
		t.Errorf("after restore: %s, want idle kept", got)
	}
}

func TestValid(t *testing.T) {
	for name, want := range map[string]bool{"batch": true, "normal": true, "auto": true, "": false, "idle": false, "BATCH": false} {
		if Valid(name) != want {
			t.Errorf("Valid(%q) = %v", name, !want)
		}
	}
}
