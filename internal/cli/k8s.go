package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/k8s"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/secret"
	"github.com/dbarena/dbarena/internal/server/credentials"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// The usage of k8s render and k8s run, and of k8s.
const (
	k8sRenderUsage = `render WORKLOAD [run flags] --shards N --image IMAGE [-o job.yaml]
      write the Indexed Job that runs the N shards of one run, one pod each
`
	k8sRunUsage = `run WORKLOAD [run flags] --shards N --image IMAGE --results DSN [--kubeconfig FILE] [--context NAME]
      render it, create the Secret (if missing) and the Job through the API
      (your kubeconfig), follow the run in the results store and the Job's
      status until every shard ended; print the merged run. The results
      store must be one the pods reach (not a file, not a loopback address,
      unless --results-reachable)
`
	k8sUsage = "dbarena k8s COMMAND\n\n  " + k8sRenderUsage + "  " + k8sRunUsage
)

// k8sOptions are the flags of k8s render and k8s run beside the run's.
type k8sOptions struct {
	spec       k8s.Spec
	out        string
	follow     time.Duration
	kubeconfig string
	context    string
	// reachable is --results-reachable: the pods reach the --results
	// store even though it is a file or a loopback address.
	reachable bool
	// secrets are the credentials taken out of the pods' arguments.
	secrets k8s.PodSecrets
}

// k8sFlags are the flags k8s adds, with whether they take a value; they,
// --results, --shards, --run-id and -o are left out of the pods' command.
var k8sFlags = map[string]bool{"image": true, "pull-policy": true, "secret": true, "results-key": true,
	"password-key": true, "namespace": true, "cpu": true, "memory": true, "ttl": true, "backoff-limit": true,
	"output": true, "follow-timeout": true, "kubeconfig": true, "context": true, "results": true, "shards": true,
	"run-id": true, "password-file": true, "mysql-option-file": true, "results-reachable": false}

func (o *k8sOptions) flags(fs *pflag.FlagSet) {
	s := &o.spec
	fs.StringVar(&s.Image, "image", "", "the dbarena image (see Dockerfile)")
	fs.StringVar(&s.PullPolicy, "pull-policy", "", "image pull policy: Always, IfNotPresent or Never (default: Kubernetes')")
	fs.StringVar(&s.Secret, "secret", "dbarena", "the Secret holding the results store DSN and the target's password")
	fs.StringVar(&s.ResultsKey, "results-key", "results", "the Secret's key holding the results store DSN (mysql://... or postgres://...)")
	fs.StringVar(&s.PasswordKey, "password-key", "password", "the Secret's key holding the target's password (optional in the Secret; empty: none)")
	fs.StringVar(&s.Namespace, "namespace", "", "the Job's namespace (default: the kubeconfig context's, else default)")
	fs.StringVar(&s.CPU, "cpu", "1", "CPU request of each shard's pod")
	fs.StringVar(&s.Memory, "memory", "512Mi", "memory request of each shard's pod")
	fs.Int32Var(&s.TTL, "ttl", 86400, "seconds the finished Job is kept (ttlSecondsAfterFinished)")
	fs.Int32Var(&s.BackoffLimit, "backoff-limit", 2, "pod failures the Job tolerates (a shard that fails after the common start cannot rejoin)")
	fs.StringVarP(&o.out, "output", "o", "-", "write the Job to this file (- for standard output)")
	durationFlag(fs, &o.follow, "follow-timeout", 2*time.Hour, "k8s run: how long to follow the run before giving up")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "k8s run: the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the pod's service account in a cluster)")
	fs.StringVar(&o.context, "context", "", "k8s run: the kubeconfig context (default: its current context)")
	fs.BoolVar(&o.reachable, "results-reachable", false, "k8s run: the pods reach --results although it is a local file or a loopback address (pods on this machine)")
}

func (a *App) k8s(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("name a k8s command: render, run\n%s", k8sUsage)
	}
	if isHelp(args[0]) || args[0] == "help" {
		return a.k8sHelp(args[1:])
	}
	if (args[0] == "render" || args[0] == "run") && len(args) > 1 && isHelp(args[1]) {
		return a.k8sHelp(args[:1])
	}
	switch args[0] {
	case "render":
		return a.k8sRender(ctx, args[1:], false)
	case "run":
		return a.k8sRender(ctx, args[1:], true)
	}
	return usagef("unknown k8s command %q (want render, run)", args[0])
}

