package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/k8s"
	"github.com/dbarena/dbarena/internal/scaleout/k8s/k8sdecode"
)

func TestK8sRenderErrors(t *testing.T) {
	results := filepath.Join(t.TempDir(), "r.db")
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
		{[]string{"k8s", "render", "oltp_point_select", "--shards", "2", "--image", "i", "--target", "mysql://u@h/db", "--password-file", "pw"}, "put the password in the Secret"},
		{[]string{"k8s", "run", "oltp_point_select", "--shards", "2", "--threads", "2", "--image", "i", "--results", results, "--results-reachable", "--target", "mysql://u@h/db", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig"},
		{[]string{"k8s", "run", "oltp_point_select", "--shards", "2", "--threads", "2", "--image", "i", "--results", results, "--results-reachable", "--password-file", "pw"}, "a pod cannot reach a sandbox"},
		{[]string{"k8s", "render", "oltp_point_select", "--shards", "2", "--image", "i", "--target", "mysql://u@h/db", "--results-reachable"}, "--results-reachable is for k8s run"},
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
		"--cpu", "500m", "--target", "mysql://u@db.example:3306/sbtest", "-o", path).mustSucceed(t)
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
		"--events", "41", "--monitor", "none", "--target", "mysql://u@db.example:3306/sbtest", "--shards", "2", "--run-id", "pods"}
	if !slices.Equal(c.Args, wantArgs) || *job.Spec.Completions != 2 || c.Resources.Requests.Cpu().String() != "500m" ||
		job.Name != k8s.Name("pods") || !strings.HasPrefix(job.Name, "dbarena-pods-") {
		t.Fatalf("job %s: pod args %q, completions %d, cpu %v", job.Name, c.Args, *job.Spec.Completions, c.Resources.Requests.Cpu())
	}
}

// fakeAPI plays, over TLS on 127.0.0.1, the few Kubernetes API endpoints k8s run calls: Secrets
// and Jobs of a namespace (get, create) and its pods (list). Bodies are
// decoded with the Kubernetes scheme, strictly.
type fakeAPI struct {
	t       *testing.T
	mu      sync.Mutex
	secrets map[string]*corev1.Secret // by namespace/name
	jobs    map[string]*batchv1.Job
	pods    []corev1.Pod
	calls   []string // "METHOD path"
	// onJob, when set, edits a posted Job (its status) before it is kept.
	onJob  func(*batchv1.Job)
	posted chan *batchv1.Job
}

