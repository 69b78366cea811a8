package mysqlwire_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// TestCaptureSeeds writes the seed corpus of the fuzz targets
// (testdata/fuzz) again: what a MariaDB sandbox sends for the handshake and
// for replies of each kind, recorded by a proxy between Dial and the
// server, and edge cases written by hand. Run it with MYSQLWIRE_CAPTURE=1.
func TestCaptureSeeds(t *testing.T) {
	if os.Getenv("MYSQLWIRE_CAPTURE") == "" {
		t.Skip("set MYSQLWIRE_CAPTURE=1 to write testdata/fuzz again")
	}
	cfg, _ := server(t)
	rec := record(t, cfg.Addr)
	pcfg := cfg
	pcfg.Addr = rec.addr
	c, err := Dial(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	streams := map[string][]byte{"handshake-mariadb": rec.take()}

	replies := map[string][]byte{}
	step := func(name string, run func() error) {
		t.Helper()
		if err := run(); err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("%s: %v", name, err)
			}
		}
		replies[name] = rec.take()
	}
	exec := func(q string) func() error { return func() error { _, err := c.Exec(q, nil); return err } }
	step("ok-drop", exec("DROP TABLE IF EXISTS wire_seed"))
	step("ok-create", exec("CREATE TABLE wire_seed (id INT PRIMARY KEY, c VARCHAR(40), f DOUBLE NULL)"))
	step("ok-insert", exec("INSERT INTO wire_seed VALUES (1, 'one', 1.5), (2, 'two', NULL), (3, REPEAT('x', 40), -3)"))
	step("err-syntax", exec("SELEC 1"))
	step("rows-text", func() error { return c.Query("SELECT * FROM wire_seed", nil) })
	step("rows-empty", func() error { return c.Query("SELECT * FROM wire_seed WHERE id < 0", nil) })
	var sel *Stmt
	step("prepare-select", func() (err error) {
		sel, err = c.Prepare("SELECT id, c, f FROM wire_seed WHERE id BETWEEN ? AND ?")
		return err
	})
	step("rows-binary", func() error { return sel.Query([]any{1, 3}) })
	var upd *Stmt
	step("prepare-update", func() (err error) {
		upd, err = c.Prepare("UPDATE wire_seed SET f = ? WHERE id = ?")
		return err
	})
	step("ok-update-binary", func() error { _, err := upd.Exec([]any{2.5, 1}); return err })
	step("err-prepare-missing", func() error { _, err := c.Prepare("SELECT * FROM no_such_table"); return err })
	step("ok-drop-proc", exec("DROP PROCEDURE IF EXISTS wire_seed_p"))
	step("ok-create-proc", exec("CREATE PROCEDURE wire_seed_p() BEGIN SELECT 1; SELECT id FROM wire_seed; END"))
	step("multi-result", exec("CALL wire_seed_p()"))
	step("err-dup-key", exec("INSERT INTO wire_seed VALUES (1, 'again', 0)"))
	step("ok-drop-seed", exec("DROP TABLE wire_seed"))
	step("ok-drop-proc-again", exec("DROP PROCEDURE wire_seed_p"))

	for name, b := range replies {
		streams[name] = b
	}
	// One packet of each kind for FuzzPacket.
	packets := map[string][]byte{}
	for _, name := range []string{"ok-insert", "ok-update-binary", "err-syntax", "err-dup-key", "rows-text"} {
		for i, p := range split(replies[name]) {
			if len(p) > 0 && (p[0] == 0x00 || p[0] == 0xff || p[0] == 0xfe) {
				packets[fmt.Sprintf("%s-%d", name, i)] = p
			}
		}
	}

	for name, b := range edgeStreams() {
		streams[name] = b
	}
	for name, b := range edgePackets() {
		packets[name] = b
	}
	writeSeeds(t, "FuzzReadPacket", streams)
	writeSeeds(t, "FuzzHandshake", filter(streams, "handshake"))
	replies = filter(streams, "")
	for name := range replies {
		if bytes.HasPrefix([]byte(name), []byte("handshake")) {
			delete(replies, name)
		}
	}
	writeSeeds(t, "FuzzReply", replies)
	writeSeeds(t, "FuzzPacket", packets)
}

// recorder is a proxy to a server that records what the server sends.
type recorder struct {
	addr string
	mu   sync.Mutex
	buf  []byte
}

