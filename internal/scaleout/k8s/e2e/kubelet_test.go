//go:build k8se2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podRunner stands in for the kubelets, which cannot run here: it takes
// each pod of the namespace the Job controller creates, runs its
// container's command (the image's entrypoint is dbarena, so the dbarena
// binary under test with the container's args) on this machine with the
// environment Kubernetes would give it (env values, secretKeyRef from the
// Secret, fieldRef from the pod's metadata such as the controller's
// JOB_COMPLETION_INDEX, $(VAR) expanded in values and args as the kubelet
// expands them), and reports the pod's phase and container state from the
// exit code, with the log's tail as the termination message under
// FallbackToLogsOnError. A pod deleted while running has its process
// stopped and is removed, as a kubelet does.
type podRunner struct {
	api       *apiClient
	namespace string
	binary    string // dbarena
	dir       string // each pod's own DBARENA_HOME and log under it
	log       io.Writer

	mu    sync.Mutex
	taken map[string]*podProc // by pod UID
	// hold decides per pod what to do instead of running it: "pending"
	// leaves it unscheduled (PodScheduled False), "fail" makes its
	// container exit at once (a crash before dbarena ran); "" runs it.
	hold func(p *corev1.Pod) string
	wg   sync.WaitGroup
}

type podProc struct {
	cmd      *exec.Cmd
	done     chan struct{}
	stopping bool // SIGTERM sent (the run loop's only)
}

func newPodRunner(api *apiClient, ns, binary, dir string, log io.Writer) *podRunner {
	return &podRunner{api: api, namespace: ns, binary: binary, dir: dir, log: log, taken: map[string]*podProc{}}
}

// run takes pods until ctx ends.
func (r *podRunner) run(ctx context.Context) {
	for ctx.Err() == nil {
		var pods corev1.PodList
		if err := r.api.do(ctx, "GET", "/api/v1/namespaces/"+r.namespace+"/pods", nil, &pods); err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(r.log, "pod runner: %v\n", err)
			}
			_ = sleep(ctx, time.Second)
			continue
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			r.mu.Lock()
			proc, seen := r.taken[string(p.UID)]
			r.mu.Unlock()
			switch {
			case p.DeletionTimestamp != nil:
				r.removeDeleted(ctx, p, proc, seen)
			case !seen && p.Status.Phase == corev1.PodPending:
				r.mu.Lock()
				r.taken[string(p.UID)] = nil
				action := ""
				if r.hold != nil {
					action = r.hold(p)
				}
				r.mu.Unlock()
				r.wg.Add(1)
				go func(p corev1.Pod) {
					defer r.wg.Done()
					r.start(ctx, &p, action)
				}(*p)
			}
		}
		_ = sleep(ctx, 250*time.Millisecond)
	}
	r.mu.Lock()
	for _, proc := range r.taken {
		if proc != nil && proc.cmd.Process != nil {
			_ = proc.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// removeDeleted stops a deleted pod's process (SIGTERM, SIGKILL 10 s
// later) and, once it ended, removes the pod (grace period 0), as the
// kubelet does.
func (r *podRunner) removeDeleted(ctx context.Context, p *corev1.Pod, proc *podProc, seen bool) {
	if seen && proc == nil {
		r.mu.Lock()
		proc = r.taken[string(p.UID)] // started meanwhile?
		r.mu.Unlock()
	}
	if proc != nil {
		select {
		case <-proc.done:
		default:
			if !proc.stopping {
				proc.stopping = true
				_ = proc.cmd.Process.Signal(syscall.SIGTERM)
				go func() {
					select {
					case <-proc.done:
					case <-time.After(10 * time.Second):
						_ = proc.cmd.Process.Kill()
					}
				}()
			}
			return
		}
	}
	if len(p.Finalizers) > 0 {
		return // the Job controller removes its tracking finalizer first
	}
	zero := int64(0)
	_ = r.api.do(ctx, "DELETE", "/api/v1/namespaces/"+r.namespace+"/pods/"+p.Name,
		metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID}}, nil)
}

