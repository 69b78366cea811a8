package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dbarena/dbarena/internal/flavor"
)

// Limits implements flavor.Server: connections, less the reserved
// ones unless the user is a superuser.
func (Dialect) Limits(ctx context.Context, conn *sql.Conn, need flavor.Demand, others func(connected int64) int64) ([]flavor.Limit, error) {
	var maxConns, reserved, connected int64
	var super bool
	err := conn.QueryRowContext(ctx, `SELECT current_setting('max_connections')::bigint,
		current_setting('superuser_reserved_connections')::bigint
		  + coalesce(current_setting('reserved_connections', true), '0')::bigint,
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),
		(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)`).Scan(&maxConns, &reserved, &connected, &super)
	if err != nil {
		return nil, fmt.Errorf("read connection limits: %w", err)
	}
	if super {
		reserved = 0 // a superuser may use the reserved slots
	}
	conns := int64(need.Connections) + int64(need.Extra) + others(connected) + reserved
	return []flavor.Limit{{Setting: "max_connections", Have: maxConns, Need: conns}}, nil
}
