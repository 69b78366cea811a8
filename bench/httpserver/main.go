// Command httpserver is the static server bench/http-compare runs its HTTP
// clients against: every path answers 200 with a fixed body.
//
// Usage: go run ./bench/httpserver -addr 127.0.0.1:0 -size 1024
// It prints "listening on HOST:PORT" once it accepts connections.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	size := flag.Int("size", 1024, "body size in bytes")
	flag.Parse()
	body := bytes.Repeat([]byte("x"), *size)
	length := strconv.Itoa(len(body))
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", l.Addr())
	log.Fatal(http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"text/plain"}
		h["Content-Length"] = []string{length}
		w.Write(body)
	})))
}
