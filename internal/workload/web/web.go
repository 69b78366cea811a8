// Package web is the `http` workload: siege's and ab's URL-list load
// (--urls in siege's urls.txt format, --url), with dbarena's measurement.
// One event is one request; Event.Type is the request's key (its URL,
// after the method when not GET), so per_type holds per-URL figures.
// Responses of 400 and above, timeouts, refused and reset connections are
// failures counted by cause (Classify); siege's own figures are kept
// beside the runner's (stats.go).
package web

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/secret"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/web/urls"
)

// Workload is `dbarena run http`.
type Workload struct {
	urlsFile  string
	urlFlags  []string
	reps      int
	delay     seconds
	random    bool
	keepAlive string
	timeout   seconds
	headers   []string
	follow    bool
	defines   []string // --define NAME=VALUE
	envVars   []string // --env-var NAME
	bodyDir   string   // --body-dir

	// Set by Validate.
	reqs   []urls.Request
	header http.Header
	tmpl   []*http.Request // by reqs' index: shared by every worker, read-only
	keys   []string        // by reqs' index: the per-URL key (urls.Request.Key)

	// Set by Shard: this run is shard shard of shards.
	shard, shards int
	// threads is the number of workers (SetThreads).
	threads int

	stats statsSet
}

var (
	_ workload.Workload        = (*Workload)(nil)
	_ workload.Detached        = (*Workload)(nil)
	_ workload.Demander        = (*Workload)(nil)
	_ workload.Reporter        = (*Workload)(nil)
	_ workload.MeasureBeginner = (*Workload)(nil)
	_ workload.Sharder         = (*Workload)(nil)
	_ workload.EventLimiter    = (*Workload)(nil)
)

// New returns the workload with siege's defaults (30 s timeout, keep-alive).
func New() workload.Workload {
	return &Workload{keepAlive: "on", timeout: seconds(30 * time.Second), shards: 1}
}

// Name implements workload.Workload.
func (wl *Workload) Name() string { return "http" }

// Description implements workload.Workload.
func (wl *Workload) Description() string {
	return "HTTP URL lists as siege (--urls in urls.txt format) and ab (--url); --db-target names the database behind the application"
}

// Flags implements workload.Workload.
func (wl *Workload) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&wl.urlsFile, "urls", "", "FILE of URLs in siege's urls.txt format (siege -f)")
	fs.StringArrayVar(&wl.urlFlags, "url", nil, "a URL to request (repeatable, ab-style); with --urls, added after the file's")
	fs.IntVar(&wl.reps, "reps", 0, "requests per worker (siege -r; with --threads as -c, threads x reps requests); 0 = until --time/--events")
	fs.Var(&wl.delay, "delay", "random think time of 0..D before each request (siege -d), left out of the latency; 0 = none (siege -b)")
	fs.BoolVar(&wl.random, "random", false, "pick each request at random from the list (siege -i); default in order")
	fs.StringVar(&wl.keepAlive, "keep-alive", wl.keepAlive, "on: reuse connections (ab -k); off: one connection per request")
	fs.Var(&wl.timeout, "timeout", "connect and response-header timeout of each request (siegerc's timeout; seconds or a duration)")
	fs.StringArrayVar(&wl.headers, "header", nil, "'Name: value' added to every request (repeatable, siege -H)")
	fs.BoolVar(&wl.follow, "follow-redirects", false, "follow redirects (up to 10); default: a 3xx response is the result")
	fs.StringArrayVar(&wl.defines, "define", nil, "NAME=VALUE: a variable of the --urls list, over the list's own NAME= (repeatable)")
	fs.StringArrayVar(&wl.envVars, "env-var", nil, "NAME: let the --urls list read this environment variable as $(NAME) (repeatable); the list reads no other")
	fs.StringVar(&wl.bodyDir, "body-dir", "", "the directory the --urls list's body files (<FILE) must be under; default the list's own directory")
}

