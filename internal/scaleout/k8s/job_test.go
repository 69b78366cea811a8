package k8s

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/dbarena/dbarena/internal/scaleout/k8s/k8sdecode"
)

func testSpec() Spec {
	return Spec{RunKey: "Bench_1.a", Namespace: "perf", Image: "example.org/dbarena:1", PullPolicy: "IfNotPresent", Shards: 4,
		Args:   []string{"run", "oltp_read_write", "--threads", "64", "--shards", "4", "--run-id", "Bench_1.a"},
		Secret: "dbarena", ResultsKey: "results", PasswordKey: "password", CPU: "2", Memory: "1Gi", TTL: 3600, BackoffLimit: 2}
}

// TestJobRoundTrip: the rendered YAML decodes back with the Kubernetes
// scheme, strictly, and every field set is there.
func TestJobRoundTrip(t *testing.T) {
	job, err := Job(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k8sdecode.Decode(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	s := got.Spec
	if got.Name != Name("Bench_1.a") || !strings.HasPrefix(got.Name, "dbarena-bench-1-a-") || got.Namespace != "perf" || got.Labels[LabelRun] != "Bench_1.a" {
		t.Errorf("metadata %+v", got.ObjectMeta)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 ||
		*s.BackoffLimit != 2 || *s.TTLSecondsAfterFinished != 3600 {
		t.Errorf("job spec %+v", s)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 || s.Template.Labels[LabelRun] != "Bench_1.a" {
		t.Fatalf("pod %+v", pod)
	}
	c := pod.Containers[0]
	if c.Image != "example.org/dbarena:1" || c.ImagePullPolicy != corev1.PullIfNotPresent || !slices.Equal(c.Args, testSpec().Args) {
		t.Errorf("container %+v", c)
	}
	if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("terminationMessagePolicy %q: a failed pod would show only its exit code", c.TerminationMessagePolicy)
	}
	if c.Resources.Requests.Cpu().String() != "2" || c.Resources.Requests.Memory().String() != "1Gi" {
		t.Errorf("requests %v", c.Resources.Requests)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if r := env[EnvResults].ValueFrom; r == nil || r.SecretKeyRef.Name != "dbarena" || r.SecretKeyRef.Key != "results" {
		t.Errorf("results env %+v", env[EnvResults])
	}
	if p := env[EnvPassword].ValueFrom; p == nil || p.SecretKeyRef.Key != "password" || !*p.SecretKeyRef.Optional {
		t.Errorf("password env %+v", env[EnvPassword])
	}
	aa := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(aa) != 1 || aa[0].Weight != 100 || aa[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" ||
		aa[0].PodAffinityTerm.LabelSelector.MatchLabels[LabelRun] != "Bench_1.a" {
		t.Errorf("anti-affinity %+v", aa)
	}
	for _, bad := range []string{"password:", "://"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("manifest holds %q:\n%s", bad, b)
		}
	}
}

func TestJobErrors(t *testing.T) {
	s := testSpec()
	s.Image, s.CPU, s.Shards = "", "lots", 0
	_, err := Job(s)
	for _, want := range []string{"--image", "--cpu", "--shards"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %s", err, want)
		}
	}
	// What the API server refuses (checked against a real one by the
	// e2e check), refused here first.
	for _, tc := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.PullPolicy = "Sometimes" }, "--pull-policy"},
		{func(s *Spec) { s.Image = " dbarena:1" }, "--image"},
		{func(s *Spec) { s.Memory = "-1Gi" }, "--memory"},
		{func(s *Spec) { s.CPU = "-500m" }, "--cpu"},
	} {
		s := testSpec()
		tc.edit(&s)
		if _, err := Job(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v", tc.want, err)
		}
	}
	if _, err := k8sdecode.Decode([]byte("apiVersion: batch/v1\nkind: Job\nspec:\n  parallelizm: 3\n")); err == nil {
		t.Error("an unknown field decodes")
	}
}

// TestNameInjective: run ids a DNS label cannot tell apart name different
// Jobs, each a valid DNS label.
func TestNameInjective(t *testing.T) {
	seen := map[string]string{}
	long := strings.Repeat("a", 63)
	for _, key := range []string{"Abc", "abc", "ABC", "a_b", "a.b", "a-b", long, long[:62] + "b"} {
		n := Name(key)
		if other, ok := seen[n]; ok {
			t.Errorf("%q and %q both name %s", other, key, n)
		}
		seen[n] = key
		if len(n) > 63 || strings.HasSuffix(n, "-") || n != strings.ToLower(n) {
			t.Errorf("Name(%q) = %q: not a DNS label", key, n)
		}
	}
}
