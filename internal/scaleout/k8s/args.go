package k8s

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// secretHeaderWords mark a --header whose value is a credential: its name
// (case-insensitive) is one of them or contains one.
var secretHeaderWords = []string{"authorization", "cookie", "token", "secret", "password", "passwd", "api-key", "apikey", "auth", "session"}

// PodSecrets are the secret values taken out of the pods' command line.
type PodSecrets struct {
	Args []SecretArg
	// Data are the Secret's keys for them, with the values.
	Data map[string][]byte
	// What says what each key holds, without the value, for messages.
	What []string
}

// SecretArgs takes the secret values out of the pods' arguments: a URL
// with a password (--url, --db-target, any flag's value; an http(s) URL
// with a user part too) and a credential header (--header 'Authorization: ...', a
// cookie, a token). Each goes into the Secret under key arg-N and the
// argument becomes $(DBARENA_SECRET_ARG_N), which Kubernetes expands
// from the pod's environment; "$(" elsewhere is escaped as "$$(" so that
// nothing else is expanded.
func SecretArgs(args []string) ([]string, PodSecrets) {
	ps := PodSecrets{Data: map[string][]byte{}}
	out := make([]string, 0, len(args))
	hide := func(flag, v string) string {
		n := len(ps.Args) + 1
		sa := SecretArg{Env: fmt.Sprintf("DBARENA_SECRET_ARG_%d", n), Key: fmt.Sprintf("arg-%d", n)}
		ps.Args = append(ps.Args, sa)
		ps.Data[sa.Key] = []byte(v)
		ps.What = append(ps.What, fmt.Sprintf("%q: the value of %s", sa.Key, flag))
		return "$(" + sa.Env + ")"
	}
	prev := ""
	for _, a := range args {
		flag, v, inline := "", a, false
		if name, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
			flag, v, inline = name, val, true
		} else if strings.HasPrefix(prev, "--") && !strings.Contains(prev, "=") && !strings.HasPrefix(a, "-") {
			flag = prev
		}
		prev = a
		if flag != "" && secretValue(flag, v) {
			if inline {
				out = append(out, flag+"="+hide(flag, v))
			} else {
				out = append(out, hide(flag, v))
			}
			continue
		}
		out = append(out, strings.ReplaceAll(a, "$(", "$$("))
	}
	return out, ps
}

// secretValue reports whether v, the value of flag, is a credential.
func secretValue(flag, v string) bool {
	if flag == "--header" {
		name, _, _ := strings.Cut(v, ":")
		name = strings.ToLower(strings.TrimSpace(name))
		for _, w := range secretHeaderWords {
			if strings.Contains(name, w) {
				return true
			}
		}
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.User == nil || u.Host == "" {
		return false
	}
	if _, ok := u.User.Password(); ok {
		return true
	}
	// A web URL's user part alone may be a token (https://TOKEN@host/);
	// a database DSN's is the account name.
	scheme := strings.ToLower(u.Scheme)
	return scheme == "http" || scheme == "https"
}

// UnreachableStore says why a --results store is out of the pods' reach:
// a local file, a DSN without a host (a local socket) or with a loopback
// address; "" for a DSN of another host.
func UnreachableStore(loc string) string {
	if !strings.Contains(loc, "://") {
		return "a local file"
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "" // store.Open says what is wrong with it
	}
	host := u.Hostname()
	switch {
	case host == "":
		return "a DSN without a host (a local socket)"
	case strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost"):
		return "a loopback address (" + host + ")"
	}
	if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
		return "a loopback address (" + host + ")"
	}
	return ""
}

// HasPassword reports whether a --target DSN carries a password.
func HasPassword(dsn string) bool {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// DropFlags returns args without the long flags named in drop (true: it
// takes a value) and -o.
func DropFlags(args []string, drop map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-o" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		takes, ok := drop[name]
		if !strings.HasPrefix(a, "--") || !ok {
			out = append(out, a)
			continue
		}
		if takes && !hasValue {
			i++
		}
	}
	return out
}