func newFakeAPI(t *testing.T) (*fakeAPI, string) {
	f := &fakeAPI{t: t, secrets: map[string]*corev1.Secret{}, jobs: map[string]*batchv1.Job{}, posted: make(chan *batchv1.Job, 4)}
	// TLS: client-go sends credentials to https servers only.
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, kubeconfig, `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: "`+srv.URL+`", certificate-authority-data: `+ca+`}
users:
- name: tester
  user: {token: t0ken}
contexts:
- name: fake
  context: {cluster: fake, user: tester, namespace: ctxns}
- name: other
  context: {cluster: fake, user: tester, namespace: otherns}
current-context: fake
`, 0o600)
	return f, kubeconfig
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer t0ken" {
		f.status(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "no token")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// api/v1/namespaces/NS/KIND[/NAME] or apis/batch/v1/namespaces/NS/KIND[/NAME]
	if parts[0] == "apis" && len(parts) > 2 && parts[1] == "batch" {
		parts = parts[2:]
	} else if parts[0] == "api" {
		parts = parts[1:]
	}
	if len(parts) < 4 || parts[0] != "v1" || parts[1] != "namespaces" {
		f.status(w, http.StatusNotFound, metav1.StatusReasonNotFound, "no route "+r.URL.Path)
		return
	}
	ns, kind, name := parts[2], parts[3], strings.Join(parts[4:], "/")
	key := ns + "/" + name
	switch {
	case kind == "pods" && r.Method == http.MethodGet && name == "":
		list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
		for _, p := range f.pods {
			if p.Namespace == ns && r.URL.Query().Get("labelSelector") == k8s.LabelRun+"="+p.Labels[k8s.LabelRun] {
				list.Items = append(list.Items, p)
			}
		}
		f.reply(w, http.StatusOK, list)
	case kind == "secrets" && r.Method == http.MethodGet && name != "":
		if s, ok := f.secrets[key]; ok {
			f.reply(w, http.StatusOK, s)
			return
		}
		f.status(w, http.StatusNotFound, metav1.StatusReasonNotFound, "secrets "+name+" not found")
	case kind == "jobs" && r.Method == http.MethodGet && name != "":
		if j, ok := f.jobs[key]; ok {
			f.reply(w, http.StatusOK, j)
			return
		}
		f.status(w, http.StatusNotFound, metav1.StatusReasonNotFound, "jobs.batch "+name+" not found")
	case (kind == "secrets" || kind == "jobs") && r.Method == http.MethodPost && name == "":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			f.status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
			return
		}
		obj, err := k8sdecode.Object(b)
		if err != nil {
			f.t.Errorf("POST %s: %v\n%s", r.URL.Path, err, b)
			f.status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
			return
		}
		switch o := obj.(type) {
		case *corev1.Secret:
			if kind != "secrets" || o.Namespace != ns {
				break
			}
			if _, ok := f.secrets[ns+"/"+o.Name]; ok {
				f.status(w, http.StatusConflict, metav1.StatusReasonAlreadyExists, "secrets "+o.Name+" already exists")
				return
			}
			f.secrets[ns+"/"+o.Name] = o
			f.reply(w, http.StatusCreated, o)
			return
		case *batchv1.Job:
			if kind != "jobs" || o.Namespace != ns {
				break
			}
			if _, ok := f.jobs[ns+"/"+o.Name]; ok {
				f.status(w, http.StatusConflict, metav1.StatusReasonAlreadyExists, "jobs.batch "+o.Name+" already exists")
				return
			}
			f.posted <- o.DeepCopy()
			if f.onJob != nil {
				f.onJob(o)
			}
			f.jobs[ns+"/"+o.Name] = o
			f.reply(w, http.StatusCreated, o)
			return
		}
		f.t.Errorf("POST %s: a %T", r.URL.Path, obj)
		f.status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "wrong object")
	default:
		f.status(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, r.Method+" "+r.URL.Path)
	}
}

func (f *fakeAPI) reply(w http.ResponseWriter, code int, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		f.t.Error(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func (f *fakeAPI) status(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	f.reply(w, code, &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: reason, Message: msg})
}

// posts lists the POST calls made.
func (f *fakeAPI) posts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "POST ") {
			out = append(out, c)
		}
	}
	return out
}

// podEnv is a pod's environment as the kubelet would build it from the
// container's env and the Secret.
func podEnv(t *testing.T, c corev1.Container, secret *corev1.Secret) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secret.Name:
			v, ok := secret.Data[e.ValueFrom.SecretKeyRef.Key]
			if !ok && (e.ValueFrom.SecretKeyRef.Optional == nil || !*e.ValueFrom.SecretKeyRef.Optional) {
				t.Fatalf("env %s: Secret %s has no key %q", e.Name, secret.Name, e.ValueFrom.SecretKeyRef.Key)
			}
			if ok {
				env[e.Name] = string(v)
			}
		default:
			t.Fatalf("env %s: from %+v", e.Name, e.ValueFrom)
		}
	}
	return env
}

