package capture

import (
	"bufio"
	"io"
)

// LineReader reads lines without copying them when it can: the slice
// Next returns is valid until the following call.
type LineReader struct {
	r    *bufio.Reader
	long []byte
	// N is the number of the line Next returned last (1-based).
	N     int64
	Bytes int64
	// Partial says the line Next returned last ended the input without a
	// newline: a log cut off mid-line (a writer killed, a copy taken while
	// the server wrote).
	Partial bool
}

// NewLineReader reads r with a 1 MiB buffer.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 1<<20)}
}

// Next returns the next line without its "\n" (and "\r"), or io.EOF.
func (l *LineReader) Next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = l.r.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if len(line) == 0 && err != nil {
		return nil, err
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	l.N++
	l.Bytes += int64(len(line))
	l.Partial = err == io.EOF
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}
