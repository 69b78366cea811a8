package dump

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// benchDump is a mysqldump-like file: extended inserts of rows with
// strings holding quotes, backslashes and UTF-8.
func benchDump(size int) []byte {
	var b bytes.Buffer
	b.WriteString("/*!40101 SET NAMES utf8mb4 */;\nCREATE TABLE `t` (`id` int, `s` text, `b` blob) ENGINE=MyISAM;\n")
	id := 0
	for b.Len() < size {
		b.WriteString("INSERT INTO `t` VALUES ")
		for i := 0; i < 500; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			id++
			fmt.Fprintf(&b, "(%d,'row %d: it\\'s a \\\"quoted\\\" text with ; and -- and /* and émoji 😀 %040d','\\0\\n\\r\\Z%032x')", id, id, id, id)
		}
		b.WriteString(";\n")
	}
	return b.Bytes()
}

// BenchmarkScanMySQL measures the splitter alone (MB/s of dump).
func BenchmarkScanMySQL(b *testing.B) {
	data := benchDump(16 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sc := NewScanner(bytes.NewReader(data), "bench.sql", MySQL)
		for {
			raw, err := sc.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			_, _ = Classify(raw, MySQL, "bench.sql", Server{MariaDB: true, Version: 101106})
		}
	}
}

// BenchmarkScanCopy measures COPY block splitting.
func BenchmarkScanCopy(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("COPY public.t (id, s) FROM stdin;\n")
	for i := 0; buf.Len() < 16<<20; i++ {
		fmt.Fprintf(&buf, "%d\trow %d with a tab\\there and a newline\\n and %040d\n", i, i, i)
	}
	buf.WriteString("\\.\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sc := NewScanner(bytes.NewReader(data), "bench.sql", Postgres)
		for {
			_, err := sc.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
