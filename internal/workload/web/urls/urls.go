// Package urls reads siege's urls.txt format: one request a line, as
//
//	URL
//	URL METHOD
//	URL POST a=b&c=d
//	URL PUT </path/to/file
//
// with NAME=value lines that define variables, $(NAME) or ${NAME}
// references, and comments from a '#' at the start of a line or after a
// blank. A URL without a scheme gets http://; one that starts with '/' is
// resolved against the first URL's scheme and host, as siege does.
//
// A list is untrusted input, so unlike siege it reaches nothing outside
// itself unless the caller allows it (Options): a variable is defined by
// the list or by the caller (--define), and the environment is read only
// for the names the caller lists (--env-var); a body file must be a
// regular file under one directory (the list's own, or --body-dir), after
// symbolic links are resolved.
package urls

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbarena/dbarena/internal/secret"
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
// Credentials in the URL are masked (Redacted): the key is printed and
// stored.
func (r *Request) Key() string {
	if r.Method == "GET" {
		return Redacted(r.URL)
	}
	return r.Method + " " + Redacted(r.URL)
}

// Redacted returns u as text with its credentials masked as "***": the
// password of its user info (the user too when it comes alone, as a
// token does), and the values of query parameters whose names say they
// are secrets (secret.IsSecretName: password, token, api_key, ...). The
// rest is as written.
func Redacted(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = redactQuery(c.RawQuery)
	}
	s := c.String()
	if u.User == nil || c.Opaque != "" {
		return s
	}
	// url.URL would escape the '*'s: put the user info in by hand.
	user := "***"
	if _, ok := u.User.Password(); ok {
		user = url.User(u.User.Username()).String() + ":***"
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		return scheme + "://" + user + "@" + rest
	}
	return s
}

// redactQuery masks the values of secret-named parameters of a raw query,
// leaving the others byte for byte.
func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	changed := false
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if name, err := url.QueryUnescape(k); err == nil && secret.IsSecretName(name) {
			parts[i] = k + "=***"
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.Join(parts, "&")
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
	// Define holds variables given by the caller (--define NAME=VALUE).
	// They win over the list's own definitions of the same name.
	Define map[string]string
	// Env looks up the environment variables the caller allows (--env-var
	// NAME), for names neither the list nor Define defines: ok is false
	// for a name that is not allowed or not set. Nil: none.
	Env func(name string) (value string, ok bool)
	// BodyDir is the only directory body files ("<path") are read from; ""
	// is the list's own directory. A relative path is taken from the
	// list's directory.
	BodyDir string
	// NoBodyFiles refuses every body file.
	NoBodyFiles bool
	// Base resolves relative URLs when the list itself has no absolute
	// one before them (the first --url, for example); may be nil.
	Base *url.URL
}

// MaxBody caps a body file, so that a device or a huge file named by a
// list fails early instead of filling the memory.
const MaxBody = 64 << 20

// maxLine caps one line, so that a stray binary file fails early.
const maxLine = 1 << 20

// methods siege accepts after a URL.
var methods = map[string]bool{"GET": true, "POST": true, "PUT": true, "DELETE": true,
	"HEAD": true, "PATCH": true, "OPTIONS": true}

// Parse reads the list named name (for errors and body files) from text.
// It returns every request in order, or the first error.
func Parse(name, text string, o Options) ([]Request, error) {
	vars := map[string]string{}
	for n, v := range o.Define {
		vars[n] = v
	}
	bodies := bodyDir{list: name, dir: o.BodyDir, off: o.NoBodyFiles}
	defer bodies.close()
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
			if _, given := o.Define[n]; given {
				continue // --define wins
			}
			val, err := expand(v, vars, o.Env)
			if err != nil {
				return nil, fail("%v", err)
			}
			vars[n] = val
			continue
		}
		line, err := expand(line, vars, o.Env)
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
				b, err := bodies.read(path)
				if err != nil {
					return nil, fail("%v", err)
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

// definition splits NAME=value; NAME is ValidName and the line has no
// blank before '='.
func definition(line string) (name, value string, ok bool) {
	i := strings.IndexByte(line, '=')
	if i <= 0 || !ValidName(line[:i]) {
		return "", "", false
	}
	return line[:i], strings.TrimSpace(line[i+1:]), true
}

// ValidName reports whether s can name a variable: letters, digits and
// '_', not starting with a digit.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for j := 0; j < len(s); j++ {
		c := s[j]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// expand replaces $(NAME) and ${NAME}: from vars, then env. An undefined
// name is an error.
func expand(s string, vars map[string]string, env func(string) (string, bool)) (string, error) {
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
		if !ok && env != nil {
			v, ok = env(name)
		}
		if !ok {
			return "", fmt.Errorf("undefined variable %q: define it in the list (%s=...) or with --define %s=VALUE; "+
				"the environment is read only for names given with --env-var", name, name, name)
		}
		b.WriteString(v)
		i += 2 + j
	}
	return b.String(), nil
}

