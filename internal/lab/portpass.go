package lab

import "github.com/dbarena/dbarena/internal/server/sandbox"

// portPassword is the workload password of the first other sandbox of m
// (by name) on the fixed port, "" when there is none. The servers of a plan
// that share a port: share one password too, so that an application
// configured once for 127.0.0.1:PORT (user dbarena, database sbtest) logs
// in to each server in turn.
func portPassword(m *sandbox.Manager, name string, port int) string {
	if port == 0 {
		return ""
	}
	all, _ := m.List() // the sandboxes that can be read
	for _, sb := range all {
		if sb.Name != name && sb.Port == port {
			if pw := sb.Target().Password; pw != "" {
				return pw
			}
		}
	}
	return ""
}
