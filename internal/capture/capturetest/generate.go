package capturetest

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// GenerateLog writes a synthetic log of format (mysql-general,
// mysql-slow, pg-csv, pg-stderr with PostgresPrefix) of about size
// bytes: 64 sessions interleaved, each a connect, sysbench-like
// statements and a quit, for conversion benchmarks.
func GenerateLog(w io.Writer, format string, size int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	start := time.Date(2024, 11, 22, 22, 0, 0, 0, time.UTC)
	const sessions = 64
	stmts := []string{
		"SELECT c FROM sbtest1 WHERE id=%d",
		"SELECT c FROM sbtest1 WHERE id BETWEEN %d AND 5099",
		"UPDATE sbtest1 SET k=k+1 WHERE id=%d",
		"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN %d AND 5099",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (%d, 4991, '68487932199-96439406143-93774651418-41631865787', '22195207048-70116052123')",
	}
	gen := make([]int, sessions)
	for i := int64(0); cw.n < size; i++ {
		s := int(i % sessions)
		at := start.Add(time.Duration(i) * 37 * time.Microsecond)
		step := int(i/sessions) % 50
		id := fmt.Sprint(1000 + s)
		sess := fmt.Sprintf("6740f1a1.%x", s*100+gen[s])
		var err error
		switch format {
		case "mysql-general":
			ts := at.Format("2006-01-02T15:04:05.000000Z")
			switch step {
			case 0:
				_, err = fmt.Fprintf(cw, "%s\t%6s Connect\tsbtest@localhost on sbtest using Socket\n", ts, id)
			case 49:
				_, err = fmt.Fprintf(cw, "%s\t%6s Quit\t\n", ts, id)
			default:
				_, err = fmt.Fprintf(cw, "%s\t%6s Query\t"+stmts[step%len(stmts)]+"\n", ts, id, i)
			}
		case "mysql-slow":
			_, err = fmt.Fprintf(cw, "# Time: %s\n# User@Host: sbtest[sbtest] @ localhost []  Id: %s\n# Query_time: 0.000%03d  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: 1\nSET timestamp=%d;\n"+stmts[step%len(stmts)]+";\n",
				at.Format("2006-01-02T15:04:05.000000Z"), id, i%1000, at.Unix(), i)
		case "pg-csv":
			ts := at.Format("2006-01-02 15:04:05.000 UTC")
			msg := fmt.Sprintf("statement: "+stmts[step%len(stmts)], i)
			switch step {
			case 0:
				msg = "connection authorized: user=sbtest database=sbtest"
			case 49:
				msg = "disconnection: session time: 0:00:01.000 user=sbtest database=sbtest host=[local]"
				gen[s]++
			}
			_, err = fmt.Fprintf(cw, "%s,\"sbtest\",\"sbtest\",%s,\"[local]\",%s,%d,\"idle\",%s,3/%d,0,LOG,00000,\"%s\",,,,,,,,,\"psql\",client backend,,0\n",
				ts, id, sess, step, ts, i, msg)
		case "pg-stderr":
			ts := at.Format("2006-01-02 15:04:05.000 UTC")
			msg := fmt.Sprintf("statement: "+stmts[step%len(stmts)], i)
			switch step {
			case 0:
				_, err = fmt.Fprintf(cw, "%s [%s] [unknown]@[unknown] LOG:  connection received: host=[local]\n", ts, id)
				msg = "connection authorized: user=sbtest database=sbtest"
			case 49:
				msg = "disconnection: session time: 0:00:01.000 user=sbtest database=sbtest host=[local]"
			}
			if err == nil {
				_, err = fmt.Fprintf(cw, "%s [%s] sbtest@sbtest LOG:  %s\n", ts, id, msg)
			}
		default:
			return fmt.Errorf("unknown format %q", format)
		}
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
