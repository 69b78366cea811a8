package live

import (
	"context"
	"io"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/capture/convert"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// ConvertGeneralTable writes the events of a MySQL-family server's
// mysql.general_log table (capture convert --from mysql-general-table)
// that f keeps to w as a capture file.
func ConvertGeneralTable(ctx context.Context, t target.Target, f capture.Filter, w io.Writer) (convert.Result, error) {
	var res convert.Result
	db, err := dialect.MySQLDialect{}.Open(t, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return res, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	since := ""
	if !f.Since.IsZero() {
		since = f.Since.UTC().Format("2006-01-02 15:04:05.999999")
		conn.ExecContext(ctx, "SET time_zone = '+00:00'")
	}
	c := convert.NewCollector(f, &res.Stats)
	in := &capture.Input{Name: "mysql.general_log", Stats: &res.Stats}
	if err := ReadGeneralTable(ctx, conn, since, in, c.Add); err != nil {
		return res, err
	}
	h, err := c.Write(w, capture.Header{Flavor: "mysql", Source: convert.MySQLGeneralTable})
	res.Header, res.Events = h, int64(c.Len())
	return res, err
}
