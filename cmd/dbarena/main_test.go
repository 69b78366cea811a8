package main

import (
	"os"
	"strings"
	"testing"
)

// TestMain runs the tests the way main runs the program: preemptOff
// executes the test binary again with asynchronous preemption off.
func TestMain(m *testing.M) {
	preemptOff()
	os.Exit(m.Run())
}

// TestPreemptOff: the process was executed again with asyncpreemptoff=1
// and glibc's rseq off (its initial environment, /proc/self/environ),
// and the environment the programs it starts inherit is back as it was.
func TestPreemptOff(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "asyncpreemptoff=0") {
		t.Skip("GODEBUG sets asyncpreemptoff=0")
	}
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	initial := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			initial[k] = v
		}
	}
	if !strings.Contains(initial["GODEBUG"], "asyncpreemptoff=1") {
		t.Fatalf("initial GODEBUG=%q: preemptOff did not run the program again with asyncpreemptoff=1", initial["GODEBUG"])
	}
	if !strings.Contains(initial["GLIBC_TUNABLES"], "glibc.pthread.rseq=0") {
		t.Errorf("initial GLIBC_TUNABLES=%q, want glibc.pthread.rseq=0 in it", initial["GLIBC_TUNABLES"])
	}
	saved, ok := initial[restoreKey]
	if !ok {
		t.Fatalf("%s not in the initial environment", restoreKey)
	}
	tunables, godebug, _ := strings.Cut(saved, "|")
	if got := os.Getenv("GODEBUG"); got != godebug {
		t.Errorf("GODEBUG now %q, want it back as %q", got, godebug)
	}
	got, had := os.LookupEnv("GLIBC_TUNABLES")
	want, wanted := strings.CutPrefix(tunables, "=")
	if !wanted {
		want = ""
	}
	if had != wanted || got != want {
		t.Errorf("GLIBC_TUNABLES now %q (set %v), want it back as %q", got, had, tunables)
	}
	if _, ok := os.LookupEnv(restoreKey); ok {
		t.Errorf("%s is still in the environment", restoreKey)
	}
}
