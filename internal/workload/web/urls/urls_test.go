package urls

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (path -> contents) under a new temporary directory and
// returns it.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseSiegeList(t *testing.T) {
	dir := tree(t, map[string]string{"lists/data/body.json": `{"a":1}`})
	text := `# the site's list
HOST=127.0.0.1:8080
ROOT=http://$(HOST)
$(ROOT)/index.html
/about  # relative to the first URL
${ROOT}/search?q=a#top POST q=a b&x=1
/upload PUT <data/body.json
example.org/x head
`
	list := filepath.Join(dir, "lists/urls.txt")
	reqs, err := Parse(list, text, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ method, url, body, ctype string }{
		{"GET", "http://127.0.0.1:8080/index.html", "", ""},
		{"GET", "http://127.0.0.1:8080/about", "", ""},
		{"POST", "http://127.0.0.1:8080/search?q=a#top", "q=a b&x=1", "application/x-www-form-urlencoded"},
		{"PUT", "http://127.0.0.1:8080/upload", `{"a":1}`, "application/json"},
		{"HEAD", "http://example.org/x", "", ""},
	}
	if len(reqs) != len(want) {
		t.Fatalf("got %d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.method || r.URL.String() != w.url || string(r.Body) != w.body || r.ContentType != w.ctype {
			t.Errorf("request %d: %s %s %q %q, want %+v", i, r.Method, r.URL, r.Body, r.ContentType, w)
		}
	}
	if reqs[1].Line != 5 || reqs[1].File != list {
		t.Errorf("request 1 at %s:%d, want %s:5", reqs[1].File, reqs[1].Line, list)
	}
	if k := reqs[2].Key(); k != "POST http://127.0.0.1:8080/search?q=a#top" {
		t.Errorf("key %q", k)
	}
}

// TestParseEnvironmentOnlyWhenAllowed is issue 33's reproducer: a list's
// $(DBARENA_PASSWORD) or ${PGPASSWORD} is not taken from dbarena's
// environment; it is an undefined variable at its line. A name the caller
// allows (--env-var) is.
func TestParseEnvironmentOnlyWhenAllowed(t *testing.T) {
	t.Setenv("DBARENA_PASSWORD", "s3cret-dbarena")
	t.Setenv("PGPASSWORD", "s3cret-pg")
	for _, text := range []string{
		"http://127.0.0.1/\n/login?pw=$(DBARENA_PASSWORD)\n",
		"# c\nhttp://127.0.0.1/${PGPASSWORD}\n",
		"X=$(PGPASSWORD)\nhttp://127.0.0.1/$(X)\n",
		"http://127.0.0.1/ POST pw=${DBARENA_PASSWORD}\n",
	} {
		reqs, err := Parse("u.txt", text, Options{})
		if err == nil {
			t.Errorf("%q: parsed as %+v", text, reqs)
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Line != 2 && pe.Line != 1 || !strings.Contains(err.Error(), "undefined variable") ||
			!strings.Contains(err.Error(), "--define") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error %v", text, err)
		}
	}
	// Allowed by name: that one only.
	env := func(n string) (string, bool) {
		if n == "H" {
			return "h:1", true
		}
		return "", false
	}
	reqs, err := Parse("u", "http://$(H)/\n", Options{Env: env})
	if err != nil || len(reqs) != 1 || reqs[0].URL.Host != "h:1" {
		t.Fatalf("got %+v, %v", reqs, err)
	}
	if _, err := Parse("u", "http://$(H)/$(PGPASSWORD)\n", Options{Env: env}); err == nil || !strings.Contains(err.Error(), `"PGPASSWORD"`) {
		t.Errorf("PGPASSWORD with only H allowed: %v", err)
	}
}

// TestParseDefine: --define values are variables, and win over the list's
// own definitions.
func TestParseDefine(t *testing.T) {
	reqs, err := Parse("u", "HOST=list:1\nhttp://$(HOST)/$(P)\n", Options{Define: map[string]string{"HOST": "cli:2", "P": "x"}})
	if err != nil || len(reqs) != 1 || reqs[0].URL.String() != "http://cli:2/x" {
		t.Fatalf("got %+v, %v", reqs, err)
	}
}

