//go:build k8se2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/k8s"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

const ns = "e2e"

// env is the check's world, set up once by TestMain.
var env struct {
	cp         *controlPlane
	runner     *podRunner
	binary     string // dbarena under test
	home       string // DBARENA_HOME of the check's own commands
	kubeconfig string // the least-privileged ServiceAccount's
	targetDSN  string // the sandbox, without its password
	resultsDSN string // the shared results store: the same server
	password   string
	oltp       []string // the workload's flags, as prepared
}

func TestMain(m *testing.M) {
	bin := os.Getenv("DBARENA_K8S_BIN")
	if bin == "" {
		if os.Getenv("CI") != "" {
			fmt.Println("k8s e2e: DBARENA_K8S_BIN (the control plane's binaries) is not set; run it through make k8s-e2e")
			os.Exit(1)
		}
		fmt.Println("k8s e2e: skipped: DBARENA_K8S_BIN is not set (make k8s-e2e builds the control plane and sets it)")
		os.Exit(0)
	}
	os.Exit(setup(m, bin))
}

func setup(m *testing.M, bin string) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "dbarena-k8s-e2e-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	keep := os.Getenv("DBARENA_K8S_E2E_KEEP") != ""
	defer func() {
		if !keep {
			os.RemoveAll(dir)
		}
	}()
	fail := func(format string, args ...any) int {
		fmt.Printf("k8s e2e: "+format+"\n", args...)
		return 1
	}
	env.binary = filepath.Join(dir, "dbarena")
	build := exec.Command("go", "build", "-o", env.binary, "github.com/dbarena/dbarena/cmd/dbarena")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fail("build dbarena: %v", err)
	}

	// The target and the shared results store: one MariaDB sandbox, which
	// the pods (run on this machine) reach on 127.0.0.1.
	env.home = filepath.Join(dir, "home")
	mgr := sandbox.NewManager(env.home)
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	sb, err := mgr.Start(sctx, sandbox.Spec{Name: "e2e", Flavor: target.FlavorMariaDB, Profile: sandbox.ProfileFast})
	cancel()
	if err != nil {
		if errors.Is(err, sandbox.ErrNoServer) && os.Getenv("CI") == "" {
			fmt.Printf("k8s e2e: skipped: %v\n", err)
			return 0
		}
		return fail("start the MariaDB sandbox: %v", err)
	}
	defer func() { _ = mgr.Remove(context.Background(), "e2e") }()
	tg := sb.Target()
	env.password = tg.Password
	tg.Password, tg.Sandbox = "", ""
	env.targetDSN = tg.DSN()
	env.resultsDSN = env.targetDSN
	env.oltp = []string{"--tables", "4", "--table-size", "2000", "--monitor", "none"}
	if r := dbarena(nil, append([]string{"prepare", "oltp_point_select", "--target", "sandbox:e2e"}, env.oltp...)...); r.code != 0 {
		return fail("prepare: exit %d\n%s", r.code, r.stderr)
	}

	cpDir := filepath.Join(dir, "cluster")
	if err := os.MkdirAll(cpDir, 0o700); err != nil {
		return fail("%v", err)
	}
	t0 := time.Now()
	cp, err := startControlPlane(ctx, bin, cpDir, os.Stdout)
	if err != nil {
		return fail("control plane: %v", err)
	}
	defer cp.stop()
	env.cp = cp
	fmt.Printf("k8s e2e: control plane ready in %v\n", time.Since(t0).Round(time.Millisecond))
	if err := namespaceAndAccount(ctx, cp, filepath.Join(dir, "runner.kubeconfig")); err != nil {
		return fail("namespace and ServiceAccount: %v", err)
	}
	env.kubeconfig = filepath.Join(dir, "runner.kubeconfig")

	rctx, stop := context.WithCancel(ctx)
	env.runner = newPodRunner(cp.api, ns, env.binary, filepath.Join(dir, "pods"), os.Stdout)
	done := make(chan struct{})
	go func() { env.runner.run(rctx); close(done) }()
	code := m.Run()
	stop()
	<-done
	keep = keep || code != 0 // the cluster's and the pods' logs, to read why
	if keep {
		fmt.Printf("k8s e2e: kept %s\n", dir)
	}
	return code
}