// Resolve makes s an absolute http(s) URL: "/path" against base's scheme
// and host, "host/path" with http://. Its errors show s with its password
// masked.
func Resolve(s string, base *url.URL) (*url.URL, error) {
	switch {
	case strings.HasPrefix(s, "/"):
		if base == nil {
			return nil, fmt.Errorf("%q is relative and no absolute URL comes before it", s)
		}
		ref, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("bad URL %q: %s", secret.MaskURL(s), secret.Mask(err.Error()))
		}
		return base.ResolveReference(ref), nil
	case !strings.Contains(s, "://"):
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %s", secret.MaskURL(s), secret.Mask(err.Error()))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("bad URL %q: the scheme must be http or https", secret.MaskURL(s))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("bad URL %q: no host", secret.MaskURL(s))
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

// bodyDir reads the body files of one list, confined to one directory.
type bodyDir struct {
	list string // the list's name: relative paths start from its directory
	dir  string // the confining directory; "" = the list's
	off  bool   // no body files at all
	root *os.Root
	abs  string // dir, absolute
	real string // dir, absolute, symbolic links resolved
	err  error  // from opening the root
}

// errOutside is a body file outside the confining directory.
var errOutside = errors.New("is outside")

// read returns the contents of the body file at path, as the list names it.
func (b *bodyDir) read(path string) ([]byte, error) {
	if b.off {
		return nil, fmt.Errorf("body file %q: body files are not allowed here", path)
	}
	listDir := filepath.Dir(b.list)
	if b.list == "" {
		listDir = "."
	}
	if b.root == nil && b.err == nil {
		dir := b.dir
		if dir == "" {
			dir = listDir
		}
		if b.abs, b.err = filepath.Abs(dir); b.err == nil {
			if b.real, b.err = filepath.EvalSymlinks(b.abs); b.err == nil {
				b.root, b.err = os.OpenRoot(b.real)
			}
		}
	}
	if b.err != nil {
		return nil, fmt.Errorf("body file %q: body directory: %w", path, b.err)
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(listDir, full)
	}
	full, err := filepath.Abs(full)
	if err != nil {
		return nil, fmt.Errorf("body file %q: %w", path, err)
	}
	rel, ok := within(b.abs, full)
	if !ok {
		rel, ok = within(b.real, full)
	}
	if !ok {
		// The path may reach the directory through a symbolic link of
		// its own (/tmp -> /private/tmp): compare the resolved paths.
		if real, err := filepath.EvalSymlinks(full); err == nil {
			rel, ok = within(b.real, real)
		}
	}
	if !ok {
		return nil, b.outside(path)
	}
	// The root refuses a symbolic link (or "..") that leads out of it,
	// without opening what it leads to. A FIFO or a device is refused
	// before it is opened (opening a FIFO waits for a writer).
	st, err := b.root.Stat(rel)
	if err != nil && strings.Contains(err.Error(), "escapes") {
		// An absolute symbolic link to a file in the directory: the
		// root refuses it; go by the resolved path, if it is inside.
		if real, e := filepath.EvalSymlinks(full); e == nil {
			if r, ok := within(b.real, real); ok {
				rel = r
				st, err = b.root.Stat(rel)
			}
		}
	}
	if err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("body file %q: not a regular file", path)
	}
	var f *os.File
	if err == nil {
		f, err = b.root.Open(rel)
	}
	if err != nil {
		if strings.Contains(err.Error(), "escapes") { // os.Root's error, not exported
			return nil, b.outside(path)
		}
		return nil, fmt.Errorf("body file %q: %w", path, err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("body file %q: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("body file %q: not a regular file", path)
	}
	if st.Size() > MaxBody {
		return nil, fmt.Errorf("body file %q: %d bytes, more than %d", path, st.Size(), MaxBody)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("body file %q: %w", path, err)
	}
	if len(data) > MaxBody {
		return nil, fmt.Errorf("body file %q: more than %d bytes", path, MaxBody)
	}
	return data, nil
}

// outside is the error of a body file outside the directory.
func (b *bodyDir) outside(path string) error {
	how := "the URL list's directory; allow another with --body-dir DIR"
	if b.dir != "" {
		how = "--body-dir"
	}
	return fmt.Errorf("body file %q %w %s (%s): refused", path, errOutside, b.real, how)
}

func (b *bodyDir) close() {
	if b.root != nil {
		b.root.Close()
	}
}

// within returns path relative to dir when it is dir or under it.
func within(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}
