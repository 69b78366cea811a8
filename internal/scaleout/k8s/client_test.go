package k8s

import (
	"os"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodTrouble: a failed pod is reported with its shard and its
// container's end; a pod waiting on an error too; a pod starting or
// running is not.
func TestPodTrouble(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "dbarena-r-1-abcde", Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "1"}}
	waiting := func(reason, msg string) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
	}
	for _, tc := range []struct {
		pod  corev1.Pod
		want string
	}{
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting("ContainerCreating", "")}}, ""},
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodRunning}}, ""},
		// Left pending by the scheduler: its reason, as it says it.
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available:\n 3 Insufficient cpu."}}}},
			"shard 1 (pod dbarena-r-1-abcde) pending: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."},
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodPending}}, ""},
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: waiting("CreateContainerConfigError", `couldn't find key results in Secret perf/dbarena`)}},
			`shard 1 (pod dbarena-r-1-abcde) waits: CreateContainerConfigError: couldn't find key results in Secret perf/dbarena`},
		{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting("ImagePullBackOff", "")}},
			"pod p waits: ImagePullBackOff"},
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}}},
			"shard 1 (pod dbarena-r-1-abcde) failed: OOMKilled, exit code 137"},
		// FallbackToLogsOnError: the message is the log's tail, which
		// ends with dbarena's error.
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
				Message: "shard 1 of 4: waiting at the barrier\n[   5s] 1200 events\ndbarena: run: connection lost\n\n"}}}}}},
			"shard 1 (pod dbarena-r-1-abcde) failed: Error, exit code 1: dbarena: run: connection lost"},
		{corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low on memory"}},
			"shard 1 (pod dbarena-r-1-abcde) failed: Evicted: low on memory"},
	} {
		if got := PodTrouble(&tc.pod); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.pod.Name, tc.pod.Status.Phase, got, tc.want)
		}
	}
}

// TestConnectNamespace: the namespace is --namespace, else the context's,
// else "default"; a missing --kubeconfig file is an error.
func TestConnectNamespace(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod, even if the tests run in one
	dir := t.TempDir()
	path := dir + "/kubeconfig"
	writeKubeconfig(t, path)
	env := func(k string) string { return map[string]string{"KUBECONFIG": path}[k] }
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Getenv: env}, "ctxns"},
		{Config{Getenv: env, Namespace: "flag"}, "flag"},
		{Config{Getenv: env, Context: "bare"}, "default"},
		{Config{Kubeconfig: path, Context: "bare", Getenv: func(string) string { return "" }}, "default"},
	} {
		c, err := Connect(tc.cfg)
		if err != nil {
			t.Fatalf("%+v: %v", tc.cfg, err)
		}
		if c.Namespace != tc.want || c.Server != "https://127.0.0.1:1" {
			t.Errorf("%+v: namespace %q on %s, want %q", tc.cfg, c.Namespace, c.Server, tc.want)
		}
	}
	if _, err := Connect(Config{Kubeconfig: dir + "/none", Getenv: env}); err == nil {
		t.Error("a missing --kubeconfig file: no error")
	}
	if _, err := Connect(Config{Getenv: env, Context: "nope"}); err == nil {
		t.Error("an unknown --context: no error")
	}
}

func writeKubeconfig(t *testing.T, path string) {
	t.Helper()
	const text = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: ns
  context: {cluster: c, user: u, namespace: ctxns}
- name: bare
  context: {cluster: c, user: u}
current-context: ns
`
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