// namespaceAndAccount makes the namespace and the ServiceAccount k8s run
// uses, bound to a Role of exactly what docs/CLI.md says it needs (get and
// create on secrets and jobs, list on pods), and writes its kubeconfig
// with a token from the TokenRequest API.
func namespaceAndAccount(ctx context.Context, cp *controlPlane, path string) error {
	api := cp.api
	if err := api.do(ctx, "POST", "/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, nil); err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "dbarena-runner"}}
	if err := api.do(ctx, "POST", "/api/v1/namespaces/"+ns+"/serviceaccounts", sa, nil); err != nil {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "dbarena-k8s-run"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "create"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
	}}
	if err := api.do(ctx, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", role, nil); err != nil {
		return err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dbarena-k8s-run"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "dbarena-k8s-run"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "dbarena-runner", Namespace: ns}}}
	if err := api.do(ctx, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", rb, nil); err != nil {
		return err
	}
	secs := int64(3600)
	var tr authv1.TokenRequest
	if err := api.do(ctx, "POST", "/api/v1/namespaces/"+ns+"/serviceaccounts/dbarena-runner/token",
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &secs}}, &tr); err != nil {
		return err
	}
	// The pods run as the namespace's default ServiceAccount, which the
	// controller-manager's serviceaccount controller makes.
	deadline := time.Now().Add(time.Minute)
	for api.do(ctx, "GET", "/api/v1/namespaces/"+ns+"/serviceaccounts/default", nil, nil) != nil {
		if time.Now().After(deadline) {
			return errors.New("no default ServiceAccount after 1m: is the controller-manager running?")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return kubeconfig(path, cp.server, cp.caPEM, tr.Status.Token, ns)
}

type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// dbarena runs the binary under test with the check's home and extra
// environment; t may be nil (TestMain).
func dbarena(extra map[string]string, args ...string) result {
	cmd := exec.Command(env.binary, args...)
	return runCmd(cmd, extra)
}

func command(extra map[string]string, args ...string) *exec.Cmd {
	cmd := exec.Command(env.binary, args...)
	cmd.Env = append(os.Environ(), "DBARENA_HOME="+env.home, "KUBECONFIG=/nonexistent")
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func runCmd(cmd *exec.Cmd, extra map[string]string) result {
	c := command(extra, cmd.Args[1:]...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	t0 := time.Now()
	err := c.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(t0)}
	if err != nil {
		r.code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		}
	}
	return r
}

// passwords are the environment k8s run reads the target's and the
// results store's passwords from.
func passwords() map[string]string {
	return map[string]string{"DBARENA_PASSWORD": env.password, "DBARENA_RESULTS_PASSWORD": env.password}
}

// runArgs are k8s run's arguments for a run of id with n shards.
func runArgs(id string, n int, extra ...string) []string {
	args := append([]string{"k8s", "run", "oltp_point_select"}, env.oltp...)
	args = append(args, "--shards", fmt.Sprint(n), "--run-id", id, "--image", "dbarena:e2e",
		"--target", env.targetDSN, "--results", env.resultsDSN, "--results-reachable",
		"--kubeconfig", env.kubeconfig, "--follow-timeout", "5m")
	return append(args, extra...)
}

func job(t *testing.T, id string) *batchv1.Job {
	t.Helper()
	var j batchv1.Job
	if err := env.cp.api.do(context.Background(), "GET", "/apis/batch/v1/namespaces/"+ns+"/jobs/"+k8s.Name(id), nil, &j); err != nil {
		t.Fatalf("read Job of run %s: %v", id, err)
	}
	return &j
}

func deleteJob(id string) {
	bg := metav1.DeletePropagationBackground
	_ = env.cp.api.do(context.Background(), "DELETE", "/apis/batch/v1/namespaces/"+ns+"/jobs/"+k8s.Name(id),
		metav1.DeleteOptions{PropagationPolicy: &bg}, nil)
}

// merged reads the merged run of id with results show --json.
func merged(t *testing.T, id string) summary.Run {
	t.Helper()
	r := dbarena(passwords(), "results", "show", id, "--json", "--results", env.resultsDSN)
	if r.code != 0 {
		t.Fatalf("results show %s: exit %d\n%s", id, r.code, r.stderr)
	}
	var run summary.Run
	if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
		t.Fatalf("results show %s --json: %v\n%s", id, err, r.stdout)
	}
	return run
}

