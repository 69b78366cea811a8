// Package urls reads siege's urls.txt format: one request a line, as
//
//	URL
//	URL METHOD
//	URL POST a=b&c=d
//	URL PUT </path/to/file
//
// with NAME=value lines that define variables, $(NAME) or ${NAME}
// references (to earlier definitions, then the environment), and comments
// from a '#' at the start of a line or after a blank. A URL without a
// scheme gets http://; one that starts with '/' is resolved against the
// first URL's scheme and host, as siege does.
package urls

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Request is one line of a URL list.
type Request struct {
	// Method is GET unless the line names another.
	Method string
	// URL is absolute (scheme and host).
	URL *url.URL
	// Body is the POST/PUT data: the text after the method, or the
	// contents of the file after '<'.
	Body []byte
	// ContentType is the body's type: form-urlencoded for inline data,
	// guessed from the file's extension otherwise; "" without a body.
	ContentType string
	// File and Line locate the request in its list ("" and the position
	// of a --url flag for those).
	File string
	Line int
}

// Key names the request in per-URL figures: the URL, after the method
// when it is not GET.
func (r *Request) Key() string {
	if r.Method == "GET" {
		return r.URL.String()
	}
	return r.Method + " " + r.URL.String()
}

// Error is a problem at one line of a list.
type Error struct {
	File string
	Line int
	Msg  string
}

// Error implements error as FILE:LINE: MSG.
func (e *Error) Error() string {
	if e.File == "" {
		return e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Options tell Parse where variables and body files come from.
type Options struct {
	// Getenv looks up variables not defined in the list; nil: none.
	Getenv func(string) string
	// ReadFile reads a body file ("</path"); a relative path is taken
	// from the list's directory. Nil refuses body files.
	ReadFile func(path string) ([]byte, error)
	// Base resolves relative URLs when the list itself has no absolute
	// one before them (the first --url, for example); may be nil.
	Base *url.URL
}

// maxLine caps one line, so that a stray binary file fails early.
const maxLine = 1 << 20

// methods siege accepts after a URL.
var methods = map[string]bool{"GET": true, "POST": true, "PUT": true, "DELETE": true,
	"HEAD": true, "PATCH": true, "OPTIONS": true}

// Parse reads the list named name (for errors and body files) from text.
// It returns every request in order, or the first error.
func Parse(name, text string, o Options) ([]Request, error) {
	vars := map[string]string{}
	base := o.Base
	var out []Request
	for i, raw := range strings.Split(text, "\n") {
		ln := i + 1
		fail := func(format string, args ...any) error {
			return &Error{File: name, Line: ln, Msg: fmt.Sprintf(format, args...)}
		}
		if len(raw) > maxLine {
			return nil, fail("line longer than %d bytes", maxLine)
		}
		line := strings.TrimSpace(stripComment(strings.TrimSuffix(raw, "\r")))
		if line == "" {
			continue
		}
		if n, v, ok := definition(line); ok {
			val, err := expand(v, vars, o.Getenv)
			if err != nil {
				return nil, fail("%v", err)
			}
			vars[n] = val
			continue
		}
		line, err := expand(line, vars, o.Getenv)
		if err != nil {
			return nil, fail("%v", err)
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue // a line of variables that expand to nothing
		}
		req := Request{Method: "GET", File: name, Line: ln}
		u, err := Resolve(fields[0], base)
		if err != nil {
			return nil, fail("%v", err)
		}
		req.URL = u
		if base == nil {
			base = u
		}
		if len(fields) > 1 {
			m := strings.ToUpper(fields[1])
			if !methods[m] {
				return nil, fail("%q is not a method (want GET, POST, PUT, DELETE, HEAD, PATCH or OPTIONS)", fields[1])
			}
			req.Method = m
			// The data is the rest of the line after the method, as written.
			rest := strings.TrimSpace(line[strings.Index(line, fields[0])+len(fields[0]):])
			data := strings.TrimSpace(rest[len(fields[1]):])
			switch {
			case strings.HasPrefix(data, "<"):
				path := strings.TrimSpace(data[1:])
				if path == "" {
					return nil, fail("'<' needs a file name")
				}
				if o.ReadFile == nil {
					return nil, fail("body files are not allowed here")
				}
				if !filepath.IsAbs(path) && name != "" {
					path = filepath.Join(filepath.Dir(name), path)
				}
				b, err := o.ReadFile(path)
				if err != nil {
					return nil, fail("body file: %v", err)
				}
				req.Body, req.ContentType = b, contentType(path)
			case data != "":
				req.Body, req.ContentType = []byte(data), "application/x-www-form-urlencoded"
			}
		}
		out = append(out, req)
	}
	return out, nil
}

// stripComment cuts a '#' comment: at the start of the line or after a
// blank, so that a URL's #fragment stays.
func stripComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return s[:i]
		}
	}
	return s
}

// definition splits NAME=value; NAME is letters, digits and '_', not
// starting with a digit, and the line has no blank before '='.
func definition(line string) (name, value string, ok bool) {
	i := strings.IndexByte(line, '=')
	if i <= 0 || strings.Contains(line[:i], "://") {
		return "", "", false
	}
	for j := 0; j < i; j++ {
		c := line[j]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > 0 && c >= '0' && c <= '9') {
			return "", "", false
		}
	}
	return line[:i], strings.TrimSpace(line[i+1:]), true
}

// expand replaces $(NAME) and ${NAME}. An undefined name is an error.
func expand(s string, vars map[string]string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) || (s[i+1] != '(' && s[i+1] != '{') {
			b.WriteByte(s[i])
			continue
		}
		closer := byte(')')
		if s[i+1] == '{' {
			closer = '}'
		}
		j := strings.IndexByte(s[i+2:], closer)
		if j < 0 {
			return "", fmt.Errorf("unclosed $%c", s[i+1])
		}
		name := s[i+2 : i+2+j]
		v, ok := vars[name]
		if !ok && getenv != nil {
			v = getenv(name)
			ok = v != ""
		}
		if !ok {
			return "", fmt.Errorf("undefined variable %q", name)
		}
		b.WriteString(v)
		i += 2 + j
	}
	return b.String(), nil
}

// Resolve makes s an absolute http(s) URL: "/path" against base's scheme
// and host, "host/path" with http://.
func Resolve(s string, base *url.URL) (*url.URL, error) {
	switch {
	case strings.HasPrefix(s, "/"):
		if base == nil {
			return nil, fmt.Errorf("%q is relative and no absolute URL comes before it", s)
		}
		ref, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("bad URL %q: %v", s, err)
		}
		return base.ResolveReference(ref), nil
	case !strings.Contains(s, "://"):
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("bad URL %q: the scheme must be http or https", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("bad URL %q: no host", s)
	}
	return u, nil
}

// contentType guesses a body file's type from its extension, as siege.
func contentType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return "application/json"
	case ".xml":
		return "text/xml"
	case ".txt":
		return "text/plain"
	case ".html", ".htm":
		return "text/html"
	}
	return "application/x-www-form-urlencoded"
}
