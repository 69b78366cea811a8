package monitor

import (
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// IsLocal reports whether t's server runs on this machine, so that host
// and process figures describe it: a unix socket, or a host that is empty,
// "localhost" or a loopback address (127.0.0.0/8, ::1). Any other host
// counts as remote, even if it is one of this machine's own addresses.
func IsLocal(t target.Target) bool {
	if t.Socket != "" {
		return true
	}
	h := strings.Trim(strings.ToLower(t.Host), "[]")
	return h == "" || h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.") || strings.HasPrefix(h, "/")
}
