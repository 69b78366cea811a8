package cli

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/dbarena/dbarena/internal/scaleout/k8s"
)

// secretHeaderWords mark a --header whose value is a credential: its name
// (case-insensitive) is one of them or contains one.
var secretHeaderWords = []string{"authorization", "cookie", "token", "secret", "password", "passwd", "api-key", "apikey", "auth", "session"}

// podSecrets are the secret values taken out of the pods' command line.
type podSecrets struct {
	args []k8s.SecretArg
	// data are the Secret's keys for them, with the values.
	data map[string][]byte
	// what says what each key holds, without the value, for messages.
	what []string
}

// secretArgs takes the secret values out of the pods' arguments: a URL
// with a password (--url, --db-target, any flag's value; an http(s) URL
// with a user part too) and a credential header (--header 'Authorization: ...', a
// cookie, a token). Each goes into the Secret under key arg-N and the
// argument becomes $(DBARENA_SECRET_ARG_N), which Kubernetes expands
// from the pod's environment; "$(" elsewhere is escaped as "$$(" so that
// nothing else is expanded.
func secretArgs(args []string) ([]string, podSecrets) {
	ps := podSecrets{data: map[string][]byte{}}
	out := make([]string, 0, len(args))
	hide := func(flag, v string) string {
		n := len(ps.args) + 1
		sa := k8s.SecretArg{Env: fmt.Sprintf("DBARENA_SECRET_ARG_%d", n), Key: fmt.Sprintf("arg-%d", n)}
		ps.args = append(ps.args, sa)
		ps.data[sa.Key] = []byte(v)
		ps.what = append(ps.what, fmt.Sprintf("%q: the value of %s", sa.Key, flag))
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
