// Package k8s renders a sharded dbarena run as a Kubernetes Indexed Job,
// built from the Kubernetes API's own Go types (k8s.io/api) and written as
// YAML: one pod per shard, its index in JOB_COMPLETION_INDEX, the results
// store's DSN (and the target's password) from a Secret, never in the
// manifest.
package k8s

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Labels every rendered object and pod carries.
const (
	LabelApp = "app.kubernetes.io/name"
	LabelRun = "dbarena.io/run"
)

// Environment variables the pods read from the Secret.
const (
	EnvResults  = "DBARENA_RESULTS"
	EnvPassword = "DBARENA_PASSWORD"
)

// Spec is what the Job runs and where.
type Spec struct {
	// RunKey is the sharded run's --run-id; it names the Job.
	RunKey    string
	Namespace string
	Image     string
	// PullPolicy is the image pull policy ("" leaves Kubernetes' default).
	PullPolicy string
	Shards     int
	// Args are dbarena's arguments in every pod ("run", the workload, its
	// flags, --shards N --run-id KEY); the binary is the image's
	// entrypoint.
	Args []string
	// Secret names the Secret holding ResultsKey (the results store DSN,
	// required) and PasswordKey (the target's password, optional).
	Secret      string
	ResultsKey  string
	PasswordKey string
	// CPU and Memory are each pod's resource requests ("2", "1Gi").
	CPU, Memory string
	// TTL is how long the finished Job is kept, in seconds.
	TTL int32
	// BackoffLimit is how many pod failures the Job tolerates.
	BackoffLimit int32
	// SecretArgs are the values of Args kept in the Secret.
	SecretArgs []SecretArg
}

// Name is the Job's name, a DNS label: "dbarena-", the run key
// lower-cased with '_' and '.' made '-' (cut to fit), and the first 8 hex
// digits of the SHA-256 of the exact key, so that run ids a DNS label
// cannot tell apart ("Abc" and "abc", "a_b" and "a.b") name different
// Jobs.
func Name(key string) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + hex.EncodeToString(sum[:4])
	n := "dbarena-" + strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(key))
	if len(n) > 63-len(suffix) {
		n = n[:63-len(suffix)]
	}
	return strings.TrimRight(n, "-") + suffix
}

// SecretArg is a secret value of the pods' command line (a URL's
// password, an Authorization header): the Secret holds it under Key and
// the pod reads it into the environment variable Env, which its argument
// names as $(Env) (Kubernetes expands it), so the manifest never holds
// the value.
type SecretArg struct {
	Env, Key string
}

// Job builds the Indexed Job of spec.
func Job(spec Spec) (*batchv1.Job, error) {
	var errs []error
	if spec.Shards < 1 {
		errs = append(errs, fmt.Errorf("--shards must be >= 1, got %d", spec.Shards))
	}
	if spec.Image == "" {
		errs = append(errs, errors.New("--image: name the dbarena image"))
	} else if strings.TrimSpace(spec.Image) != spec.Image {
		errs = append(errs, fmt.Errorf("--image %q: leading or trailing white space (the API server refuses it)", spec.Image))
	}
	switch corev1.PullPolicy(spec.PullPolicy) {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		errs = append(errs, fmt.Errorf("--pull-policy %q: want Always, IfNotPresent or Never", spec.PullPolicy))
	}
	if spec.Secret == "" || spec.ResultsKey == "" {
		errs = append(errs, errors.New("--secret: name the Secret that holds the results store DSN"))
	}
	cpu, err := resource.ParseQuantity(spec.CPU)
	if err != nil {
		errs = append(errs, fmt.Errorf("--cpu %q: %w", spec.CPU, err))
	} else if cpu.Sign() < 0 {
		errs = append(errs, fmt.Errorf("--cpu %q: must not be negative", spec.CPU))
	}
	mem, err := resource.ParseQuantity(spec.Memory)
	if err != nil {
		errs = append(errs, fmt.Errorf("--memory %q: %w", spec.Memory, err))
	} else if mem.Sign() < 0 {
		errs = append(errs, fmt.Errorf("--memory %q: must not be negative", spec.Memory))
	}
	if spec.TTL < 0 || spec.BackoffLimit < 0 {
		errs = append(errs, errors.New("--ttl and --backoff-limit must be >= 0"))
	}
	if spec.Namespace != "" {
		if msgs := validation.IsDNS1123Label(spec.Namespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespace %q: not a namespace name (a DNS-1123 label): %s", spec.Namespace, msgs[0]))
		}
	}
	if spec.Secret != "" {
		if msgs := validation.IsDNS1123Subdomain(spec.Secret); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--secret %q: not a Secret name (a DNS-1123 subdomain): %s", spec.Secret, msgs[0]))
		}
	}
	for flag, key := range map[string]string{"--results-key": spec.ResultsKey, "--password-key": spec.PasswordKey} {
		if key == "" {
			continue
		}
		if msgs := validation.IsConfigMapKey(key); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s %q: not a Secret key: %s", flag, key, msgs[0]))
		}
	}
	if msgs := validation.IsValidLabelValue(spec.RunKey); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--run-id %q: not a Kubernetes label value: %s", spec.RunKey, msgs[0]))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	n := int32(spec.Shards)
	labels := map[string]string{LabelApp: "dbarena", LabelRun: spec.RunKey}
	indexed := batchv1.IndexedCompletion
	env := []corev1.EnvVar{
		{Name: EnvResults, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: spec.Secret}, Key: spec.ResultsKey}}},
		{Name: "DBARENA_HOME", Value: "/tmp/dbarena"},
	}
	if spec.PasswordKey != "" {
		optional := true
		env = append(env, corev1.EnvVar{Name: EnvPassword, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: spec.Secret}, Key: spec.PasswordKey, Optional: &optional}}})
	}
	for _, sa := range spec.SecretArgs {
		env = append(env, corev1.EnvVar{Name: sa.Env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: spec.Secret}, Key: sa.Key}}})
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: Name(spec.RunKey), Namespace: spec.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:          &indexed,
			Completions:             &n,
			Parallelism:             &n,
			BackoffLimit:            &spec.BackoffLimit,
			TTLSecondsAfterFinished: &spec.TTL,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:            "dbarena",
						Image:           spec.Image,
						ImagePullPolicy: corev1.PullPolicy(spec.PullPolicy),
						Args:            spec.Args,
						Env:             env,
						// A failed pod's termination message is its log's
						// tail (dbarena writes no termination log): k8s run
						// and kubectl describe show the error, not only the
						// exit code.
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}},
					}},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{
								LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: spec.RunKey}},
								TopologyKey:   "kubernetes.io/hostname",
							},
						}},
					}},
				},
			},
		},
	}
	return job, nil
}

// Marshal writes job as YAML.
func Marshal(job *batchv1.Job) ([]byte, error) {
	b, err := yaml.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("render job: %w", err)
	}
	return b, nil
}