// k8sRender renders the Job; with apply, it also applies it and follows
// the run.
func (a *App) k8sRender(ctx context.Context, args []string, apply bool) error {
	cmd := "k8s render"
	if apply {
		cmd = "k8s run"
	}
	w, rest, err := a.pickWorkload(cmd, args)
	if err != nil {
		return err
	}
	if _, ok := w.(workload.Runner); !ok {
		return missing(w, "run")
	}
	var (
		o  runOptions
		ko k8sOptions
	)
	fs := newFlagSet(cmd + " " + w.Name())
	o.flags(fs)
	ko.flags(fs)
	w.Flags(fs)
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	errs := append(o.validate(fs), w.Validate()...)
	switch {
	case o.shard.shards < 1:
		errs = append(errs, errors.New("--shards N: how many pods (shards) to run"))
	case o.shard.spec != "" || o.shard.local:
		errs = append(errs, errors.New("--shard and --local are for dbarena run; k8s takes --shards N"))
	case o.jsonPath != "":
		errs = append(errs, errors.New("--json: a pod's file is lost with it; read the run with `dbarena results show RUN-ID`"))
	case o.rounds > 1:
		errs = append(errs, errors.New("--rounds: a sharded run has one round"))
	}
	if o.results != "" && !apply {
		errs = append(errs, fmt.Errorf("--results: the pods read the results store from the Secret's %q key", ko.spec.ResultsKey))
	}
	if apply && o.results == "" {
		errs = append(errs, errors.New("--results DSN: k8s run follows the run in the shared results store the pods write to"))
	}
	if apply && o.results != "" && !ko.reachable {
		if why := k8s.UnreachableStore(o.results); why != "" {
			errs = append(errs, fmt.Errorf("--results %s: %s, which the pods cannot reach: give the DSN of a MySQL-family or PostgreSQL server the pods reach (--results-reachable if they do)",
				secret.MaskURL(o.results), why))
		}
	}
	if !apply && ko.reachable {
		errs = append(errs, errors.New("--results-reachable is for k8s run"))
	}
	if !apply && (o.cred.passwordFile != "" || o.cred.optionFile != "") {
		errs = append(errs, fmt.Errorf("--password-file, --mysql-option-file: put the password in the Secret's %q key (k8s run does it)", ko.spec.PasswordKey))
	}
	if k8s.HasPassword(o.target) {
		errs = append(errs, fmt.Errorf("--target: put the password in the Secret's %q key, not in the Job", ko.spec.PasswordKey))
	}
	if _, detached := w.(workload.Detached); !detached && (o.target == "" || strings.HasPrefix(o.target, "sandbox:")) {
		what := "--target " + o.target
		if o.target == "" {
			what = "no --target (the default sandbox)"
		}
		errs = append(errs, fmt.Errorf("%s: a pod cannot reach a sandbox of this machine; give the server's DSN, --target mysql://USER@HOST:PORT/DB or postgres://...", what))
	}
	if o.shard.shards >= 1 {
		if _, err := shard.Config(o.cfg, 0, o.shard.shards); err != nil {
			errs = append(errs, err)
		}
	}
	if ko.spec.Image == "" {
		errs = append(errs, errors.New("--image: name the dbarena image (see the Dockerfile)"))
	}
	if o.shard.key != "" {
		if err := shard.CheckKey(o.shard.key); err != nil {
			errs = append(errs, err)
		}
	}
	if err := validate(errs, nil); err != nil {
		return err
	}
	if o.shard.key == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		o.shard.key = "k8s-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	}
	ko.spec.RunKey, ko.spec.Shards = o.shard.key, o.shard.shards
	ko.spec.Args = append(append([]string{"run", w.Name()}, k8s.DropFlags(rest, k8sFlags)...),
		"--shards", fmt.Sprint(o.shard.shards), "--run-id", o.shard.key)
	ko.spec.Args, ko.secrets = k8s.SecretArgs(ko.spec.Args)
	ko.spec.SecretArgs = ko.secrets.Args
	job, err := k8s.Job(ko.spec)
	if err != nil {
		return usagef("%w", err)
	}
	if apply {
		return a.k8sApply(ctx, &o, &ko, job)
	}
	b, err := k8s.Marshal(job)
	if err != nil {
		return failed(err)
	}
	if len(ko.secrets.What) > 0 {
		fmt.Fprintf(a.Stderr, "dbarena: credentials are not in the Job: the Secret %s must also hold %s\n",
			ko.spec.Secret, strings.Join(ko.secrets.What, ", "))
	}
	if ko.out == "-" {
		_, err := a.Stdout.Write(b)
		return err
	}
	if err := os.WriteFile(ko.out, b, 0o644); err != nil {
		return usagef("-o %s: %w", ko.out, err)
	}
	fmt.Fprintf(a.Stderr, "Wrote Job %s (%d shards of run %s) to %s\n", job.Name, ko.spec.Shards, o.shard.key, ko.out)
	return nil
}

