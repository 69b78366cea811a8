package plan

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

var everyRE = regexp.MustCompile(`^every=([1-9][0-9]{0,8})$`)

// validConnect reports whether s is a --connect value: persistent,
// per-event or every=N.
func validConnect(s string) bool {
	return s == "persistent" || s == "per-event" || everyRE.MatchString(s)
}

// checkPorts reports fixed ports that cannot be honoured: the port of a
// dsn server on this machine, which runs all along, given to a sandbox
// that must run at the same time. Sandboxes sharing a port among
// themselves run in turn.
func (p *Plan) checkPorts() []error {
	var errs []error
	for _, d := range p.Servers {
		port, ok := localPort(d.DSN)
		if !ok {
			continue
		}
		for _, s := range p.Servers {
			if s.Port == port {
				errs = append(errs, p.Errorf(s.Line, "server %q: port %d is the port of dsn server %q (line %d), which runs all along: give another port",
					s.Name, port, d.Name, d.Line))
			}
		}
	}
	return errs
}

// localPort returns the port of a DSN on 127.0.0.1 or localhost.
func localPort(dsn string) (int, bool) {
	if dsn == "" {
		return 0, false
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return 0, false
	}
	switch strings.ToLower(u.Hostname()) {
	case "127.0.0.1", "localhost", "::1":
	default:
		return 0, false
	}
	port := u.Port()
	if port == "" {
		if strings.HasPrefix(u.Scheme, "postgres") {
			return 5432, true
		}
		return 3306, true
	}
	n, err := strconv.Atoi(port)
	return n, err == nil
}
