package k8s

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrJobExists is CreateJob's error when a Job of that name exists.
var ErrJobExists = errors.New("job exists")

// Client talks to the cluster of the user's kubeconfig with client-go's
// REST client over a scheme of the two API groups dbarena needs (batch/v1
// Jobs; core/v1 Secrets and Pods). client-go's typed clients are not
// used: each imports k8s.io/client-go/kubernetes/scheme, which registers
// all of k8s.io/api's groups (+98 s of cold-build CPU and +29 MB of
// binary, against +7 s and +2.4 MB for this; docs/benchmarks.md).
type Client struct {
	// Namespace is where the Secret and the Job go.
	Namespace string
	// Server is the API server's address, for messages.
	Server string
	batch  *rest.RESTClient
	core   *rest.RESTClient
}

// Config says how to reach the cluster.
type Config struct {
	// Kubeconfig is --kubeconfig; "" follows $KUBECONFIG (a list of
	// files), else ~/.kube/config, else the in-cluster service account
	// when running in a pod.
	Kubeconfig string
	// Context is --context; "" is the kubeconfig's current context.
	Context string
	// Namespace is --namespace; "" is the context's, else "default".
	Namespace string
	// Getenv reads KUBECONFIG and HOME (os.Getenv when nil).
	Getenv func(string) string
}

// Connect loads the kubeconfig of cfg and builds the REST clients of the
// two groups from one rest.Config. Nothing is sent to the cluster yet.
func Connect(cfg Config) (*Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Getenv != nil {
		if env := cfg.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
			rules.Precedence = filepath.SplitList(env)
		} else if home := cfg.Getenv("HOME"); home != "" {
			rules.Precedence = []string{filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}
		} else {
			rules.Precedence = nil
		}
		rules.MigrationRules = nil
	}
	rules.ExplicitPath = cfg.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: cfg.Context})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns := cfg.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, fmt.Errorf("kubeconfig: namespace: %w", err)
		}
		if ns == "" {
			ns = "default"
		}
	}
	rc.UserAgent = "dbarena"
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	codecs := serializer.NewCodecFactory(scheme)
	mk := func(gv schema.GroupVersion, path string) (*rest.RESTClient, error) {
		c := *rc
		c.GroupVersion, c.APIPath, c.NegotiatedSerializer, c.ContentType = &gv, path, codecs.WithoutConversion(), "application/json"
		return rest.RESTClientFor(&c)
	}
	b, err := mk(batchv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := mk(corev1.SchemeGroupVersion, "/api")
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return &Client{Namespace: ns, Server: rc.Host, batch: b, core: c}, nil
}

// EnsureSecret creates the Secret name holding data unless one of that
// name exists, which it leaves as it is; it reports whether it created it.
func (c *Client) EnsureSecret(ctx context.Context, name string, data map[string][]byte) (bool, error) {
	err := c.core.Get().Namespace(c.Namespace).Resource("secrets").Name(name).Do(ctx).Into(&corev1.Secret{})
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("read Secret %s/%s: %w", c.Namespace, name, err)
	}
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: map[string]string{LabelApp: "dbarena"}},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	if err := c.core.Post().Namespace(c.Namespace).Resource("secrets").Body(s).Do(ctx).Into(&corev1.Secret{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil // made meanwhile by someone else: theirs stands
		}
		return false, fmt.Errorf("create Secret %s/%s: %w", c.Namespace, name, err)
	}
	return true, nil
}

