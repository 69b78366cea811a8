package web

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"testing"

	"github.com/dbarena/dbarena/internal/workload"
)

// BenchmarkEvent is one request of one worker against a local server with
// keep-alive: the client's allocations per request (the server allocates
// nothing) and the time per request, the server's included.
func BenchmarkEvent(b *testing.B) {
	url := cannedServer(b)
	wl := New().(*Workload)
	wl.urlFlags = []string{url + "/a"}
	if errs := wl.Validate(); len(errs) > 0 {
		b.Fatal(errs)
	}
	w := newWorker(wl, 0, 1)
	defer w.Close()
	ctx := context.Background()
	var ev workload.Event
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev = workload.Event{}
		if err := w.Event(ctx, &ev); err != nil {
			b.Fatal(err)
		}
	}
}

// cannedServer answers every request on 127.0.0.1 with the same 200
// response, allocating nothing per request; it returns its base URL.
func cannedServer(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n\r\nhello, world")
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					// A GET has no body: the request ends at its blank line.
					line, err := r.ReadSlice('\n')
					if err != nil {
						return
					}
					if bytes.Equal(line, []byte("\r\n")) {
						if _, err := c.Write(resp); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return "http://" + l.Addr().String()
}