// k8sApply creates the Secret (unless it exists) and the Job through the
// Kubernetes API, then follows the run in the results store and the Job's
// status until every shard ended, and prints the merged run.
func (a *App) k8sApply(ctx context.Context, o *runOptions, ko *k8sOptions, job *batchv1.Job) error {
	results, err := a.resolveStoreDSN(o.results)
	if err != nil {
		return err
	}
	pw, pwFrom, err := a.k8sPassword(o, ko.spec.PasswordKey)
	if err != nil {
		return err
	}
	st, err := openResolvedStore(ctx, results)
	if err != nil {
		return err
	}
	defer st.Close()
	cl, err := k8s.Connect(k8s.Config{Kubeconfig: ko.kubeconfig, Context: ko.context, Namespace: ko.spec.Namespace, Getenv: a.Getenv})
	if err != nil {
		return usagef("%w (--kubeconfig FILE, $KUBECONFIG or ~/.kube/config; --context NAME)", err)
	}
	ns, name := cl.Namespace, job.Name
	exists, err := cl.JobExists(ctx, name)
	if err != nil {
		return unreachable(fmt.Errorf("%s: %w", cl.Server, err))
	}
	if exists {
		return jobExists(ns, name)
	}
	data := map[string][]byte{ko.spec.ResultsKey: []byte(results)}
	if pw != "" {
		data[ko.spec.PasswordKey] = []byte(pw)
	}
	for k, v := range ko.secrets.Data {
		data[k] = v
	}
	created, err := cl.EnsureSecret(ctx, ko.spec.Secret, data)
	if err != nil {
		return failed(err)
	}
	if created {
		keys := fmt.Sprintf("%q: the results store", ko.spec.ResultsKey)
		if pw != "" {
			keys += fmt.Sprintf(", %q: the target's password from %s", ko.spec.PasswordKey, pwFrom)
		}
		for _, w := range ko.secrets.What {
			keys += ", " + w
		}
		fmt.Fprintf(a.Stderr, "dbarena: created Secret %s/%s (%s)\n", ns, ko.spec.Secret, keys)
	} else {
		fmt.Fprintf(a.Stderr, "dbarena: Secret %s/%s exists: left as it is (the pods read its %q key as the results store)\n",
			ns, ko.spec.Secret, ko.spec.ResultsKey)
		if len(ko.secrets.What) > 0 {
			fmt.Fprintf(a.Stderr, "dbarena: the pods also read from it %s\n", strings.Join(ko.secrets.What, ", "))
		}
	}
	if err := cl.CreateJob(ctx, job); errors.Is(err, k8s.ErrJobExists) {
		return jobExists(ns, name)
	} else if err != nil {
		return failed(err)
	}
	key, n := o.shard.key, o.shard.shards
	fmt.Fprintf(a.Stderr, "dbarena: created Job %s/%s (%d pods) on %s\n", ns, name, n, cl.Server)
	fmt.Fprintf(a.Stderr, "dbarena: following run %s (%d shards) in %s\n", key, n, st.Location())
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	run, err := k8s.Follow{Client: cl, Store: st, Job: name, Key: key, Shards: n, ResultsKey: ko.spec.ResultsKey,
		Timeout: ko.follow, Barrier: o.shard.timeout, Every: followEvery, Log: a.Stderr}.Run(ctx)
	if run != nil {
		a.printK8sRun(run, key, n, st)
	}
	switch {
	case err != nil:
		return failed(err)
	case run.Status != summary.StatusComplete:
		return failed(fmt.Errorf("run %s %s", key, run.Status))
	}
	return nil
}