// Params implements workload.Workload.
func (wl *Workload) Params() map[string]any {
	p := map[string]any{"keep_alive": wl.keepAlive, "timeout_s": time.Duration(wl.timeout).Seconds(),
		"random": wl.random, "follow_redirects": wl.follow, "requests": len(wl.reqs)}
	if wl.urlsFile != "" {
		p["urls"] = wl.urlsFile
	}
	if len(wl.urlFlags) > 0 {
		us := make([]string, len(wl.urlFlags))
		for i, u := range wl.urlFlags {
			us[i] = maskURL(u)
		}
		p["url"] = us
	}
	if wl.reps > 0 {
		p["reps"] = wl.reps
	}
	if wl.delay > 0 {
		p["delay_s"] = time.Duration(wl.delay).Seconds()
	}
	if len(wl.headers) > 0 {
		hs := make([]string, len(wl.headers))
		for i, h := range wl.headers {
			hs[i] = secret.MaskHeader(h)
		}
		p["header"] = hs
	}
	if len(wl.defines) > 0 {
		// The names only: a value may be a credential.
		var names []string
		for _, d := range wl.defines {
			n, _, _ := strings.Cut(d, "=")
			names = append(names, n)
		}
		p["define"] = names
	}
	if len(wl.envVars) > 0 {
		p["env_var"] = wl.envVars
	}
	if wl.bodyDir != "" {
		p["body_dir"] = wl.bodyDir
	}
	if wl.shards > 1 {
		p["shard"] = fmt.Sprintf("%d/%d", wl.shard, wl.shards)
	}
	return p
}

// Validate implements workload.Workload: it reads the URL list, so that a
// bad line (FILE:LINE) stops the command before the run.
func (wl *Workload) Validate() []error {
	var errs []error
	wl.reqs = nil
	opts, oerrs := wl.listOptions()
	errs = append(errs, oerrs...)
	if wl.urlsFile != "" && len(oerrs) == 0 {
		b, err := os.ReadFile(wl.urlsFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("--urls: %w", err))
		} else if wl.reqs, err = urls.Parse(wl.urlsFile, string(b), opts); err != nil {
			errs = append(errs, err)
		}
	} else if wl.urlsFile == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--define", len(wl.defines) > 0}, {"--env-var", len(wl.envVars) > 0}, {"--body-dir", wl.bodyDir != ""}} {
			if f.set {
				errs = append(errs, fmt.Errorf("%s applies to a --urls list; name one", f.name))
			}
		}
	}
	var base *url.URL
	if len(wl.reqs) > 0 {
		base = wl.reqs[0].URL
	}
	for i, s := range wl.urlFlags {
		u, err := urls.Resolve(strings.TrimSpace(s), base)
		if err != nil {
			errs = append(errs, fmt.Errorf("--url: %s", secret.Mask(err.Error())))
			continue
		}
		if base == nil {
			base = u
		}
		wl.reqs = append(wl.reqs, urls.Request{Method: "GET", URL: u, Line: i + 1})
	}
	if len(wl.reqs) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("name the URLs: --urls FILE or --url URL"))
	}
	if wl.reps < 0 {
		errs = append(errs, fmt.Errorf("--reps must be >= 0, got %d", wl.reps))
	}
	if wl.delay < 0 {
		errs = append(errs, fmt.Errorf("--delay must be >= 0, got %v", time.Duration(wl.delay)))
	}
	if wl.timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout must be > 0, got %v", time.Duration(wl.timeout)))
	}
	if wl.keepAlive != "on" && wl.keepAlive != "off" {
		errs = append(errs, fmt.Errorf("--keep-alive %q: want on or off", wl.keepAlive))
	}
	wl.header = http.Header{}
	for _, h := range wl.headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			errs = append(errs, fmt.Errorf("--header %q: want 'Name: value'", secret.MaskHeader(h)))
			continue
		}
		wl.header.Add(name, strings.TrimSpace(value))
	}
	wl.tmpl, wl.keys = nil, nil
	if len(errs) == 0 {
		wl.tmpl = templates(wl.reqs, wl.header)
		// The environment variables a list may read are taken for
		// secrets: the key names them, not their value.
		var hide []string
		for _, n := range wl.envVars {
			if v, ok := os.LookupEnv(n); ok && len(v) >= 3 {
				// As written, and as a URL escapes it.
				hide = append(hide, v, "$("+n+")", url.PathEscape(v), "$("+n+")", url.QueryEscape(v), "$("+n+")")
			}
		}
		unenv := strings.NewReplacer(hide...)
		for i := range wl.reqs {
			wl.keys = append(wl.keys, unenv.Replace(wl.reqs[i].Key()))
		}
	}
	return errs
}

// Demand implements workload.Demander: the workers open no database
// connection.
func (wl *Workload) Demand(int) workload.Demand { return workload.Demand{} }