// setHold sets what the pod runner does with the pods of one run.
func setHold(id string, f func(index string, p *corev1.Pod) string) {
	env.runner.mu.Lock()
	defer env.runner.mu.Unlock()
	prev := env.runner.hold
	env.runner.hold = func(p *corev1.Pod) string {
		if p.Labels[k8s.LabelRun] == id {
			return f(p.Annotations[batchv1.JobCompletionIndexAnnotation], p)
		}
		if prev != nil {
			return prev(p)
		}
		return ""
	}
}

// TestRenderServerValidation: k8s render's Job passes the API server's
// strict validation (dry run, fieldValidation=Strict); each invalid input
// dbarena refuses (exit 2, naming the flag) is one the server would
// refuse too, shown by putting it into the rendered Job.
func TestRenderServerValidation(t *testing.T) {
	ctx := context.Background()
	render := func(runID, flag, value string) []string {
		args := append([]string{"k8s", "render", "oltp_point_select"}, env.oltp...)
		args = append(args, "--shards", "4", "--threads", "4", "--run-id", runID, "--image", "dbarena:e2e", "--target", env.targetDSN)
		if flag != "" {
			args = append(args, flag, value)
		}
		return args
	}
	r := dbarena(nil, render("strict", "", "")...)
	if r.code != 0 {
		t.Fatalf("k8s render: exit %d\n%s", r.code, r.stderr)
	}
	rendered, err := yaml.YAMLToJSON([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	post := func(body []byte) error {
		return env.cp.api.do(ctx, "POST", "/apis/batch/v1/namespaces/"+ns+"/jobs?dryRun=All&fieldValidation=Strict", body, nil)
	}
	if err := post(rendered); err != nil {
		t.Fatalf("the API server refuses the rendered Job: %v", err)
	}
	// postPod sends the Job's pod template as a Pod.
	postPod := func(job []byte) error {
		var j map[string]any
		if err := json.Unmarshal(job, &j); err != nil {
			return err
		}
		pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "strict"}, "spec": dig(j, "spec", "template", "spec")}
		b, err := json.Marshal(pod)
		if err != nil {
			return err
		}
		return env.cp.api.do(ctx, "POST", "/api/v1/namespaces/"+ns+"/pods?dryRun=All&fieldValidation=Strict", b, nil)
	}
	if err := postPod(rendered); err != nil {
		t.Fatalf("the API server refuses the rendered Job's pod: %v", err)
	}
	// Strict validation is on: an unknown field is refused.
	if err := post(mutate(t, rendered, func(j map[string]any) { dig(j, "spec")["completionsMode"] = "Indexed" })); !isCode(err, 400) && !isCode(err, 422) {
		t.Fatalf("unknown field accepted by the server: %v", err)
	}
	container := func(j map[string]any) map[string]any {
		return dig(j, "spec", "template", "spec")["containers"].([]any)[0].(map[string]any)
	}
	for _, tc := range []struct {
		flag, value string
		mutate      func(j map[string]any)
	}{
		{"--run-id", strings.Repeat("r", 64), func(j map[string]any) { dig(j, "metadata", "labels")[k8s.LabelRun] = strings.Repeat("r", 64) }},
		{"--run-id", "a/b", func(j map[string]any) { dig(j, "metadata", "labels")[k8s.LabelRun] = "a/b" }},
		{"--secret", "Not_A_Name", func(j map[string]any) {
			dig(container(j)["env"].([]any)[0].(map[string]any), "valueFrom", "secretKeyRef")["name"] = "Not_A_Name"
		}},
		{"--results-key", "no spaces", func(j map[string]any) {
			dig(container(j)["env"].([]any)[0].(map[string]any), "valueFrom", "secretKeyRef")["key"] = "no spaces"
		}},
		{"--cpu", "lots", func(j map[string]any) { dig(container(j), "resources", "requests")["cpu"] = "lots" }},
		{"--memory", "-1Gi", func(j map[string]any) { dig(container(j), "resources", "requests")["memory"] = "-1Gi" }},
		{"--backoff-limit", "-1", func(j map[string]any) { dig(j, "spec")["backoffLimit"] = -1 }},
		{"--ttl", "-1", func(j map[string]any) { dig(j, "spec")["ttlSecondsAfterFinished"] = -1 }},
		{"--pull-policy", "Sometimes", func(j map[string]any) { container(j)["imagePullPolicy"] = "Sometimes" }},
		// A Job's pod template may hold it; the pods the controller would
		// make of it may not: checked on a Pod below.
		{"--image", " dbarena:e2e", func(j map[string]any) { container(j)["image"] = " dbarena:e2e" }},
	} {
		args := render("strict", tc.flag, tc.value)
		if tc.flag == "--run-id" {
			args = render(tc.value, "", "")
		}
		r := dbarena(nil, args...)
		send := post
		if tc.flag == "--image" {
			send = postPod
		}
		if err := send(mutate(t, rendered, tc.mutate)); err == nil {
			t.Errorf("%s %q: the server accepts it in the Job", tc.flag, tc.value)
		} else if !isCode(err, 400) && !isCode(err, 422) {
			t.Errorf("%s %q: the server refuses it with %v, want 400 or 422", tc.flag, tc.value, err)
		}
		if r.code != 2 || !strings.Contains(r.stderr, tc.flag) {
			t.Errorf("%s %q: dbarena k8s render: exit %d (want 2, naming the flag)\n%s", tc.flag, tc.value, r.code, r.stderr)
		}
	}
}