func record(t *testing.T, upstream string) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &recorder{addr: ln.Addr().String()}
	go func() {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		defer client.Close()
		srv, err := net.Dial("tcp", upstream)
		if err != nil {
			return
		}
		defer srv.Close()
		go func() {
			b := make([]byte, 64<<10)
			for {
				n, err := client.Read(b)
				if n > 0 {
					if _, err := srv.Write(b[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		b := make([]byte, 64<<10)
		for {
			n, err := srv.Read(b)
			if n > 0 {
				// Recorded before the client can read it.
				r.mu.Lock()
				r.buf = append(r.buf, b[:n]...)
				r.mu.Unlock()
				if _, err := client.Write(b[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

// take returns what the server sent since the last take.
func (r *recorder) take() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf
	r.buf = nil
	return b
}

// split cuts a stream into packet payloads.
func split(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
		if 4+n > len(b) {
			break
		}
		out = append(out, b[4:4+n])
		b = b[4+n:]
	}
	return out
}

// packets joins payloads into a stream, sequence numbers from seq.
func packets(seq byte, payloads ...[]byte) []byte {
	var b []byte
	for _, p := range payloads {
		b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), seq)
		b = append(b, p...)
		seq++
	}
	return b
}

// greeting is a HandshakeV10 payload offering plugin.
func greeting(plugin string) []byte {
	p := []byte{10}
	p = append(p, "10.11.0-MariaDB\x00"...)
	p = append(p, 1, 0, 0, 0)            // connection id
	p = append(p, "abcdefgh\x00"...)     // salt, first part
	p = append(p, 0xff, 0xf7, 45, 2, 0)  // capabilities (low), charset, status
	p = append(p, 0xff, 0x81, 21)        // capabilities (high), salt length
	p = append(p, make([]byte, 10)...)   // reserved
	p = append(p, "ijklmnopqrst\x00"...) // salt, second part
	return append(append(p, plugin...), 0)
}

// edgeStreams are server streams a client must survive.
func edgeStreams() map[string][]byte {
	ok := []byte{0, 0, 0, 2, 0, 0, 0}
	return map[string][]byte{
		"edge-empty":                      nil,
		"edge-empty-packet":               {0, 0, 0, 0},
		"edge-short-header":               {5, 0},
		"edge-truncated-payload":          {10, 0, 0, 0, 1, 2},
		"edge-long-packet-truncated":      {0xff, 0xff, 0xff, 0, 1, 2, 3},
		"handshake-empty-greeting":        packets(0, nil),
		"handshake-protocol-9":            packets(0, []byte{9, 'x', 0}),
		"handshake-truncated":             packets(0, greeting("mysql_native_password")[:20]),
		"handshake-error":                 packets(0, []byte("\xff\x10\x04Too many connections")),
		"handshake-native-ok":             packets(0, greeting("mysql_native_password"), ok),
		"handshake-empty-auth-reply":      packets(0, greeting("mysql_native_password"), nil),
		"handshake-auth-switch":           packets(0, greeting("caching_sha2_password"), []byte("\xfemysql_native_password\x00abcdefghijklmnopqrst\x00"), ok),
		"handshake-auth-switch-unknown":   packets(0, greeting("mysql_native_password"), []byte("\xfeed25519\x00abc")),
		"handshake-auth-switch-short":     packets(0, greeting("mysql_native_password"), []byte{0xfe}),
		"handshake-sha2-fast":             packets(0, greeting("caching_sha2_password"), []byte{1, 3}, ok),
		"handshake-sha2-full":             packets(0, greeting("caching_sha2_password"), []byte{1, 4}),
		"handshake-switch-loop":           packets(0, greeting("mysql_native_password"), []byte("\xfemysql_native_password\x00a\x00"), []byte("\xfemysql_native_password\x00b\x00"), []byte("\xfemysql_native_password\x00c\x00"), []byte("\xfemysql_native_password\x00d\x00")),
		"edge-reply-local-infile":         packets(1, []byte("\xfb/etc/passwd")),
		"edge-reply-err-short":            packets(1, []byte{0xff}),
		"edge-reply-err-short-state":      packets(1, []byte("\xff\x01\x02#42")),
		"edge-reply-ok-truncated-lenenc":  packets(1, []byte{0, 0xfe, 1}),
		"edge-reply-columns-no-eof":       packets(1, []byte{1}, []byte("\x03def")),
		"edge-reply-more-results-forever": packets(1, []byte{0, 0, 0, 0x08, 0}, []byte{0, 0, 0, 0x08, 0}),
		"edge-reply-prepare-short":        packets(1, []byte{0, 1, 0, 0}),
		"edge-reply-prepare-params":       packets(1, []byte{0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0}, []byte("\x03def"), []byte{0xfe, 0, 0, 2, 0}),
	}
}

// edgePackets are OK, ERR and EOF payloads a client must survive.
func edgePackets() map[string][]byte {
	return map[string][]byte{
		"edge-empty":           nil,
		"edge-ok-bare":         {0},
		"edge-ok-lenenc-8":     {0, 0xfe, 1, 2, 3},
		"edge-ok-lenenc-3":     {0, 0xfd, 1},
		"edge-err-bare":        {0xff},
		"edge-err-number-only": {0xff, 0x28, 0x04},
		"edge-err-state-short": []byte("\xff\x28\x04#4200"),
		"edge-eof-short":       {0xfe, 0, 0},
	}
}

// filter returns the seeds whose name starts with prefix.
func filter(m map[string][]byte, prefix string) map[string][]byte {
	out := map[string][]byte{}
	for name, b := range m {
		if bytes.HasPrefix([]byte(name), []byte(prefix)) {
			out[name] = b
		}
	}
	return out
}

// writeSeeds replaces testdata/fuzz/target with seeds, one file each in
// the format of go test's fuzz corpus.
func writeSeeds(t *testing.T, target string, seeds map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