// OwnsConns implements workload.Dialer.
func (wl *Workload) OwnsConns(workload.Env) bool { return true }

// DialWorker implements workload.Dialer: a worker with its own HTTP client.
// The database in env, if any, is not used.
func (wl *Workload) DialWorker(_ context.Context, _ workload.Env, id int, seed int64) (workload.Worker, error) {
	return newWorker(wl, id, seed), nil
}

// NewWorker implements workload.Runner; the runner uses DialWorker.
func (wl *Workload) NewWorker(ctx context.Context, env workload.Env, _ *sql.Conn, id int, seed int64) (workload.Worker, error) {
	return wl.DialWorker(ctx, env, id, seed)
}

// Shard implements workload.Sharder. The runner splits the workers (siege's
// users) and --events; each user's requests depend only on its global
// number (worker id x n + i), which seeds its --random order, so the n
// shards together make the requests of one machine's run.
func (wl *Workload) Shard(i, n int) error {
	if n < 1 || i < 0 || i >= n {
		return fmt.Errorf("shard %d of %d: want 0 <= shard < n", i, n)
	}
	wl.shard, wl.shards = i, n
	return nil
}

var _ workload.ThreadSetter = (*Workload)(nil)

// SetThreads tells the workload how many workers the run has.
func (wl *Workload) SetThreads(n int) { wl.threads = n }

// EventLimit implements workload.EventLimiter: with --reps, the run is at
// most threads x reps successful requests, so that it is not cut by the
// default --time; the workers stop on their own after their reps.
func (wl *Workload) EventLimit() int64 {
	if wl.reps <= 0 || wl.threads <= 0 {
		return 0
	}
	return int64(wl.reps) * int64(wl.threads)
}

// user is the global number of worker id, across shards.
func (wl *Workload) user(id int) int { return id*max(wl.shards, 1) + wl.shard }

// seconds is a duration flag that also takes plain seconds ("1.5"), as
// siege's -d and the siegerc timeout.
type seconds time.Duration

func (s *seconds) String() string { return time.Duration(*s).String() }
func (s *seconds) Type() string   { return "duration" }
func (s *seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		*s = seconds(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want seconds (1.5) or a duration (1500ms), got %q", v)
	}
	*s = seconds(d)
	return nil
}

var _ workload.Originer = (*Workload)(nil)

// Origin is the first URL's scheme and host: what a run without a
// database is stored against.
func (wl *Workload) Origin() string {
	if len(wl.reqs) == 0 {
		return ""
	}
	u := wl.reqs[0].URL
	return u.Scheme + "://" + u.Host
}

// listOptions are the --urls list's variables and body files, from
// --define, --env-var and --body-dir. The list reads the environment only
// for the names --env-var gives.
func (wl *Workload) listOptions() (urls.Options, []error) {
	var errs []error
	o := urls.Options{BodyDir: wl.bodyDir}
	for _, d := range wl.defines {
		n, v, ok := strings.Cut(d, "=")
		if !ok || !urls.ValidName(n) {
			errs = append(errs, fmt.Errorf("--define %q: want NAME=VALUE (NAME of letters, digits and _)", n))
			continue
		}
		if o.Define == nil {
			o.Define = map[string]string{}
		}
		o.Define[n] = v
	}
	allowed := map[string]bool{}
	for _, n := range wl.envVars {
		if !urls.ValidName(n) {
			errs = append(errs, fmt.Errorf("--env-var %q: want a variable name (letters, digits and _)", n))
			continue
		}
		allowed[n] = true
	}
	if len(allowed) > 0 {
		o.Env = func(n string) (string, bool) {
			if !allowed[n] {
				return "", false
			}
			return os.LookupEnv(n)
		}
	}
	if wl.bodyDir != "" {
		if st, err := os.Stat(wl.bodyDir); err != nil {
			errs = append(errs, fmt.Errorf("--body-dir: %w", err))
		} else if !st.IsDir() {
			errs = append(errs, fmt.Errorf("--body-dir %s: not a directory", wl.bodyDir))
		}
	}
	return o, errs
}

// maskURL is a --url flag as it is printed and stored: its credentials
// masked (urls.Redacted), or secret.Mask's guess if it does not parse.
func maskURL(s string) string {
	if u, err := urls.Resolve(strings.TrimSpace(s), nil); err == nil {
		return urls.Redacted(u)
	}
	return secret.Mask(s)
}