// printK8sRun prints the merged run and where it is stored.
func (a *App) printK8sRun(run *summary.Run, key string, n int, st *store.Store) {
	a.printSharded(run)
	fmt.Fprintf(a.Stdout, "\nRun %s (%s, %d shards) in %s\n", key, run.Status, n, st.Location())
}

func jobExists(ns, name string) error {
	return failed(fmt.Errorf("Job %s already exists in namespace %s: name the run with another --run-id, or delete the Job (kubectl delete job %s -n %s)",
		name, ns, name, ns))
}

// k8sPassword is the password of a DSN --target for the Secret, found as
// run finds it (--password-file, $DBARENA_PASSWORD, MYSQL_PWD or
// PGPASSWORD, ~/.pgpass or the option file), and where it came from; ""
// when the target is not a DSN or none was found.
func (a *App) k8sPassword(o *runOptions, key string) (pw, from string, err error) {
	bySource := o.cred.passwordFile != "" || o.cred.optionFile != ""
	if o.target == "" || strings.HasPrefix(o.target, "sandbox:") {
		if bySource {
			return "", "", usagef("--password-file and --mysql-option-file apply to a DSN --target")
		}
		return "", "", nil
	}
	if key == "" {
		if bySource {
			return "", "", usagef("--password-file, --mysql-option-file: --password-key is empty, the Secret has no key for the password")
		}
		return "", "", nil
	}
	t, err := target.ParseDSN(o.target)
	if err != nil {
		return "", "", usagef("--target: %w", err)
	}
	from, err = credentials.Resolve(&t, a.credentialSources(o.cred, credentials.DefaultEnv))
	if err != nil {
		return "", "", usagef("%w", err)
	}
	return t.Password, from, nil
}

// openResolvedStore opens a --results location whose password, if any, is
// already filled in (resolveStoreDSN), as openStore does.
func openResolvedStore(ctx context.Context, loc string) (*store.Store, error) {
	return storeOpened(store.Open(ctx, loc))
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" }

// k8sHelp is `dbarena help k8s [render|run [WORKLOAD]]`: the commands; a
// command's own flags; a command's whole flag set for one workload (the
// run flags, k8s's and the workload's), where parseFlags points.
func (a *App) k8sHelp(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(a.Stdout, k8sUsage)
		fmt.Fprint(a.Stdout, "\nRun `dbarena help k8s run` for k8s's own flags, `dbarena help k8s run WORKLOAD` for all of them.\n")
		return nil
	}
	cmd := args[0]
	if cmd != "render" && cmd != "run" {
		return usagef("no help for \"k8s %s\": try `dbarena help k8s`", strings.Join(args, " "))
	}
	if len(args) > 2 {
		return usagef("no help for \"k8s %s\": try `dbarena help k8s %s WORKLOAD`", strings.Join(args, " "), cmd)
	}
	var ko k8sOptions
	kfs := newFlagSet("k8s " + cmd)
	ko.flags(kfs)
	if len(args) == 1 {
		fmt.Fprintf(a.Stdout, "%s\nk8s flags:\n%s\nand the run flags of the workload: `dbarena help k8s %s WORKLOAD` lists them all.\nWorkloads: %s\n",
			k8sCommandUsage(cmd), kfs.FlagUsages(), cmd, strings.Join(a.Registry.Names(), ", "))
		return nil
	}
	w, err := a.Registry.New(args[1])
	if err != nil {
		return usagef("%w", err)
	}
	var o runOptions
	fs := newFlagSet("k8s " + cmd + " " + w.Name())
	o.flags(fs)
	detachedFlags(w, fs, new(string))
	w.Flags(fs)
	fmt.Fprintf(a.Stdout, "%s\n  %s: %s\n\nk8s flags:\n%s\nRun flags (passed to the pods):\n%s",
		strings.Replace(k8sCommandUsage(cmd), "WORKLOAD", w.Name(), 1), w.Name(), w.Description(), kfs.FlagUsages(), fs.FlagUsages())
	return nil
}

// k8sCommandUsage is the usage of k8s render or k8s run.
func k8sCommandUsage(cmd string) string {
	if cmd == "render" {
		return "dbarena k8s " + k8sRenderUsage
	}
	return "dbarena k8s " + k8sRunUsage
}

// followEvery is how often k8s run reads the run's progress.
var followEvery = 5 * time.Second
