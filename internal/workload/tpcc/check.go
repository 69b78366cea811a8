package tpcc

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dbarena/dbarena/internal/workload"
)

// condition is one consistency condition of clause 3.3.2: a query that
// returns the offending rows (at most a few), described by its columns.
type condition struct {
	n    int
	desc string
	// query returns one row per violation: the identifying columns first.
	query string
	// fresh marks conditions that hold only right after the load.
	fresh bool
}

// conditions are the consistency conditions of clause 3.3.2 that apply to
// dbarena's Delivery (one transaction for the ten districts).
var conditions = []condition{
	{n: 1, desc: "W_YTD = sum(D_YTD)", query: `SELECT w_id, w_ytd, s FROM warehouse
		JOIN (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) d ON d.d_w_id = w_id
		WHERE w_ytd <> s`},
	{n: 2, desc: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", query: `SELECT d_w_id, d_id, d_next_o_id, mo, mno FROM district
		LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS mo FROM orders GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d_w_id AND o.o_d_id = d_id
		LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS mno FROM new_orders GROUP BY no_w_id, no_d_id) n ON n.no_w_id = d_w_id AND n.no_d_id = d_id
		WHERE d_next_o_id - 1 <> mo OR (mno IS NOT NULL AND d_next_o_id - 1 <> mno) OR mo IS NULL`},
	{n: 3, desc: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER", query: `SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_orders
		GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)`},
	{n: 4, desc: "sum(O_OL_CNT) = rows in ORDER-LINE", query: `SELECT o.w, o.d, o.s, l.c FROM
		(SELECT o_w_id AS w, o_d_id AS d, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o
		LEFT JOIN (SELECT ol_w_id AS w, ol_d_id AS d, COUNT(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) l ON l.w = o.w AND l.d = o.d
		WHERE l.c IS NULL OR o.s <> l.c`},
	{n: 5, desc: "O_CARRIER_ID is null iff a NEW-ORDER row exists", query: `SELECT o_w_id, o_d_id, o_id, o_carrier_id FROM orders
		LEFT JOIN new_orders ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
		WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)`},
	// Conditions 6, 10 and 12 join or group rows, never a derived table
	// with another table: MySQL before 5.6.3 cannot index a derived table,
	// and such a join takes minutes there at one warehouse.
	{n: 6, desc: "O_OL_CNT = ORDER-LINE rows of the order", query: `SELECT o_w_id, o_d_id, o_id, o_ol_cnt, COUNT(ol_o_id) AS c FROM orders
		LEFT JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
		GROUP BY o_w_id, o_d_id, o_id, o_ol_cnt
		HAVING COUNT(ol_o_id) = 0 OR o_ol_cnt <> COUNT(ol_o_id)`},
	{n: 7, desc: "OL_DELIVERY_D is null iff O_CARRIER_ID is null", query: `SELECT ol_w_id, ol_d_id, ol_o_id, ol_number FROM order_line
		JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
		WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)`},
	{n: 8, desc: "W_YTD = sum(H_AMOUNT)", query: `SELECT w_id, w_ytd, s FROM warehouse
		LEFT JOIN (SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h ON h.h_w_id = w_id
		WHERE s IS NULL OR w_ytd <> s`},
	{n: 9, desc: "D_YTD = sum(H_AMOUNT)", query: `SELECT d_w_id, d_id, d_ytd, s FROM district
		LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id, h_d_id) h ON h.h_w_id = d_w_id AND h.h_d_id = d_id
		WHERE s IS NULL OR d_ytd <> s`},
	{n: 10, desc: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)", query: `SELECT c_w_id, c_d_id, c_id, SUM(x) AS off_by FROM (
		SELECT c_w_id, c_d_id, c_id, -c_balance AS x FROM customer
		UNION ALL SELECT o_w_id, o_d_id, o_c_id, ol_amount FROM orders
			JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			WHERE ol_delivery_d IS NOT NULL
		UNION ALL SELECT h_c_w_id, h_c_d_id, h_c_id, -h_amount FROM history) u
		GROUP BY c_w_id, c_d_id, c_id HAVING SUM(x) <> 0`},
	{n: 11, fresh: true, desc: "rows in ORDER - rows in NEW-ORDER = 2100 (after the load)", query: `SELECT o.w, o.d, o.c, n.c FROM
		(SELECT o_w_id AS w, o_d_id AS d, COUNT(*) AS c FROM orders GROUP BY o_w_id, o_d_id) o
		LEFT JOIN (SELECT no_w_id AS w, no_d_id AS d, COUNT(*) AS c FROM new_orders GROUP BY no_w_id, no_d_id) n ON n.w = o.w AND n.d = o.d
		WHERE o.c - COALESCE(n.c, 0) <> 2100`},
	{n: 12, desc: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)", query: `SELECT c_w_id, c_d_id, c_id, SUM(x) AS off_by FROM (
		SELECT c_w_id, c_d_id, c_id, -(c_balance + c_ytd_payment) AS x FROM customer
		UNION ALL SELECT o_w_id, o_d_id, o_c_id, ol_amount FROM orders
			JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			WHERE ol_delivery_d IS NOT NULL) u
		GROUP BY c_w_id, c_d_id, c_id HAVING SUM(x) <> 0`},
}

// checkLimit caps the violations listed per condition.
const checkLimit = 5

// Check implements workload.Checker: the consistency conditions of clause
// 3.3.2, one line each with the offending warehouse/district (and order or
// customer) when one fails. Condition 11 holds only until the first
// New-Order or Delivery, so it is checked on a freshly loaded database only.
func (wl *Workload) Check(ctx context.Context, env workload.Env, out io.Writer) (bool, error) {
	if ok, err := tableExists(ctx, env, env.DB, "warehouse"); err != nil {
		return false, err
	} else if !ok {
		return false, errNotPrepared
	}
	var moved int
	if err := env.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM district WHERE d_next_o_id <> 3001`).Scan(&moved); err != nil {
		return false, err
	}
	var delivered int
	if err := env.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM customer WHERE c_delivery_cnt <> 0`).Scan(&delivered); err != nil {
		return false, err
	}
	fresh := moved == 0 && delivered == 0
	allOK := true
	for _, c := range conditions {
		if c.fresh && !fresh {
			fmt.Fprintf(out, "[--] 3.3.2.%-2d %s: not applicable after a run\n", c.n, c.desc)
			continue
		}
		bad, err := violations(ctx, env, c.query)
		if err != nil {
			return false, fmt.Errorf("consistency condition %d: %w", c.n, err)
		}
		if len(bad) == 0 {
			fmt.Fprintf(out, "[OK] 3.3.2.%-2d %s\n", c.n, c.desc)
			continue
		}
		allOK = false
		more := ""
		if len(bad) > checkLimit {
			bad, more = bad[:checkLimit], " ..."
		}
		fmt.Fprintf(out, "[NG] 3.3.2.%-2d %s: fails at %s%s\n", c.n, c.desc, strings.Join(bad, "; "), more)
	}
	return allOK, nil
}

// violations returns up to checkLimit+1 offending rows, as "w=.. d=.. ...".
func violations(ctx context.Context, env workload.Env, q string) ([]string, error) {
	rows, err := env.DB.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() && len(out) <= checkLimit {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			if v == nil {
				v = "NULL"
			}
			parts[i] = fmt.Sprintf("%s=%v", cols[i], v)
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out, rows.Err()
}