// TestParseBodyFilesConfined is issue 33's reproducer: a body file outside
// the list's directory (absolute, through "..", or through a symbolic
// link) is refused at its line and never read; files under the directory,
// or under --body-dir, are read.
func TestParseBodyFilesConfined(t *testing.T) {
	dir := tree(t, map[string]string{
		"outside.txt":      "TOP-SECRET",
		"list/ok.json":     `{"ok":1}`,
		"list/sub/b.txt":   "b",
		"other/x.json":     "x",
		"list/sub/.keep":   "",
		"other/deep/y.txt": "y",
	})
	list := filepath.Join(dir, "list", "urls.txt")
	outside := filepath.Join(dir, "outside.txt")
	if err := os.Symlink(outside, filepath.Join(dir, "list", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../outside.txt", filepath.Join(dir, "list", "sub", "rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "list", "ok.json"), filepath.Join(dir, "list", "inlink")); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"http://a/ POST </etc/shadow",
		"http://a/ PUT <../../../../etc/shadow",
		"http://a/ POST <../outside.txt",
		"http://a/ POST <" + outside,
		"http://a/ POST <sub/../../outside.txt",
		"http://a/ POST <link",
		"http://a/ POST <sub/rel",
		"http://a/ POST </dev/zero",
	} {
		text := "# hostile\n" + line + "\n"
		reqs, err := Parse(list, text, Options{})
		var pe *Error
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), list+":2: body file") ||
			!strings.Contains(err.Error(), "is outside") || !strings.Contains(err.Error(), "--body-dir") {
			t.Errorf("%q: error %v", line, err)
		}
		for _, r := range reqs {
			if strings.Contains(string(r.Body), "TOP-SECRET") {
				t.Errorf("%q: the outside file was read", line)
			}
		}
	}
	for line, body := range map[string]string{
		"http://a/ POST <ok.json":                                 `{"ok":1}`,
		"http://a/ POST <sub/b.txt":                               "b",
		"http://a/ POST <sub/../ok.json":                          `{"ok":1}`,
		"http://a/ POST <inlink":                                  `{"ok":1}`,
		"http://a/ POST <" + filepath.Join(dir, "list/sub/b.txt"): "b",
	} {
		reqs, err := Parse(list, line+"\n", Options{})
		if err != nil || len(reqs) != 1 || string(reqs[0].Body) != body {
			t.Errorf("%q: %+v, %v; want body %q", line, reqs, err, body)
		}
	}
	if _, err := Parse(list, "http://a/ POST <sub\n", Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as body: %v", err)
	}
	// --body-dir: relative paths still start at the list's directory, and
	// only files under DIR are read.
	o := Options{BodyDir: filepath.Join(dir, "other")}
	if reqs, err := Parse(list, "http://a/ POST <../other/deep/y.txt\n", o); err != nil || string(reqs[0].Body) != "y" {
		t.Errorf("--body-dir: %+v, %v", reqs, err)
	}
	if _, err := Parse(list, "http://a/ POST <ok.json\n", o); err == nil || !strings.Contains(err.Error(), "is outside") {
		t.Errorf("--body-dir other, list's own file: %v", err)
	}
	if _, err := Parse(list, "http://a/ POST <ok.json\n", Options{NoBodyFiles: true}); err == nil {
		t.Error("a body file was read with NoBodyFiles")
	}
}

func TestRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pa55@h/x":                      "http://user:***@h/x",
		"http://tok3n@h/x":                          "http://***@h/x",
		"http://h/x?a=1&api_key=k3y&b=2":            "http://h/x?a=1&api_key=***&b=2",
		"http://h/x?access_token=t&password=p&q=ok": "http://h/x?access_token=***&password=***&q=ok",
		"http://h/x?q=a":                            "http://h/x?q=a",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Redacted(u); got != want {
			t.Errorf("Redacted(%s) = %s, want %s", in, got, want)
		}
	}
	for _, line := range []string{"http://u:pw-s3cret@h:port/\n", "ftp://u:pw-s3cret@h/\n", "http://u:pw-s3cret@/x\n"} {
		if _, err := Parse("u", line, Options{}); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error %v", line, err)
		}
	}
	reqs, err := Parse("u", "http://u:pa55@h/ POST a=b\n", Options{})
	if err != nil || reqs[0].Key() != "POST http://u:***@h/" || reqs[0].URL.String() != "http://u:pa55@h/" {
		t.Errorf("key %q of %v, %v", reqs[0].Key(), reqs[0].URL, err)
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "u.txt")
	for _, c := range []struct{ text, line, msg string }{
		{"/relative\n", ":1:", "relative"},
		{"http://a/\n\nhttp://a/ FETCH\n", ":3:", "not a method"},
		{"http://$(NOPE)/\n", ":1:", "undefined variable"},
		{"X=1\nhttp://a/$(X\n", ":2:", "unclosed"},
		{"http://a/ POST <missing\n", ":1:", "body file"},
		{"http://a/ POST <\n", ":1:", "file name"},
		{"ftp://a/\n", ":1:", "scheme"},
		{"http:///x\n", ":1:", "no host"},
	} {
		_, err := Parse(list, c.text, Options{})
		var pe *Error
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), list+c.line) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want %s ... %s", c.text, err, c.line, c.msg)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"http://a/\n/b\n",
		"V=x\n$(V)/p POST a=b\n",
		"http://h/ PUT <f.json\n# c\n",
		"${A}\n",
		"http://a/#frag # comment\r\n",
		"http://a/ POST </etc/shadow\n",
		"http://a/ PUT <../../../../etc/shadow\n",
		"http://a/ PUT <../secret.txt\n",
		"http://a/$(DBARENA_PASSWORD)\n",
		"http://a/${PGPASSWORD}\n",
	} {
		f.Add(s)
	}
	// The list's directory holds f.json; its parent a secret no list may
	// read, and the environment one no list may expand.
	top := tree(f, map[string]string{"list/f.json": "{}", "secret.txt": "FUZZ-SECRET"})
	list := filepath.Join(top, "list", "f.txt")
	f.Setenv("DBARENA_PASSWORD", "FUZZ-ENV-SECRET")
	f.Setenv("PGPASSWORD", "FUZZ-ENV-SECRET")
	f.Fuzz(func(t *testing.T, text string) {
		reqs, err := Parse(list, text, Options{})
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			if strings.Contains(err.Error(), "SECRET") && !strings.Contains(text, "SECRET") {
				t.Fatalf("error reveals a secret: %v", err)
			}
			return
		}
		for _, r := range reqs {
			if r.URL == nil || r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "https") || !methods[r.Method] {
				t.Fatalf("bad request %+v from %q", r, text)
			}
			if strings.Contains(string(r.Body), "FUZZ-SECRET") || strings.Contains(r.URL.String(), "FUZZ-ENV-SECRET") ||
				strings.Contains(string(r.Body), "FUZZ-ENV-SECRET") {
				t.Fatalf("%q reached a secret: %+v", text, r)
			}
		}
	})
}