// start runs (or holds) one pod.
func (r *podRunner) start(ctx context.Context, p *corev1.Pod, action string) {
	who := p.Name
	if action == "pending" {
		// What the scheduler says of a pod no node can take.
		err := r.setStatus(ctx, p, func(s *corev1.PodStatus) {
			s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.Now(),
				Message: "0/1 nodes are available: 1 Insufficient cpu. (the e2e pod runner leaves this pod pending)"})
		})
		if err != nil {
			fmt.Fprintf(r.log, "pod runner: %s: %v\n", who, err)
		}
		return
	}
	c := p.Spec.Containers[0]
	env, err := r.environment(ctx, p, c)
	if err != nil {
		// The kubelet's answer to a missing Secret or key.
		_ = r.setStatus(ctx, p, func(s *corev1.PodStatus) {
			s.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()}}}}
		})
		fmt.Fprintf(r.log, "pod runner: %s: %v\n", who, err)
		return
	}
	home := filepath.Join(r.dir, p.Name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		fmt.Fprintf(r.log, "pod runner: %v\n", err)
		return
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = expand(a, env)
	}
	vars := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		if k == "DBARENA_HOME" {
			v = home // the container's own file system
		}
		vars = append(vars, k+"="+v)
	}
	logPath := filepath.Join(r.dir, p.Name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		fmt.Fprintf(r.log, "pod runner: %v\n", err)
		return
	}
	defer lf.Close()
	bin := r.binary
	if action == "fail" {
		bin = "/bin/false" // the container dies before dbarena runs
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = vars, lf, lf, home
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := metav1.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(r.log, "pod runner: %s: %v\n", who, err)
		return
	}
	proc := &podProc{cmd: cmd, done: make(chan struct{})}
	r.mu.Lock()
	r.taken[string(p.UID)] = proc
	r.mu.Unlock()
	fmt.Fprintf(r.log, "pod runner: %s (index %s) runs pid %d: %s\n", who, p.Annotations[batchv1.JobCompletionIndexAnnotation], cmd.Process.Pid, strings.Join(args, " "))
	if err := r.setStatus(ctx, p, func(s *corev1.PodStatus) {
		s.Phase, s.StartTime, s.HostIP, s.PodIP = corev1.PodRunning, &started, "127.0.0.1", "127.0.0.1"
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}
	}); err != nil {
		fmt.Fprintf(r.log, "pod runner: %s: %v\n", who, err)
	}
	werr := cmd.Wait()
	close(proc.done)
	code := 0
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			code = 128
		} else if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	}
	lf.Sync()
	out, _ := os.ReadFile(logPath)
	fmt.Fprintf(r.log, "pod runner: %s exited %d\n", who, code)
	term := &corev1.ContainerStateTerminated{ExitCode: int32(code), StartedAt: started, FinishedAt: metav1.Now(), Reason: "Completed"}
	phase := corev1.PodSucceeded
	if code != 0 {
		phase, term.Reason = corev1.PodFailed, "Error"
		if c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
			term.Message = tail(string(out), 80, 2048)
		}
	}
	if err := r.setStatus(ctx, p, func(s *corev1.PodStatus) {
		s.Phase = phase
		for i := range s.Conditions {
			if s.Conditions[i].Type == corev1.PodReady {
				s.Conditions[i].Status = corev1.ConditionFalse
			}
		}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, Started: ptr(false),
			State: corev1.ContainerState{Terminated: term}}}
	}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(r.log, "pod runner: %s: %v\n", who, err)
	}
}

func ptr[T any](v T) *T { return &v }

// tail is the kubelet's FallbackToLogsOnError message: the last lines of
// the log, at most max bytes.
func tail(s string, lines, max int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	s = strings.Join(ls, "\n")
	if len(s) > max {
		s = s[len(s)-max:]
	}
	return s
}

// setStatus updates the pod's status (the status subresource), retrying
// on conflict.
func (r *podRunner) setStatus(ctx context.Context, p *corev1.Pod, edit func(*corev1.PodStatus)) error {
	path := "/api/v1/namespaces/" + r.namespace + "/pods/" + p.Name
	for attempt := 0; ; attempt++ {
		var cur corev1.Pod
		if err := r.api.do(ctx, "GET", path, nil, &cur); err != nil {
			return err
		}
		if cur.UID != p.UID {
			return fmt.Errorf("pod %s replaced", p.Name)
		}
		edit(&cur.Status)
		err := r.api.do(ctx, "PUT", path+"/status", &cur, nil)
		if err == nil || !isCode(err, 409) || attempt > 20 {
			return err
		}
	}
}

// environment is the container's environment as the kubelet builds it:
// in order, each value with $(VAR) of the earlier ones expanded.
func (r *podRunner) environment(ctx context.Context, p *corev1.Pod, c corev1.Container) (map[string]string, error) {
	env := map[string]string{}
	secrets := map[string]*corev1.Secret{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expand(e.Value, env)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s, ok := secrets[ref.Name]
			if !ok {
				s = &corev1.Secret{}
				if err := r.api.do(ctx, "GET", "/api/v1/namespaces/"+r.namespace+"/secrets/"+ref.Name, nil, s); err != nil {
					if ref.Optional != nil && *ref.Optional && isCode(err, 404) {
						continue
					}
					return nil, fmt.Errorf("secret %q not found", ref.Name)
				}
				secrets[ref.Name] = s
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, r.namespace, ref.Name)
			}
			env[e.Name] = string(v)
		case e.ValueFrom.FieldRef != nil:
			v, err := fieldValue(p, e.ValueFrom.FieldRef.FieldPath)
			if err != nil {
				return nil, err
			}
			env[e.Name] = v
		default:
			return nil, fmt.Errorf("env %s: only value, secretKeyRef and fieldRef are run here", e.Name)
		}
	}
	return env, nil
}

var fieldPath = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)

// fieldValue is a downward-API field of the pod.
func fieldValue(p *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return p.Name, nil
	case "metadata.namespace":
		return p.Namespace, nil
	case "metadata.uid":
		return string(p.UID), nil
	case "spec.nodeName":
		return p.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, nil
	}
	if m := fieldPath.FindStringSubmatch(path); m != nil {
		if m[1] == "labels" {
			return p.Labels[m[2]], nil
		}
		return p.Annotations[m[2]], nil
	}
	return "", fmt.Errorf("fieldRef %s: not run here", path)
}

// expand is the kubelet's $(VAR) expansion: $(NAME) of a defined
// variable is its value, $$ is $, anything else stays as written.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
				name := s[i+2 : i+2+end]
				if v, ok := env[name]; ok {
					b.WriteString(v)
				} else {
					b.WriteString(s[i : i+3+end])
				}
				i += 2 + end
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
