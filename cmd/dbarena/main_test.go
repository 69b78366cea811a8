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

func TestPreemptOff(t *testing.T) {
	g := os.Getenv("GODEBUG")
	if strings.Contains(g, "asyncpreemptoff=0") {
		t.Skip("GODEBUG sets asyncpreemptoff=0")
	}
	if !strings.Contains(g, "asyncpreemptoff=1") {
		t.Fatalf("GODEBUG=%q: preemptOff did not run the program again with asyncpreemptoff=1", g)
	}
}
