package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

// Order lines of a New-Order (clause 2.4.1.3).
const (
	minLines = 5
	maxLines = 15
)

// stmts are a terminal's prepared statements.
type stmts struct {
	all []stmt

	// New-Order
	noCustomer, noDistrict, noDistrictUpd, noOrder, noNewOrder, noItems, noStock, noStockUpd stmt
	// noLines[n] inserts n order lines, prepared on first use.
	noLines [maxLines + 1]stmt
	x       executor
	texts   *texts
	// Payment and Order-Status: the customer by last name.
	byName stmt
	// Payment
	payWarehouseUpd, payWarehouse, payDistrictUpd, payDistrict, payCustomer, payCustomerData,
	payCustomerUpd, payCustomerUpdBC, payHistory stmt
	// Order-Status
	osCustomer, osOrder, osLines stmt
	// Delivery
	dlNewOrder, dlDelete, dlOrders, dlOrderUpd, dlLinesUpd, dlSums, dlCustomerUpd stmt
	// Stock-Level
	slDistrict, slCount stmt
	// row holds tpcc-mysql's statements that the batched shape has no
	// counterpart for (rowshape.go); proc the calls of the procedures
	// shape (procs.go).
	row  rowStmts
	proc procStmts
}

// stmtDef is one statement prepared when a terminal starts.
type stmtDef struct {
	dst *stmt
	sql string
}

// stmtDefs lists the statements every terminal of shape prepares, with
// '?' placeholders, bound to the fields of s.
func stmtDefs(s *stmts, pg bool, shape string) []stmtDef {
	switch shape {
	case ShapeTpccMySQL:
		return rowDefs(s)
	case ShapeProcedures:
		return procDefs(s, pg)
	}
	return batchedDefs(s, pg)
}

