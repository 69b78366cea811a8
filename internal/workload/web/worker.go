package web

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// worker is one siege user: its own client and connection(s), its own
// copy of every request (reused from one event to the next) and its own
// figures. It is used by one goroutine.
type worker struct {
	wl     *Workload
	tr     *http.Transport
	client *http.Client
	base   []*http.Request // without a context
	reqs   []*http.Request // base bound to ctx
	ctx    context.Context
	bodies [][]byte // per request; nil without a body
	keys   []string
	rng    *rand.Rand
	next   int // the next request, in order mode
	n      int // requests started, for --reps
	timer  *time.Timer
	st     *slot
}

func newWorker(wl *Workload, id int, seed int64) *worker {
	timeout := time.Duration(wl.timeout)
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 nil, // a load test talks to the server itself
		DialContext:           dialer.DialContext,
		DisableKeepAlives:     wl.keepAlive == "off",
		MaxIdleConnsPerHost:   4,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: timeout,
		TLSHandshakeTimeout:   timeout,
		DisableCompression:    true, // count the bytes the server sends
		ForceAttemptHTTP2:     false,
	}
	c := &http.Client{Transport: tr}
	if !wl.follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	// The random order depends on the run's seed (the runner gives worker
	// id seed+id) and the user's global number only, so that shards make
	// the same choices as one machine.
	w := &worker{wl: wl, tr: tr, client: c, st: wl.stats.slot(id),
		rng: rand.New(rand.NewPCG(uint64(seed-int64(id)), uint64(wl.user(id))))}
	for _, r := range wl.reqs {
		req := &http.Request{Method: r.Method, URL: r.URL, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: wl.header.Clone(), Host: r.URL.Host}
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.Header.Set("User-Agent", "dbarena")
		body := r.Body
		if body != nil {
			req.ContentLength = int64(len(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			if req.Header.Get("Content-Type") == "" {
				req.Header.Set("Content-Type", r.ContentType)
			}
		}
		w.base = append(w.base, req)
		w.bodies = append(w.bodies, body)
		w.keys = append(w.keys, r.Key())
	}
	return w
}

// bind makes the requests carry ctx (once per run: the runner passes the
// same context to every event).
func (w *worker) bind(ctx context.Context) {
	w.reqs = w.reqs[:0]
	for _, r := range w.base {
		w.reqs = append(w.reqs, r.WithContext(ctx))
	}
	w.ctx = ctx
}

// Event implements workload.Worker: one request, after the think time.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	if w.wl.reps > 0 && w.n >= w.wl.reps {
		return workload.ErrDone
	}
	w.n++
	if ctx != w.ctx {
		w.bind(ctx)
	}
	if d := time.Duration(w.wl.delay); d > 0 {
		pause := time.Duration(w.rng.Int64N(int64(d) + 1))
		if !w.sleep(ctx, pause) {
			return ctx.Err()
		}
		ev.Pause = pause
	}
	i := w.next
	if w.wl.random {
		i = w.rng.IntN(len(w.reqs))
	} else if w.next++; w.next == len(w.reqs) {
		w.next = 0
	}
	req := w.reqs[i]
	if body := w.bodies[i]; body != nil {
		// A new reader each time: the transport may still be reading
		// the last one after a response that came before the whole body.
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	ev.Type = w.keys[i]
	start := time.Now()
	var resp *http.Response
	var err error
	if w.wl.follow {
		resp, err = w.client.Do(req)
	} else {
		// The Transport alone: the Client's redirect and cookie handling
		// costs a dozen allocations a request.
		resp, err = w.tr.RoundTrip(req)
	}
	if err != nil {
		w.st.failed(time.Since(start))
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rt := time.Since(start)
	if err != nil {
		w.st.failed(rt)
		return err
	}
	w.st.response(resp.StatusCode, n, rt)
	if resp.StatusCode >= 400 {
		return &StatusError{Code: resp.StatusCode}
	}
	return nil
}

// sleep waits d, or less when ctx ends; it reports whether it waited d.
func (w *worker) sleep(ctx context.Context, d time.Duration) bool {
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-ctx.Done():
		w.timer.Stop()
		return false
	}
}

// Close implements workload.Worker: it closes the idle connections.
func (w *worker) Close() error {
	w.tr.CloseIdleConnections()
	return nil
}
