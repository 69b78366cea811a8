package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/results/live"
)

// defaultMetricsLinger is --metrics-linger's default: long enough for a
// scrape at Prometheus's usual 15s interval, and one retry.
const defaultMetricsLinger = 30 * time.Second

// metricsOptions are --metrics-listen and its companions (docs/metrics.md)
// of `run` and `plan run`: live figures for Prometheus.
type metricsOptions struct {
	listen string
	any    bool
	linger time.Duration
	l      *live.Listener
}

func (m *metricsOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&m.listen, "metrics-listen", "", "serve the live figures for Prometheus at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464; port 0 picks one); loopback only unless --metrics-listen-any")
	fs.BoolVar(&m.any, "metrics-listen-any", false, "let --metrics-listen use an address that is not loopback (the figures name workloads, servers and plan cells)")
	durationFlag(fs, &m.linger, "metrics-linger", defaultMetricsLinger, "with --metrics-listen: after the work, keep serving until a scrape has read the final figures, at most this long (0: stop at once)")
}

func (m *metricsOptions) validate(fs *pflag.FlagSet) []error {
	if m.listen == "" {
		var errs []error
		for _, f := range []string{"metrics-listen-any", "metrics-linger"} {
			if fs.Changed(f) {
				errs = append(errs, fmt.Errorf("--%s: only with --metrics-listen", f))
			}
		}
		return errs
	}
	if m.linger < 0 {
		return []error{errors.New("--metrics-linger must not be negative")}
	}
	if err := live.CheckAddr(m.listen, m.any); err != nil {
		return []error{fmt.Errorf("--metrics-listen: %w", err)}
	}
	return nil
}

// on reports whether live figures are served.
func (m *metricsOptions) on() bool { return m.listen != "" }

// start starts serving and says where.
func (m *metricsOptions) start(a *App) error {
	if !m.on() {
		return nil
	}
	l, err := live.Listen(a.Stdout, m.listen, m.any, m.linger)
	if err != nil {
		return usagef("--metrics-listen: %w", err)
	}
	m.l = l
	return nil
}