// CreateJob creates job in the client's namespace; ErrJobExists (wrapped)
// when a Job of its name is there already.
func (c *Client) CreateJob(ctx context.Context, job *batchv1.Job) error {
	job = job.DeepCopy()
	job.Namespace = c.Namespace
	err := c.batch.Post().Namespace(c.Namespace).Resource("jobs").Body(job).Do(ctx).Into(&batchv1.Job{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("Job %s/%s: %w", c.Namespace, job.Name, ErrJobExists)
	case err != nil:
		return fmt.Errorf("create Job %s/%s: %w", c.Namespace, job.Name, err)
	}
	return nil
}

// JobExists reports whether a Job named name is in the namespace.
func (c *Client) JobExists(ctx context.Context, name string) (bool, error) {
	err := c.batch.Get().Namespace(c.Namespace).Resource("jobs").Name(name).Do(ctx).Into(&batchv1.Job{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("read Job %s/%s: %w", c.Namespace, name, err)
}

// Status is what the cluster says of a Job.
type Status struct {
	Active, Succeeded, Failed int32
	// Complete and FailedJob are the Job's terminal conditions; Reason is
	// the Failed condition's reason and message.
	Complete, FailedJob bool
	Reason              string
	// Pods are the Job's pods in trouble: failed, or waiting on an error
	// (image pull, a missing Secret key), one line each, by pod name.
	Pods map[string]string
	// Pending are the Job's pods not started yet (phase Pending), by pod
	// name: who they are and why, as far as the cluster says.
	Pending map[string]string
	// PodsErr is why the pods could not be listed (the Job's status is
	// still good).
	PodsErr error
}

// JobStatus reads the Job named name and, when some of its pods are not
// running well, why. runKey selects the pods (label dbarena.io/run).
func (c *Client) JobStatus(ctx context.Context, name, runKey string) (Status, error) {
	job := &batchv1.Job{}
	err := c.batch.Get().Namespace(c.Namespace).Resource("jobs").Name(name).Do(ctx).Into(job)
	if err != nil {
		return Status{}, fmt.Errorf("read Job %s/%s: %w", c.Namespace, name, err)
	}
	s := Status{Active: job.Status.Active, Succeeded: job.Status.Succeeded, Failed: job.Status.Failed}
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			s.Complete = true
		case batchv1.JobFailed:
			s.FailedJob = true
			s.Reason = joinNonEmpty(": ", cond.Reason, cond.Message)
		}
	}
	pods := &corev1.PodList{}
	err = c.core.Get().Namespace(c.Namespace).Resource("pods").Param("labelSelector", LabelRun+"="+runKey).Do(ctx).Into(pods)
	if err != nil {
		s.PodsErr = fmt.Errorf("list pods of Job %s/%s: %w", c.Namespace, name, err)
		return s, nil
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if line := PodTrouble(p); line != "" {
			if s.Pods == nil {
				s.Pods = map[string]string{}
			}
			s.Pods[p.Name] = line
		}
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
			if s.Pending == nil {
				s.Pending = map[string]string{}
			}
			s.Pending[p.Name] = podWho(p) + " pending: " + pendingWhy(p)
		}
	}
	return s, nil
}

// podWho names a pod by its shard when the Job controller gave it one.
func podWho(p *corev1.Pod) string {
	if i, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
		return "shard " + i + " (pod " + p.Name + ")"
	}
	return "pod " + p.Name
}

// pendingWhy is why a pending pod has not started: its container's
// waiting reason, else the scheduler's (PodScheduled False: Unschedulable
// and its message), else that no node took it yet.
func pendingWhy(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return joinNonEmpty(": ", w.Reason, oneLine(w.Message))
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return joinNonEmpty(": ", c.Reason, oneLine(c.Message))
		}
	}
	if p.Spec.NodeName == "" {
		return "not scheduled on a node"
	}
	return "not started on node " + p.Spec.NodeName
}

// starting are the waiting reasons of a pod on its way up.
var starting = map[string]bool{"": true, "ContainerCreating": true, "PodInitializing": true}

// PodTrouble is one line on a failed pod (its shard, the container's
// reason, exit code and the last line of its termination message, where
// the log's tail ends with dbarena's error) or a pod whose container waits
// on an error; "" for a pod that is well.
func PodTrouble(p *corev1.Pod) string {
	who := podWho(p)
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && !starting[w.Reason] {
			return who + " waits: " + joinNonEmpty(": ", w.Reason, w.Message)
		}
	}
	if p.Status.Phase == corev1.PodPending {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
				return who + " pending: " + joinNonEmpty(": ", c.Reason, oneLine(c.Message))
			}
		}
	}
	if p.Status.Phase != corev1.PodFailed {
		return ""
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("%s failed: %s", who, joinNonEmpty(": ", fmt.Sprintf("%s, exit code %d", t.Reason, t.ExitCode), lastLine(t.Message)))
		}
	}
	return who + " failed: " + joinNonEmpty(": ", p.Status.Reason, p.Status.Message)
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// lastLine is the last non-blank line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}
