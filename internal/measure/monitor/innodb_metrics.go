package monitor

import (
	"context"
	"database/sql"
	"strings"
)

// innodbMetrics reads the enabled metrics of InnoDB's
// information_schema.INNODB_METRICS (MySQL 5.6+, MariaDB 10.0+) beside
// SHOW GLOBAL STATUS: those of TYPE counter as rates
// (counter.innodb_metrics.NAME), those of TYPE value as levels
// (gauge.innodb_metrics.NAME). status_counter rows repeat SHOW GLOBAL
// STATUS and set_owner/set_member rows group others; both are left out.
// Which metrics are enabled is the server's choice (innodb_monitor_enable).
type innodbMetrics struct {
	query string // empty until the table's columns are known
	off   bool   // the server has no such table, or the account may not read it
}

// read adds the enabled metrics to counters and gauges; a server without
// the table (MySQL 5.5) or an account without PROCESS is read once and
// then left alone.
func (m *innodbMetrics) read(ctx context.Context, db *sql.DB, counters, gauges map[string]float64) {
	if m.off {
		return
	}
	if m.query == "" {
		m.query = innodbMetricsQuery(ctx, db)
		if m.query == "" {
			m.off = true
			return
		}
	}
	rows, err := db.QueryContext(ctx, m.query)
	if err != nil {
		m.off = true
		return
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		var count float64
		if err := rows.Scan(&name, &typ, &count); err != nil {
			return
		}
		key := "innodb_metrics." + strings.ToLower(name)
		if typ == "value" {
			gauges[key] = count
		} else {
			counters[key] = count
		}
	}
}

// innodbMetricsQuery is the query of the enabled counter and value rows:
// MySQL marks them STATUS = 'enabled', MariaDB 10.5 and later ENABLED = 1.
// It is empty when the table cannot be read.
func innodbMetricsQuery(ctx context.Context, db *sql.DB) string {
	rows, err := db.QueryContext(ctx, "SELECT * FROM information_schema.INNODB_METRICS WHERE 1 = 0")
	if err != nil {
		return ""
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil {
		return ""
	}
	enabled := ""
	for _, c := range cols {
		switch strings.ToUpper(c) {
		case "ENABLED":
			enabled = "ENABLED = 1"
		case "STATUS":
			enabled = "STATUS = 'enabled'"
		}
	}
	if enabled == "" {
		return ""
	}
	return "SELECT NAME, TYPE, COUNT FROM information_schema.INNODB_METRICS WHERE " + enabled +
		" AND TYPE IN ('counter', 'value')"
}
