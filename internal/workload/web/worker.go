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
	"github.com/dbarena/dbarena/internal/workload/web/urls"
)

// worker is one siege user: its own client and connection(s) and its own
// figures. The requests are the workload's templates (Workload.tmpl),
// shared read-only by every worker, so that a worker's memory does not
// grow with the list: at 16 threads and 1,000 URLs, a copy of every
// request per worker was 18 MB of live heap. It is used by one goroutine.
type worker struct {
	wl     *Workload
	tr     *http.Transport
	client *http.Client
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
	return &worker{wl: wl, tr: tr, client: c, st: wl.stats.slot(id),
		rng: rand.New(rand.NewPCG(uint64(seed-int64(id)), uint64(wl.user(id))))}
}

// templates makes one request per line of the list, without a context or
// a body reader: the workers copy one per event (Request.WithContext) and
// never write to it, so they share them. A URL's user info is sent as
// Basic authorization, as http.Client does, unless --header sets one.
func templates(reqs []urls.Request, header http.Header) []*http.Request {
	out := make([]*http.Request, 0, len(reqs))
	for _, r := range reqs {
		req := &http.Request{Method: r.Method, URL: r.URL, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: header.Clone(), Host: r.URL.Host}
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.Header.Set("User-Agent", "dbarena")
		if u := r.URL.User; u != nil && req.Header.Get("Authorization") == "" {
			pw, _ := u.Password()
			req.SetBasicAuth(u.Username(), pw)
		}
		if body := r.Body; body != nil {
			req.ContentLength = int64(len(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			if req.Header.Get("Content-Type") == "" {
				req.Header.Set("Content-Type", r.ContentType)
			}
		}
		out = append(out, req)
	}
	return out
}

// Event implements workload.Worker: one request, after the think time.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	if w.wl.reps > 0 && w.n >= w.wl.reps {
		return workload.ErrDone
	}
	w.n++
	if d := time.Duration(w.wl.delay); d > 0 {
		pause := time.Duration(w.rng.Int64N(int64(d) + 1))
		if !w.sleep(ctx, pause) {
			return ctx.Err()
		}
		ev.Pause = pause
	}
	tmpl := w.wl.tmpl
	i := w.next
	if w.wl.random {
		i = w.rng.IntN(len(tmpl))
	} else if w.next++; w.next == len(tmpl) {
		w.next = 0
	}
	// A copy of the shared template, bound to ctx (the only allocation of
	// the request's own).
	req := tmpl[i].WithContext(ctx)
	if body := w.wl.reqs[i].Body; body != nil {
		// A new reader each time: the transport may still be reading
		// the last one after a response that came before the whole body.
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	ev.Type = w.wl.keys[i]
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
