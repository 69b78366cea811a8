package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/k8s/k8sdecode"
	"github.com/dbarena/dbarena/internal/summary"
)

func TestK8sRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"k8s", "render", "oltp_point_select", "--image", "i"}, "--shards N"},
		{[]string{"k8s", "render", "oltp_point_select", "--shards", "2"}, "--image"},
		{[]string{"k8s", "render", "oltp_point_select", "--shards", "2", "--image", "i", "--results", "mysql://u@h/db"}, "Secret"},
		{[]string{"k8s", "render", "oltp_point_select", "--shards", "2", "--image", "i", "--target", "mysql://u:pw@h/db"}, "put the password in the Secret"},
		{[]string{"k8s", "render", "oltp_point_select", "--shards", "4", "--image", "i", "--threads", "2"}, "--threads 2"},
		{[]string{"k8s", "render", "oltp_point_select", "--shards", "2", "--image", "i", "--run-id", "9x"}, "--run-id"},
		{[]string{"k8s", "nope"}, "unknown k8s command"},
	} {
		r := dbarena(t, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
		if strings.Contains(r.stderr, "pw@") {
			t.Errorf("%v: the password is in the error", tc.args)
		}
	}
}

// TestK8sRender renders a Job to a file and decodes it with the
// Kubernetes scheme: the pods run the run's flags as shards of one run.
func TestK8sRender(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.yaml")
	dbarena(t, "k8s", "render", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "2",
		"--events", "41", "--monitor", "none", "--shards", "2", "--run-id", "pods", "--image", "dbarena:test",
		"--cpu", "500m", "-o", path).mustSucceed(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	job, err := k8sdecode.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "2",
		"--events", "41", "--monitor", "none", "--shards", "2", "--run-id", "pods"}
	if !slices.Equal(c.Args, wantArgs) || *job.Spec.Completions != 2 || c.Resources.Requests.Cpu().String() != "500m" ||
		job.Name != "dbarena-pods" {
		t.Fatalf("job %s: pod args %q, completions %d, cpu %v", job.Name, c.Args, *job.Spec.Completions, c.Resources.Requests.Cpu())
	}
}

// TestK8sRunFollows: k8s run hands the Job to kubectl (a stand-in that
// keeps it), then follows the run in the results store while its pods
// run, and prints the merged run once both ended.
func TestK8sRunFollows(t *testing.T) {
	needServers(t)
	prev := followEvery
	followEvery = 50 * time.Millisecond
	t.Cleanup(func() { followEvery = prev })
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	dir := t.TempDir()
	applied := filepath.Join(dir, "applied.yaml")
	kubectl := filepath.Join(dir, "kubectl")
	if err := os.WriteFile(kubectl, []byte("#!/bin/sh\n[ \"$1 $2 $3\" = \"apply -f -\" ] || exit 9\ncat > "+applied+".tmp && mv "+applied+".tmp "+applied+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "r.db")
	done := make(chan result, 1)
	go func() {
		done <- dbarena(t, "k8s", "run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "2",
			"--events", "30", "--monitor", "none", "--shards", "2", "--run-id", "follow", "--image", "dbarena:test",
			"--kubectl", kubectl, "--results", results)
	}()
	var b []byte
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if b, err = os.ReadFile(applied); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("k8s run ended before kubectl got the Job: exit %d\n%s", r.code, r.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("kubectl never got the Job")
		}
	}
	job, err := k8sdecode.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if slices.Contains(args, "--results") || slices.Contains(args, "--kubectl") || slices.Contains(args, "--image") {
		t.Fatalf("pod args %q carry k8s run's own flags", args)
	}
	var wg sync.WaitGroup
	pods := make([]result, 2)
	for i := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pods[i] = dbarenaEnv(t, suite.home, map[string]string{"JOB_COMPLETION_INDEX": string(rune('0' + i)), "DBARENA_RESULTS": results}, args...)
		}()
	}
	wg.Wait()
	for i, p := range pods {
		p.mustSucceed(t)
		if !strings.Contains(p.stdout, "Shard "+string(rune('0'+i))+" of 2 of run follow") {
			t.Errorf("pod %d:\n%s", i, p.stdout)
		}
	}
	r := <-done
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "Run follow (complete, 2 shards)") || !strings.Contains(r.stderr, "2 of 2 shards ended; 30 events") {
		t.Errorf("k8s run:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	// Pod I, with JOB_COMPLETION_INDEX=I, ran shard I: its threads and events.
	run, st := loadSharded(t, results, "follow")
	if run.Status != summary.StatusComplete || run.Totals.Events != 30 {
		t.Fatalf("merged %s with %d events, want complete, 30", run.Status, run.Totals.Events)
	}
	for i, s := range run.Shards {
		sr, err := st.Run(context.Background(), s.Run)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Shard == nil || sr.Shard.Index != i || sr.Threads != 1 || sr.Totals.Events != 15 {
			t.Errorf("shard %d ran %+v with %d threads, %d events", i, sr.Shard, sr.Threads, sr.Totals.Events)
		}
	}
	if r := dbarenaEnv(t, suite.home, map[string]string{"DBARENA_RESULTS": results}, args...); r.code != ExitUsage || !strings.Contains(r.stderr, "JOB_COMPLETION_INDEX") {
		t.Errorf("pod command without an index: exit %d, %s", r.code, r.stderr)
	}
}

// TestShardResultsFromEnv: a pod's results store comes from
// $DBARENA_RESULTS; its password is neither warned about as a command-line
// password nor shown.
func TestShardResultsFromEnv(t *testing.T) {
	r := dbarenaEnv(t, suite.home, map[string]string{"JOB_COMPLETION_INDEX": "0", "DBARENA_RESULTS": "mysql://u:s3cretpw@127.0.0.1:1/db"},
		"run", "oltp_point_select", "--threads", "2", "--events", "4", "--shards", "2", "--run-id", "env")
	if r.code != ExitUnreachable || !strings.Contains(r.stderr, "$DBARENA_RESULTS") {
		t.Errorf("exit %d, stderr %q; want 3 naming $DBARENA_RESULTS", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "s3cretpw") || strings.Contains(r.stderr, "visible to every local user") {
		t.Errorf("stderr %q shows or warns about the password", r.stderr)
	}
}