// TestK8sRun: k8s run creates the Secret (the results DSN, the target's
// password from $DBARENA_PASSWORD) and the Job that k8s render renders,
// through the API of the kubeconfig's cluster (a stand-in here), then
// follows the run in the results store while the Job's pod command runs
// here, once per index, with the environment the Job gives it; it prints
// the merged run once both shards ended.
func TestK8sRun(t *testing.T) {
	needServers(t)
	prev := followEvery
	followEvery = 50 * time.Millisecond
	t.Cleanup(func() { followEvery = prev })
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	api, kubeconfig := newFakeAPI(t)
	dsn, pw := bareDSN(suite.mariadb)
	results := filepath.Join(t.TempDir(), "r.db")
	runFlags := []string{"oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "2",
		"--events", "30", "--monitor", "none", "--shards", "2", "--run-id", "follow", "--image", "dbarena:test", "--target", dsn}
	done := make(chan result, 1)
	go func() {
		done <- dbarenaEnv(t, suite.home, map[string]string{"DBARENA_PASSWORD": pw},
			append(append([]string{"k8s", "run"}, runFlags...), "--kubeconfig", kubeconfig, "--follow-timeout", "5m", "--results", results, "--results-reachable")...)
	}()
	var job *batchv1.Job
	select {
	case job = <-api.posted:
	case r := <-done:
		t.Fatalf("k8s run ended before it created the Job: exit %d\n%s", r.code, r.stderr)
	case <-time.After(2 * time.Minute):
		t.Fatal("k8s run never created the Job")
	}
	api.mu.Lock()
	secret := api.secrets["ctxns/dbarena"]
	api.mu.Unlock()
	if secret == nil || string(secret.Data["results"]) != results || string(secret.Data["password"]) != pw {
		t.Fatalf("Secret ctxns/dbarena: %+v; want the results DSN and the target's password", secret)
	}
	// The posted Job is the rendered one, in the context's namespace.
	rendered, err := k8sdecode.Decode([]byte(dbarena(t, append([]string{"k8s", "render"}, runFlags...)...).mustSucceed(t).stdout))
	if err != nil {
		t.Fatal(err)
	}
	if job.Namespace != "ctxns" || rendered.Namespace != "" {
		t.Errorf("Job in namespace %q (rendered: %q), want the context's, ctxns", job.Namespace, rendered.Namespace)
	}
	rendered.Namespace = job.Namespace
	if !equality.Semantic.DeepEqual(job, rendered) {
		t.Fatalf("posted Job differs from k8s render's:\nposted:   %+v\nrendered: %+v", job, rendered)
	}
	c := job.Spec.Template.Spec.Containers[0]
	args := c.Args
	for _, f := range []string{"--results", "--kubeconfig", "--image", "--password-file"} {
		if slices.Contains(args, f) {
			t.Fatalf("pod args %q carry k8s run's own flag %s", args, f)
		}
	}
	var wg sync.WaitGroup
	pods := make([]result, 2)
	for i := range pods {
		env := podEnv(t, c, secret)
		env["JOB_COMPLETION_INDEX"] = strconv.Itoa(i)
		env["DBARENA_HOME"] = t.TempDir() // the container's own /tmp
		wg.Add(1)
		go func() {
			defer wg.Done()
			pods[i] = dbarenaEnv(t, suite.home, env, args...)
		}()
	}
	wg.Wait()
	for i, p := range pods {
		p.mustSucceed(t)
		if !strings.Contains(p.stdout, "Shard "+strconv.Itoa(i)+" of 2 of run follow") {
			t.Errorf("pod %d:\n%s", i, p.stdout)
		}
	}
	r := <-done
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "Run follow (complete, 2 shards)") || !strings.Contains(r.stderr, "2 of 2 shards ended; 30 events") ||
		!strings.Contains(r.stderr, "created Secret ctxns/dbarena") || !strings.Contains(r.stderr, "created Job ctxns/"+k8s.Name("follow")+" (2 pods)") {
		t.Errorf("k8s run:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, pw) {
		t.Error("k8s run shows the target's password")
	}
	if got := api.posts(); !slices.Equal(got, []string{"POST /api/v1/namespaces/ctxns/secrets", "POST /apis/batch/v1/namespaces/ctxns/jobs"}) {
		t.Errorf("POSTs %q", got)
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

// TestK8sRunJobExists: a Job of the run's name in the namespace (here the
// --context's) ends k8s run with exit 1 before it creates anything.
func TestK8sRunJobExists(t *testing.T) {
	api, kubeconfig := newFakeAPI(t)
	taken := k8s.Name("taken")
	api.jobs["otherns/"+taken] = &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: taken, Namespace: "otherns"}}
	r := dbarena(t, "k8s", "run", "oltp_point_select", "--threads", "2", "--events", "4", "--shards", "2", "--run-id", "taken",
		"--image", "i", "--kubeconfig", kubeconfig, "--context", "other", "--results", filepath.Join(t.TempDir(), "r.db"), "--results-reachable",
		"--target", "mysql://u@db.example/sbtest")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "Job "+taken+" already exists in namespace otherns") {
		t.Errorf("exit %d, stderr %q; want 1 and the Job named", r.code, r.stderr)
	}
	if p := api.posts(); len(p) > 0 {
		t.Errorf("created %q", p)
	}
}

