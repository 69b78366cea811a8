package dumpload

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// ServerEngines lists the storage engines a MySQL-family server can use
// (information_schema.ENGINES with SUPPORT YES or DEFAULT).
func ServerEngines(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT ENGINE FROM information_schema.ENGINES WHERE SUPPORT IN ('YES', 'DEFAULT')")
	if err != nil {
		return nil, fmt.Errorf("list engines: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	sort.Strings(out)
	return out, rows.Err()
}

// MissingEngine returns the first of want the server lacks (compared
// without case), or "".
func MissingEngine(have, want []string) string {
	for _, w := range want {
		found := false
		for _, h := range have {
			if strings.EqualFold(h, w) {
				found = true
				break
			}
		}
		if !found {
			return w
		}
	}
	return ""
}