// batchedDefs are the statements of the batched shape.
func batchedDefs(s *stmts, pg bool) []stmtDef {
	return []stmtDef{
		// New-Order (clause 2.4.2.2)
		{&s.noCustomer, "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"},
		{&s.noDistrict, "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE"},
		{&s.noDistrictUpd, "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?"},
		{&s.noOrder, "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, ?, ?)"},
		{&s.noNewOrder, "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"},
		// Items and stock are read maxLines at a time, the list padded with
		// repeats of its last id, so that one statement serves every order.
		{&s.noItems, "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (" + placeholders(maxLines) + ")"},
		{&s.noStock, "SELECT s_i_id, s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_w_id = ? AND s_i_id IN (" + placeholders(maxLines) + ") FOR UPDATE"},
		{&s.noStockUpd, stockUpdateSQL(pg)},
		// Payment (clause 2.5.2.2) and Order-Status (clause 2.6.2.2)
		{&s.byName, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"},
		// Payment (clause 2.5.2.2)
		{&s.payWarehouseUpd, "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"},
		{&s.payWarehouse, "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?"},
		{&s.payDistrictUpd, "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"},
		{&s.payDistrict, "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?"},
		{&s.payCustomer, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"},
		{&s.payCustomerData, "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&s.payCustomerUpd, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&s.payCustomerUpdBC, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&s.payHistory, "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"},
		// Order-Status (clause 2.6.2.2)
		{&s.osCustomer, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&s.osOrder, "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1"},
		{&s.osLines, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"},
		// Delivery (clause 2.7.4.2)
		{&s.dlNewOrder, "SELECT no_o_id FROM new_orders WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE"},
		{&s.dlDelete, "DELETE FROM new_orders WHERE no_w_id = ? AND " + pairList("no_d_id", "no_o_id")},
		{&s.dlOrderUpd, "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND " + pairList("o_d_id", "o_id")},
		{&s.dlLinesUpd, "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND " + pairList("ol_d_id", "ol_o_id")},
		{&s.dlOrders, "SELECT o_d_id, o_c_id FROM orders WHERE o_w_id = ? AND " + pairList("o_d_id", "o_id")},
		{&s.dlSums, "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND " + pairList("ol_d_id", "ol_o_id") + " GROUP BY ol_d_id"},
		{&s.dlCustomerUpd, "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		// Stock-Level (clause 2.8.2.2)
		{&s.slDistrict, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"},
		{&s.slCount, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"},
	}
}

// preparedPerTerminal is how many statements a terminal of shape holds
// prepared at most: those of stmtDefs and, batched, an order line insert
// per line count.
func preparedPerTerminal(shape string) int {
	n := len(stmtDefs(&stmts{}, false, shape))
	if shape == ShapeBatched {
		n += maxLines - minLines + 1
	}
	return n
}

// texts are the statements' texts in one dialect, made once per run and
// shared by every terminal (a terminal keeps no copy of its own).
type texts struct {
	shape string
	pg    bool
	fixed []string // in stmtDefs order
	lines [maxLines + 1]string
}

// pgSQL reports whether d's server takes the PostgreSQL port's statements
// and routines (pgProcs, stockUpdateSQL) rather than tpcc-mysql's: the
// workload's own SQL comes in one variant per protocol family.
func pgSQL(d dialect.Dialect) bool { return d.Family() == target.Postgres }

func newTexts(d dialect.Dialect, shape string) *texts {
	defs := stmtDefs(&stmts{}, pgSQL(d), shape)
	t := &texts{shape: shape, pg: pgSQL(d), fixed: make([]string, len(defs))}
	for i, def := range defs {
		t.fixed[i] = d.Rebind(def.sql)
	}
	for n := minLines; n <= maxLines; n++ {
		t.lines[n] = d.Rebind(linesSQL(n))
	}
	return t
}

// texts returns the run's statement texts for d.
func (wl *Workload) texts(d dialect.Dialect) *texts {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	f := d.Family()
	if wl.sqlTexts[f] == nil {
		if wl.sqlTexts == nil {
			wl.sqlTexts = map[target.Family]*texts{}
		}
		wl.sqlTexts[f] = newTexts(d, wl.cfg.Shape)
	}
	return wl.sqlTexts[f]
}

// prepareStmts prepares a terminal's statements on x's connection, in one
// round trip where x is a batchPreparer.
func prepareStmts(ctx context.Context, x executor, t *texts) (*stmts, error) {
	s := &stmts{x: x, texts: t}
	defs := stmtDefs(s, t.pg, t.shape)
	if bp, ok := x.(batchPreparer); ok {
		sts, err := bp.prepareAll(ctx, t.fixed)
		var pe *pgwire.PrepareError
		switch {
		case errors.As(err, &pe) && pe.Index < len(defs):
			return nil, fmt.Errorf("prepare %q: %w", defs[pe.Index].sql, pe.Err)
		case err != nil:
			return nil, fmt.Errorf("prepare: %w", err)
		}
		for i, def := range defs {
			*def.dst = sts[i]
		}
		s.all = append(s.all, sts...)
		return s, nil
	}
	for i, def := range defs {
		st, err := x.prepare(ctx, t.fixed[i])
		if err != nil {
			_ = s.close()
			return nil, fmt.Errorf("prepare %q: %w", def.sql, err)
		}
		*def.dst = st
		s.all = append(s.all, st)
	}
	return s, nil
}

func placeholders(n int) string { return strings.Repeat("?, ", n-1) + "?" }

// stockUpdateSQL updates the stock rows of up to maxLines items of one
// supplying warehouse (clause 2.4.2.2) in one statement: per item the new
// S_QUANTITY and what S_YTD, S_ORDER_CNT and S_REMOTE_CNT gain, as CASE
// lists of (S_I_ID, value) pairs. PostgreSQL needs the values' type.
func stockUpdateSQL(pg bool) string {
	then := " THEN ?"
	if pg {
		then = " THEN ?::integer"
	}
	cases := "CASE s_i_id" + strings.Repeat(" WHEN ?"+then, maxLines) + " END"
	return "UPDATE stock SET s_quantity = " + cases + ", s_ytd = s_ytd + " + cases +
		", s_order_cnt = s_order_cnt + " + cases + ", s_remote_cnt = s_remote_cnt + " + cases +
		" WHERE s_w_id = ? AND s_i_id IN (" + placeholders(maxLines) + ")"
}

// linesSQL inserts n order lines.
func linesSQL(n int) string {
	return "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES " +
		strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
}

// lines returns the statement inserting n order lines.
func (s *stmts) lines(ctx context.Context, n int) (stmt, error) {
	if st := s.noLines[n]; st != nil {
		return st, nil
	}
	if n < minLines || n > maxLines {
		return nil, fmt.Errorf("new-order: %d order lines, want %d..%d", n, minLines, maxLines)
	}
	st, err := s.x.prepare(ctx, s.texts.lines[n])
	if err != nil {
		return nil, err
	}
	s.noLines[n] = st
	s.all = append(s.all, st)
	return st, nil
}

func (s *stmts) close() error {
	var first error
	for _, st := range s.all {
		if err := st.close(); err != nil && first == nil {
			first = err
		}
	}
	s.all = nil
	return first
}