func mutate(t *testing.T, b []byte, f func(map[string]any)) []byte {
	t.Helper()
	var j map[string]any
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	f(j)
	out, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

// TestRunThroughJobController: k8s run, as a ServiceAccount with only the
// documented rights, creates the Secret and the Indexed Job; the Job
// controller creates the 4 indexed pods; the pods (run by the pod runner
// with JOB_COMPLETION_INDEX and the Secret's values) meet at the start
// barrier in the shared results store; the Job completes; k8s run prints
// the merged run, exit 0; the merge is exact; ttlSecondsAfterFinished
// removes the Job and the garbage collector its pods.
func TestRunThroughJobController(t *testing.T) {
	const id, n, events = "e2e-four", 4, 8000
	r := dbarena(passwords(), runArgs(id, n, "--threads", "4", "--events", fmt.Sprint(events), "--ttl", "5")...)
	t.Logf("k8s run (%v), exit %d\nstdout:\n%s\nstderr:\n%s", r.elapsed.Round(time.Millisecond), r.code, r.stdout, r.stderr)
	if r.code != 0 {
		t.Fatalf("k8s run: exit %d", r.code)
	}
	for _, want := range []string{"created Secret " + ns + "/dbarena", "created Job " + ns + "/" + k8s.Name(id) + " (4 pods)",
		"4 of 4 shards ended; 8000 events"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("k8s run's stderr lacks %q", want)
		}
	}
	if !strings.Contains(r.stdout, "Run "+id+" (complete, 4 shards)") {
		t.Errorf("k8s run's stdout lacks the merged run's line")
	}
	if strings.Contains(r.stdout+r.stderr, env.password) {
		t.Error("k8s run shows the password")
	}
	run := merged(t, id)
	if run.Status != summary.StatusComplete || run.Totals.Events != events || len(run.Shards) != n {
		t.Fatalf("merged run %s, %d events, %d shards; want complete, %d, %d", run.Status, run.Totals.Events, len(run.Shards), events, n)
	}
	var sum int64
	for i, s := range run.Shards {
		if s.Index != i || s.Status != summary.StatusComplete || s.Totals.Events != events/n || s.Threads != 1 {
			t.Errorf("shard %d: index %d, %s, %d events, %d threads; want %d, complete, %d, 1", i, s.Index, s.Status, s.Totals.Events, s.Threads, i, events/n)
		}
		sum += s.Totals.Events
	}
	if sum != run.Totals.Events {
		t.Errorf("shards' events sum to %d, merged %d", sum, run.Totals.Events)
	}
	// The Job as the controller left it: Indexed, every index succeeded.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var j batchv1.Job
		err := env.cp.api.do(context.Background(), "GET", "/apis/batch/v1/namespaces/"+ns+"/jobs/"+k8s.Name(id), nil, &j)
		if isCode(err, 404) {
			break // ttlSecondsAfterFinished: gone
		}
		if err != nil {
			t.Fatal(err)
		}
		if j.Status.CompletionTime != nil && (j.Status.Succeeded != n || j.Status.CompletedIndexes != "0-3") {
			t.Fatalf("Job: %d succeeded, completed indexes %q; want 4, 0-3", j.Status.Succeeded, j.Status.CompletedIndexes)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Job still there 2m after it finished (ttlSecondsAfterFinished 5): %+v", j.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for {
		var pods corev1.PodList
		if err := env.cp.api.do(context.Background(), "GET", "/api/v1/namespaces/"+ns+"/pods?labelSelector="+url.QueryEscape(k8s.LabelRun+"="+id), nil, &pods); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pods left after the Job was removed", len(pods.Items))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestRunPodRetried: shard 1's first pod fails before dbarena runs in it
// (exit 1); the controller makes a new pod for index 1 under
// backoffLimit, which joins the barrier in its place; k8s run reports the
// failure and ends with the complete run, exit 0. A second k8s run of the
// same run id is exit 1 before it creates anything.
func TestRunPodRetried(t *testing.T) {
	const id = "e2e-retry"
	var mu sync.Mutex
	failed := false
	setHold(id, func(index string, _ *corev1.Pod) string {
		mu.Lock()
		defer mu.Unlock()
		if index == "1" && !failed {
			failed = true
			return "fail"
		}
		return ""
	})
	r := dbarena(passwords(), runArgs(id, 2, "--threads", "2", "--events", "2000")...)
	t.Logf("k8s run (%v), exit %d\nstdout:\n%s\nstderr:\n%s", r.elapsed.Round(time.Millisecond), r.code, r.stdout, r.stderr)
	defer deleteJob(id)
	if r.code != 0 || !strings.Contains(r.stdout, "Run "+id+" (complete, 2 shards)") {
		t.Fatalf("k8s run: exit %d, want 0 and the complete run", r.code)
	}
	if !strings.Contains(r.stderr, "Job "+k8s.Name(id)+": 1 pod(s) failed") || !strings.Contains(r.stderr, "shard 1 (pod ") ||
		!strings.Contains(r.stderr, "failed: Error, exit code 1") {
		t.Errorf("k8s run does not report shard 1's failed pod")
	}
	j := job(t, id)
	if j.Status.Failed != 1 || j.Status.Succeeded != 2 {
		t.Errorf("Job: %d failed, %d succeeded; want 1, 2", j.Status.Failed, j.Status.Succeeded)
	}
	if run := merged(t, id); run.Status != summary.StatusComplete || run.Totals.Events != 2000 {
		t.Errorf("merged run %s with %d events, want complete, 2000", run.Status, run.Totals.Events)
	}
	again := dbarena(passwords(), runArgs(id, 2, "--threads", "2", "--events", "2000")...)
	if again.code != 1 || !strings.Contains(again.stderr, "Job "+k8s.Name(id)+" already exists in namespace "+ns) {
		t.Errorf("same run id again: exit %d\n%s", again.code, again.stderr)
	}
}

// TestRunPodPending: shard 1's pod is never scheduled (the pod runner
// leaves it pending, Unschedulable, as the scheduler says of a pod no
// node can take); k8s run names it with its reason and ends, exit 1,
// within --barrier-timeout and two follow periods of the first shard's
// arrival at the start barrier.
func TestRunPodPending(t *testing.T) {
	const id, barrier = "e2e-pending", 15 * time.Second
	setHold(id, func(index string, _ *corev1.Pod) string {
		if index == "1" {
			return "pending"
		}
		return ""
	})
	r := dbarena(passwords(), runArgs(id, 2, "--threads", "2", "--time", "5", "--barrier-timeout", barrier.String())...)
	t.Logf("k8s run (%v), exit %d\nstdout:\n%s\nstderr:\n%s", r.elapsed.Round(time.Millisecond), r.code, r.stdout, r.stderr)
	defer deleteJob(id)
	if r.code != 1 {
		t.Fatalf("k8s run: exit %d, want 1", r.code)
	}
	for _, want := range []string{"shard 1 (pod " + k8s.Name(id) + "-1-", "pending: Unschedulable: 0/1 nodes are available",
		"while shards wait at the start barrier, longer than --barrier-timeout 15s: run " + id + " cannot start", "kubectl delete job " + k8s.Name(id) + " -n " + ns} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("k8s run's stderr lacks %q", want)
		}
	}
	// The documented bound is --barrier-timeout + 10 s after the first
	// shard reached the barrier (here within a second or two of the
	// Job's creation) or the pod's creation, whichever is later.
	if bound := barrier + 10*time.Second + 5*time.Second; r.elapsed > bound {
		t.Errorf("k8s run took %v, over --barrier-timeout 15s + 10s (+5s for its start)", r.elapsed)
	}
}

