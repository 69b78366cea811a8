package pgwire

import (
	"encoding/binary"
	"syscall"
	"testing"
)

// The fuzz targets feed what a server might send through the client's
// readers and parsers: whatever the bytes, they return (an error when the
// bytes are wrong), never panic and never wait. Seeds: testdata/fuzz
// (written by TestWriteSeeds from the messages of a real session's shape)
// and the f.Add cases.

// devNull opens /dev/null for the replays: reading it gives the end of the
// stream at once, writing it succeeds.
func devNull(f *testing.F) int {
	f.Helper()
	fd, err := syscall.Open("/dev/null", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { syscall.Close(fd) })
	return fd
}

// replay returns a Conn on null that reads data and then the end of the
// stream, and whose writes are lost. It is never closed.
func replay(null int, data []byte) *Conn {
	c := newConn(null, nil, Config{})
	c.params = map[string]string{}
	c.s.Buf = make([]byte, max(len(data), 16))
	c.s.End = copy(c.s.Buf, data)
	return c
}

// msg builds one backend message.
func msg(t byte, body ...[]byte) []byte {
	n := 4
	for _, b := range body {
		n += len(b)
	}
	out := []byte{t}
	out = binary.BigEndian.AppendUint32(out, uint32(n))
	for _, b := range body {
		out = append(out, b...)
	}
	return out
}

func i16(v int) []byte     { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func i32(v int) []byte     { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func cstr(s string) []byte { return append([]byte(s), 0) }

// seeds are typical server streams: startup, replies with rows of both
// formats, errors, a pipeline's results.
func seeds() map[string][][]byte {
	field := func(name string, oid, format int) []byte {
		b := cstr(name)
		b = append(b, i32(0)...)
		b = append(b, i16(0)...)
		b = append(b, i32(oid)...)
		b = append(b, i16(8)...)
		b = append(b, i32(-1)...)
		return append(b, i16(format)...)
	}
	join := func(ms ...[]byte) []byte {
		var out []byte
		for _, m := range ms {
			out = append(out, m...)
		}
		return out
	}
	ready := msg('Z', []byte{'I'})
	errMsg := msg('E', []byte("SERROR\x00VERROR\x00C40001\x00Mcould not serialize access\x00\x00"))
	startup := join(msg('R', i32(0)), msg('S', cstr("server_version"), cstr("15.18")),
		msg('K', i32(1234), i32(5678)), ready)
	md5 := join(msg('R', i32(5), []byte{1, 2, 3, 4}), startup)
	sasl := join(msg('R', i32(10), cstr("SCRAM-SHA-256"), []byte{0}),
		msg('R', i32(11), []byte("r=abc,s=c2FsdA==,i=4096")), startup)
	rows := join(msg('2'), msg('T', i16(3), field("id", oidInt4, 1), field("c", oidBPChar, 1), field("n", 1700, 0)),
		msg('D', i16(3), i32(4), i32(7), i32(3), []byte("abc"), i32(-1)),
		msg('C', cstr("SELECT 1")), ready)
	simple := join(msg('T', i16(1), field("x", oidInt8, 0)), msg('D', i16(1), i32(2), []byte("42")),
		msg('C', cstr("SELECT 1")), msg('N', []byte("SNOTICE\x00Mhi\x00\x00")), msg('C', cstr("UPDATE 3")), ready)
	pipeline := join(msg('1'), msg('2'), msg('C', cstr("INSERT 0 1")), msg('2'), errMsg, ready)
	prepare := join(msg('1'), msg('t', i16(2), i32(oidInt4), i32(oidText)),
		msg('T', i16(1), field("c", oidText, 0)), ready)
	return map[string][][]byte{
		"FuzzReadMsg": {startup, rows, simple},
		"FuzzStartup": {startup, md5, sasl, msg('R', i32(3)), join(errMsg)},
		"FuzzReply":   {rows, simple, join(msg('2'), errMsg, ready), prepare},
		"FuzzPrepare": {prepare, join(msg('1'), msg('t', i16(0)), msg('n'), ready), join(errMsg, ready)},
		"FuzzSync":    {pipeline, join(msg('2'), msg('C', cstr("UPDATE 1")), ready)},
	}
}

func addSeeds(f *testing.F, name string) {
	for _, s := range seeds()[name] {
		f.Add(s)
	}
}

// FuzzReadMsg: the message reader splits any stream into messages no
// longer than the stream, and ends with an error.
func FuzzReadMsg(f *testing.F) {
	addSeeds(f, "FuzzReadMsg")
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := replay(null, data)
		total := 0
		for {
			_, p, err := c.readMsg()
			if err != nil {
				break
			}
			total += 5 + len(p)
			if total > len(data) {
				t.Fatalf("read %d bytes from a %d-byte stream", total, len(data))
			}
		}
	})
}

// FuzzStartup: the authentication exchange and the startup messages.
func FuzzStartup(f *testing.F) {
	addSeeds(f, "FuzzStartup")
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cfg := range []Config{{User: "u", Password: "secret", Database: "d"}, {User: "u"}} {
			c := replay(null, data)
			_ = c.startup(cfg)
		}
	})
}

// FuzzReply: a statement's reply, its rows read through every accessor.
func FuzzReply(f *testing.F) {
	addSeeds(f, "FuzzReply")
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		read := func(r *Row) error {
			for i := 0; i < r.Len(); i++ {
				_, _ = r.Int64(i)
				_, _ = r.Float64(i)
				_ = r.Bytes(i)
				_ = r.IsNull(i)
				_ = r.Name(i)
			}
			return nil
		}
		c := replay(null, data)
		_, _ = c.reply(nil, read)
		c = replay(null, data)
		cols := []column{{name: "a", oid: oidInt8, format: fmtBinary}, {name: "b", oid: oidFloat4, format: fmtBinary}}
		_, _ = c.reply(cols, read)
		c = replay(null, data)
		_, _ = c.reply(nil, nil)
	})
}

// FuzzPrepare: the reply to Parse and Describe.
func FuzzPrepare(f *testing.F) {
	addSeeds(f, "FuzzPrepare")
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := replay(null, data)
		_, _ = c.Prepare("SELECT 1")
	})
}

// FuzzSync: a pipeline's results.
func FuzzSync(f *testing.F) {
	addSeeds(f, "FuzzSync")
	null := devNull(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := replay(null, data)
		p := c.StartPipeline()
		p.n = 3
		p.read = []pipeRead{{i: 1, cols: []column{{name: "a", oid: oidInt4, format: fmtBinary}}, fn: func(r *Row) error {
			_, _ = r.Int64(0)
			_ = r.Bytes(0)
			return nil
		}}}
		_ = p.Sync(func(int, int64, error) {})
	})
}
