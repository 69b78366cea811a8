package cli

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is an HTTP server on 127.0.0.1 that keeps every request it
// gets: method, URL, headers and body.
type recorder struct {
	url  string
	mu   sync.Mutex
	seen []string // one text per request: method, URI, headers, body
}

func startRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b strings.Builder
		b.WriteString(r.Method + " " + r.RequestURI + "\n")
		r.Header.Write(&b)
		b.Write(body)
		rec.mu.Lock()
		rec.seen = append(rec.seen, b.String())
		rec.mu.Unlock()
		io.WriteString(w, "ok")
	})}
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	rec.url = "http://" + l.Addr().String()
	return rec
}

// all returns every request seen so far, as one text.
func (rec *recorder) all() (n int, text string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.seen), strings.Join(rec.seen, "\n--\n")
}

// TestHTTPListConfined is issue 33's reproducer of `run http`: a URL list
// that names a file outside its directory (/etc/shadow, ../.., an
// absolute path, a symbolic link) or a variable of dbarena's environment
// ($(DBARENA_PASSWORD), ${PGPASSWORD}) is refused with FILE:LINE and exit 2
// before any request: the file is never sent, the variable never expanded.
// --define, --env-var and --body-dir allow what the user names.
func TestHTTPListConfined(t *testing.T) {
	srv := startRecorder(t)
	t.Setenv("DBARENA_PASSWORD", "env-s3cret-1")
	t.Setenv("PGPASSWORD", "env-s3cret-2")
	top := t.TempDir()
	outside := filepath.Join(top, "outside.txt")
	dir := filepath.Join(top, "list")
	for p, s := range map[string]string{outside: "OUTSIDE-S3CRET", filepath.Join(dir, "body.json"): `{"in":1}`,
		filepath.Join(top, "bodies", "b.json"): `{"bodydir":1}`} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "urls.txt")
	run := func(lines string, extra ...string) result {
		t.Helper()
		if err := os.WriteFile(list, []byte("# a list from someone\nAPP="+srv.url+"\n"+lines), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"run", "http", "--urls", list, "--threads", "1", "--reps", "3", "--timeout", "5",
			"--results", filepath.Join(t.TempDir(), "results.db")}, extra...)
		return dbarena(t, args...)
	}
	for _, c := range []struct {
		line, want string
		extra      []string
	}{
		{"$(APP)/a POST </etc/shadow", "is outside", nil},
		{"$(APP)/a PUT <../../../../etc/shadow", "is outside", nil},
		{"$(APP)/a POST <../outside.txt", "is outside", nil},
		{"$(APP)/a POST <" + outside, "is outside", nil},
		{"$(APP)/a POST <link.json", "is outside", nil},
		{"$(APP)/a POST <body.json", "is outside", []string{"--body-dir", filepath.Join(top, "bodies")}},
		{"$(APP)/login?pw=$(DBARENA_PASSWORD)", "undefined variable \"DBARENA_PASSWORD\"", nil},
		{"$(APP)/${PGPASSWORD}", "undefined variable \"PGPASSWORD\"", []string{"--env-var", "DBARENA_PASSWORD"}},
		{"$(APP)/a POST pw=$(DBARENA_PASSWORD)", "undefined variable", []string{"--define", "PW=x"}},
	} {
		r := run(c.line+"\n", c.extra...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "dbarena: "+list+":3: ") && !strings.Contains(r.stderr, list+":3: ") ||
			!strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%q %v: exit %d, stderr %q; want 2 and one line %s:3: ...%s", c.line, c.extra, r.code, r.stderr, list, c.want)
		}
		for _, s := range []string{"OUTSIDE-S3CRET", "env-s3cret"} {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("%q: output shows %s", c.line, s)
			}
		}
	}
	if n, _ := srv.all(); n != 0 {
		t.Fatalf("refused lists sent %d requests", n)
	}

	// What the user allows is read and sent.
	r := run("$(APP)/in POST <body.json\n$(APP)/bd PUT <../bodies/b.json\n$(APP)/v/$(V)/$(DBARENA_PASSWORD)\n",
		"--define", "V=defined", "--env-var", "DBARENA_PASSWORD", "--body-dir", top).mustSucceed(t)
	n, got := srv.all()
	for _, s := range []string{`{"in":1}`, `{"bodydir":1}`, "GET /v/defined/env-s3cret-1"} {
		if !strings.Contains(got, s) {
			t.Errorf("the server did not get %q in %d requests:\n%s\nstdout:\n%s", s, n, got, tail(r.stdout, 2000))
		}
	}
	if strings.Contains(got, "OUTSIDE-S3CRET") || strings.Contains(got, "env-s3cret-2") {
		t.Errorf("the server got a secret:\n%s", got)
	}
}

// TestHTTPCredentialsMasked: a URL's user info and password-like query
// parameters, and credential headers (Authorization, Cookie, X-Api-Key),
// are sent to the server but masked in the output, the --json file and
// the results store (per-URL keys, parameters, command line).
func TestHTTPCredentialsMasked(t *testing.T) {
	srv := startRecorder(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "urls.txt")
	host := strings.TrimPrefix(srv.url, "http://")
	text := "http://listuser:listpw-s3cret@" + host + "/a?api_key=key-s3cret&q=1\n/b POST x=1\n"
	if err := os.WriteFile(list, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	js, results := jsonPath(t), filepath.Join(dir, "results.db")
	r := dbarena(t, "run", "http", "--urls", list, "--url", "http://u:urlpw-s3cret@"+host+"/c", "--threads", "1", "--reps", "6",
		"--header", "Authorization: Bearer hdr-s3cret", "--header=Cookie: sid=cookie-s3cret", "--header", "X-Api-Key: apikey-s3cret",
		"--header", "Accept: text/plain", "--json", js, "--results", results).mustSucceed(t)
	_, got := srv.all()
	for _, s := range []string{"Bearer hdr-s3cret", "sid=cookie-s3cret", "apikey-s3cret", "api_key=key-s3cret"} {
		if !strings.Contains(got, s) {
			t.Errorf("the server did not get %q:\n%s", s, got)
		}
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	stored := storedRun(t, results)
	sb, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	raw := readAll(t, results, results+"-wal")
	report := dbarena(t, "report", "--results", results, "--format", "json", "-o", "-", "1").mustSucceed(t)
	for name, s := range map[string]string{"stdout": r.stdout + r.stderr, "--json": string(b), "store": string(sb),
		"store file": raw, "report": report.stdout + report.stderr} {
		if strings.Contains(s, "s3cret") {
			i := strings.Index(s, "s3cret")
			t.Errorf("%s shows a credential: ...%s...", name, s[max(0, i-80):min(len(s), i+20)])
		}
	}
	if !strings.Contains(string(sb), "Authorization: ***") {
		t.Errorf("the stored run lacks the masked header: %s", tail(string(sb), 3000))
	}
	if _, ok := stored.PerType["http://listuser:***@"+host+"/a?api_key=***&q=1"]; !ok {
		var keys []string
		for k := range stored.PerType {
			keys = append(keys, k)
		}
		t.Errorf("per-URL keys %q, want the masked URL", keys)
	}
}

// readAll is the contents of the files that exist among paths.
func readAll(t *testing.T, paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}
