package urls

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func files(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if s, ok := m[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
}

func TestParseSiegeList(t *testing.T) {
	text := `# the site's list
HOST=127.0.0.1:8080
ROOT=http://$(HOST)
$(ROOT)/index.html
/about  # relative to the first URL
${ROOT}/search?q=a#top POST q=a b&x=1
/upload PUT <data/body.json
example.org/x head
`
	reqs, err := Parse("lists/urls.txt", text, Options{ReadFile: files(map[string]string{"lists/data/body.json": `{"a":1}`})})
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
	if reqs[1].Line != 5 || reqs[1].File != "lists/urls.txt" {
		t.Errorf("request 1 at %s:%d, want lists/urls.txt:5", reqs[1].File, reqs[1].Line)
	}
	if k := reqs[2].Key(); k != "POST http://127.0.0.1:8080/search?q=a#top" {
		t.Errorf("key %q", k)
	}
}

func TestParseEnvironment(t *testing.T) {
	reqs, err := Parse("u", "http://$(H)/\n", Options{Getenv: func(n string) string {
		if n == "H" {
			return "h:1"
		}
		return ""
	}})
	if err != nil || len(reqs) != 1 || reqs[0].URL.Host != "h:1" {
		t.Fatalf("got %+v, %v", reqs, err)
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ text, line, msg string }{
		{"/relative\n", "u.txt:1:", "relative"},
		{"http://a/\n\nhttp://a/ FETCH\n", "u.txt:3:", "not a method"},
		{"http://$(NOPE)/\n", "u.txt:1:", "undefined variable"},
		{"X=1\nhttp://a/$(X\n", "u.txt:2:", "unclosed"},
		{"http://a/ POST <missing\n", "u.txt:1:", "body file"},
		{"http://a/ POST <\n", "u.txt:1:", "file name"},
		{"ftp://a/\n", "u.txt:1:", "scheme"},
		{"http:///x\n", "u.txt:1:", "no host"},
	} {
		_, err := Parse("u.txt", c.text, Options{ReadFile: files(nil)})
		var pe *Error
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.line) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want %s ... %s", c.text, err, c.line, c.msg)
		}
	}
}

func TestParseNoBodyFiles(t *testing.T) {
	if _, err := Parse("u", "http://a/ POST </etc/passwd\n", Options{}); err == nil {
		t.Fatal("a body file was read without ReadFile")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"http://a/\n/b\n",
		"V=x\n$(V)/p POST a=b\n",
		"http://h/ PUT <f.json\n# c\n",
		"${A}\n",
		"http://a/#frag # comment\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		reqs, err := Parse("f.txt", text, Options{ReadFile: files(map[string]string{"f.json": "{}"})})
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, r := range reqs {
			if r.URL == nil || r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "https") || !methods[r.Method] {
				t.Fatalf("bad request %+v from %q", r, text)
			}
		}
	})
}
