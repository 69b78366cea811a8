package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/dbarena/dbarena/internal/scaleout/k8s/k8sdecode"
)

// TestK8sRenderRefusesHostile: a sandbox target (which no pod can reach),
// a namespace that is not a DNS label, and run ids that differ only in
// case used to render; now they are refused (exit 2, one line) or, for the
// ids, give two Jobs.
func TestK8sRenderRefusesHostile(t *testing.T) {
	base := []string{"k8s", "render", "oltp_point_select", "--shards", "2", "--threads", "2", "--image", "i"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "sandbox:m"}, "--target sandbox:m: a pod cannot reach a sandbox"},
		{nil, "no --target (the default sandbox): a pod cannot reach a sandbox"},
		{[]string{"--target", "mysql://u@h/db", "--namespace", "a;b"}, `--namespace "a;b": not a namespace name`},
		{[]string{"--target", "mysql://u@h/db", "--namespace", "UPPER"}, `--namespace "UPPER"`},
		{[]string{"--target", "mysql://u@h/db", "--secret", "a b"}, `--secret "a b"`},
		{[]string{"--target", "mysql://u@h/db", "--run-id", "ends-"}, `--run-id "ends-"`},
	} {
		r := dbarena(t, append(slices.Clone(base), tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	names := map[string]string{}
	for _, key := range []string{"Abc", "abc", "a_b", "a.b"} {
		r := dbarena(t, append(slices.Clone(base), "--target", "mysql://u@h/db", "--run-id", key)...).mustSucceed(t)
		job, err := k8sdecode.Decode([]byte(r.stdout))
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := names[job.Name]; ok {
			t.Errorf("run ids %q and %q both render Job %s", other, key, job.Name)
		}
		names[job.Name] = key
		if len(job.Name) > 63 {
			t.Errorf("Job name %q longer than a DNS label", job.Name)
		}
	}
}

// TestK8sRenderKeepsCredentialsOut: URL credentials and an Authorization
// header used to be copied into the pods' args; now the Secret holds them
// and the args name them as $(VAR), which Kubernetes expands.
func TestK8sRenderKeepsCredentialsOut(t *testing.T) {
	args := []string{"http", "--url", "http://user:s3cretpw@app.example/x", "--url=https://T0KENxyz@api.example/y",
		"--header", "Authorization: Bearer t0k3nval", "--header", "Accept: text/html", "--header", "X-Note: $(HOME)",
		"--time", "5", "--threads", "2", "--shards", "2", "--image", "i", "--run-id", "web"}
	r := dbarena(t, append([]string{"k8s", "render"}, args...)...).mustSucceed(t)
	for _, secret := range []string{"s3cretpw", "T0KENxyz", "t0k3nval"} {
		if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
			t.Errorf("the manifest or the output holds %q:\n%s\n%s", secret, r.stdout, r.stderr)
		}
	}
	job, err := k8sdecode.Decode([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	want := []string{"run", "http", "--url", "$(DBARENA_SECRET_ARG_1)", "--url=$(DBARENA_SECRET_ARG_2)",
		"--header", "$(DBARENA_SECRET_ARG_3)", "--header", "Accept: text/html", "--header", "X-Note: $$(HOME)"}
	if !slices.Equal(c.Args[:len(want)], want) {
		t.Errorf("pod args %q, want them to start %q", c.Args, want)
	}
	keys := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			keys[e.Name] = e.ValueFrom.SecretKeyRef.Key
		}
	}
	for i, k := range []string{"arg-1", "arg-2", "arg-3"} {
		if got := keys["DBARENA_SECRET_ARG_"+string(rune('1'+i))]; got != k {
			t.Errorf("env DBARENA_SECRET_ARG_%d from key %q, want %q", i+1, got, k)
		}
	}
	if !strings.Contains(r.stderr, `the Secret dbarena must also hold "arg-1": the value of --url`) {
		t.Errorf("stderr %q does not say which keys the Secret needs", r.stderr)
	}

	// k8s run puts them in the Secret it creates.
	api, kubeconfig := newFakeAPI(t)
	api.onJob = func(j *batchv1.Job) {
		j.Status = batchv1.JobStatus{Failed: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
			Reason: "BackoffLimitExceeded", Message: "gave up"}}}
	}
	prev := followEvery
	followEvery = 50 * time.Millisecond
	t.Cleanup(func() { followEvery = prev })
	run := dbarena(t, append(append([]string{"k8s", "run"}, args...), "--kubeconfig", kubeconfig, "--follow-timeout", "1m",
		"--results", filepath.Join(t.TempDir(), "r.db"), "--results-reachable")...)
	if run.code != ExitFailed {
		t.Fatalf("k8s run: exit %d\n%s", run.code, run.stderr)
	}
	api.mu.Lock()
	secret := api.secrets["ctxns/dbarena"]
	api.mu.Unlock()
	if secret == nil || string(secret.Data["arg-1"]) != "http://user:s3cretpw@app.example/x" ||
		string(secret.Data["arg-2"]) != "https://T0KENxyz@api.example/y" || string(secret.Data["arg-3"]) != "Authorization: Bearer t0k3nval" {
		t.Errorf("Secret data %q", secret.Data)
	}
	if strings.Contains(run.stderr, "s3cretpw") || strings.Contains(run.stderr, "t0k3nval") {
		t.Errorf("k8s run shows a credential: %s", run.stderr)
	}
}
