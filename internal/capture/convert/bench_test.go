package convert

import (
	"bytes"
	"io"
	"testing"

	"github.com/dbarena/dbarena/internal/capture/capturetest"
)

// BenchmarkConvert converts a 16 MiB synthetic log of each format to a
// capture (MB/s of log).
func BenchmarkConvert(b *testing.B) {
	for _, from := range Formats {
		b.Run(from, func(b *testing.B) {
			var log bytes.Buffer
			if err := capturetest.GenerateLog(&log, from, 16<<20); err != nil {
				b.Fatal(err)
			}
			o := Options{From: from}
			if from == PGStderr {
				o.LogLinePrefix = capturetest.PostgresPrefix
			}
			b.SetBytes(int64(log.Len()))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := NewCollector(o.Filter, new(captureStats))
				if err := Parse(bytes.NewReader(log.Bytes()), from, o, c); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Write(io.Discard, captureHeader(from)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