// TestRunInterrupted: Ctrl-C stops k8s run's following (exit 1, saying
// so, with the command that would stop the Job); the Job goes on: its
// pods run to the end and the run is complete in the store.
func TestRunInterrupted(t *testing.T) {
	const id = "e2e-ctrlc"
	cmd := command(passwords(), runArgs(id, 2, "--threads", "2", "--time", "8")...)
	var out bytes.Buffer
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = &out, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	defer deleteJob(id)
	var stderr strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(stderr.String(), "shards at the start barrier") && !strings.Contains(stderr.String(), "shards ended") {
		n, err := pr.Read(buf)
		stderr.Write(buf[:n])
		if err != nil {
			t.Fatalf("k8s run ended before following:\n%s", stderr.String())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	rest := make(chan string)
	go func() {
		var b strings.Builder
		for {
			n, err := pr.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				rest <- b.String()
				return
			}
		}
	}()
	werr := cmd.Wait()
	stderr.WriteString(<-rest)
	t.Logf("k8s run after SIGINT: %v\n%s", werr, stderr.String())
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("k8s run after SIGINT: %v, want exit 1", werr)
	}
	if !strings.Contains(stderr.String(), "stopped following run "+id+"; Job "+ns+"/"+k8s.Name(id)+" goes on") {
		t.Errorf("k8s run does not say the Job goes on")
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		j := job(t, id)
		if j.DeletionTimestamp != nil {
			t.Fatal("the Job is being deleted after Ctrl-C")
		}
		if j.Status.CompletionTime != nil && j.Status.Succeeded == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Job not complete 3m after Ctrl-C: %+v", j.Status)
		}
		time.Sleep(time.Second)
	}
	if run := merged(t, id); run.Status != summary.StatusComplete || len(run.Shards) != 2 {
		t.Errorf("run %s after Ctrl-C: %s, %d shards; want complete, 2", id, run.Status, len(run.Shards))
	}
}