// TestK8sRunJobFailed: a Job that fails before any shard reached the
// results store ends k8s run with exit 1 and its pod's failure, with the
// last line of the pod's termination message (its log's tail, where
// dbarena's error is); an existing Secret is left as it is.
func TestK8sRunJobFailed(t *testing.T) {
	prev := followEvery
	followEvery = 50 * time.Millisecond
	t.Cleanup(func() { followEvery = prev })
	api, kubeconfig := newFakeAPI(t)
	api.secrets["bench/dbarena"] = &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "dbarena", Namespace: "bench"}, Data: map[string][]byte{"results": []byte("mysql://x@y/z")}}
	api.onJob = func(j *batchv1.Job) {
		j.Status = batchv1.JobStatus{Failed: 3, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
			Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}}
		api.pods = append(api.pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-0-x7k2p", Namespace: j.Namespace, Labels: j.Spec.Template.Labels,
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "0"}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "dbarena",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 3,
					Message: "dbarena: shard 0 of 2\ndbarena: $DBARENA_RESULTS: connection refused\n"}}}}}, // the log's tail (FallbackToLogsOnError)
		}, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-1-q9d4z", Namespace: j.Namespace, Labels: j.Spec.Template.Labels,
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "1"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	r := dbarena(t, "k8s", "run", "oltp_point_select", "--threads", "2", "--events", "4", "--shards", "2", "--run-id", "doomed",
		"--image", "i", "--kubeconfig", kubeconfig, "--namespace", "bench", "--follow-timeout", "2m", "--results", filepath.Join(t.TempDir(), "r.db"),
		"--results-reachable", "--target", "mysql://u@db.example/sbtest")
	doomed := k8s.Name("doomed")
	for _, want := range []string{
		"Secret bench/dbarena exists: left as it is",
		"created Job bench/" + doomed + " (2 pods)",
		"Job " + doomed + ": 3 pod(s) failed",
		"shard 0 (pod " + doomed + "-0-x7k2p) failed: Error, exit code 3: dbarena: $DBARENA_RESULTS: connection refused",
		"Job bench/" + doomed + " failed before any shard reached the results store: BackoffLimitExceeded: Job has reached the specified backoff limit; " +
			"shard 0 (pod " + doomed + "-0-x7k2p) failed: Error, exit code 3: dbarena: $DBARENA_RESULTS: connection refused\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.code != ExitFailed || strings.Contains(r.stderr, "q9d4z") || strings.Contains(r.stderr, "shard 0 of 2") {
		t.Errorf("exit %d, want 1; a running pod reported:\n%s", r.code, r.stderr)
	}
	if p := api.posts(); !slices.Equal(p, []string{"POST /apis/batch/v1/namespaces/bench/jobs"}) {
		t.Errorf("POSTs %q; want the Job only", p)
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
