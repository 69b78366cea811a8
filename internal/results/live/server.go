package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CheckAddr checks a listen address HOST:PORT: HOST must be a loopback
// address (127.0.0.0/8, ::1) or localhost unless anyAddr is set; an empty
// HOST (every interface) is not loopback.
func CheckAddr(addr string, anyAddr bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
		return fmt.Errorf("%q: bad port %q", addr, port)
	}
	if anyAddr || isLoopback(host) {
		return nil
	}
	switch {
	case host == "":
		host = "every interface"
	case strings.ContainsFunc(host, func(r rune) bool { return !unicode.IsPrint(r) }):
		host = strconv.Quote(host)
	}
	return fmt.Errorf("%s is not a loopback address: the figures name workloads, servers and plan cells; listen on 127.0.0.1, or add --metrics-listen-any to serve them to the network", host)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server serves an exporter's figures at /metrics.
type Server struct {
	e    *Exporter
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Serve listens on addr (checked with CheckAddr first) and serves e's
// figures, with the Go runtime's and the process's own, at /metrics.
func Serve(e *Exporter, addr string, anyAddr bool) (*Server, error) {
	if err := CheckAddr(addr, anyAddr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector())
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		v := e.version
		e.mu.Unlock()
		metrics.ServeHTTP(w, r)
		e.scraped(v)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "dbarena: live figures at /metrics")
	})
	s := &Server{e: e, ln: ln, done: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address served, its port chosen when addr's was 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the address of the figures.
func (s *Server) URL() string { return "http://" + s.Addr() + "/metrics" }

// scraped records that a scrape served the figures of version v.
func (e *Exporter) scraped(v uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v > e.served {
		e.served = v
		close(e.changed)
		e.changed = make(chan struct{})
	}
}

// Linger waits until a scrape has served every change made so far (the
// final totals), at most d, or until ctx ends. It reports whether one did.
func (s *Server) Linger(ctx context.Context, d time.Duration) bool {
	e := s.e
	timer := time.NewTimer(d)
	defer timer.Stop()
	e.mu.Lock()
	want := e.version
	for e.served < want {
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
		e.mu.Lock()
	}
	e.mu.Unlock()
	return true
}

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
