package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/workload"
)

// ShapeProcedures runs each transaction as one call of a stored routine,
// as HammerDB does: MariaDB/MySQL procedures (CALL, the transaction begun
// and committed inside) and PostgreSQL functions (SELECT f(...), one
// statement in autocommit). The inputs are drawn by the terminal as in the
// other shapes (NURand items and customers, remote lines and payments)
// and passed as arguments, so that the work is the same; the routines,
// named dbarena_tpcc_*, are created when the run starts and dropped by
// cleanup.
const ShapeProcedures = "procedures"

// procNames are the routines of the procedures shape.
var procNames = []string{"dbarena_tpcc_neword", "dbarena_tpcc_payment", "dbarena_tpcc_ostat",
	"dbarena_tpcc_delivery", "dbarena_tpcc_slev"}

// procStmts are the calls of the procedures shape.
type procStmts struct {
	newOrder, payment, orderStatus, delivery, stockLevel stmt
}

// procDefs are the calls of the procedures shape.
func procDefs(s *stmts, pg bool) []stmtDef {
	p := &s.proc
	if pg {
		return []stmtDef{
			{&p.newOrder, "SELECT dbarena_tpcc_neword(?, ?, ?, ?, ?, ?::int[], ?::int[], ?::int[], ?::timestamp)"},
			{&p.payment, "SELECT dbarena_tpcc_payment(?, ?, ?, ?, ?, ?, ?, ?::numeric, ?::timestamp)"},
			{&p.orderStatus, "SELECT dbarena_tpcc_ostat(?, ?, ?, ?, ?)"},
			{&p.delivery, "SELECT dbarena_tpcc_delivery(?, ?, ?::timestamp)"},
			{&p.stockLevel, "SELECT dbarena_tpcc_slev(?, ?, ?)"},
		}
	}
	return []stmtDef{
		{&p.newOrder, "CALL dbarena_tpcc_neword(?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		{&p.payment, "CALL dbarena_tpcc_payment(?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		{&p.orderStatus, "CALL dbarena_tpcc_ostat(?, ?, ?, ?, ?)"},
		{&p.delivery, "CALL dbarena_tpcc_delivery(?, ?, ?)"},
		{&p.stockLevel, "CALL dbarena_tpcc_slev(?, ?, ?)"},
	}
}

// distCase picks S_DIST_xx of district dcol.
func distCase(dcol string) string {
	var b strings.Builder
	b.WriteString("CASE " + dcol)
	for d := 1; d <= nDist; d++ {
		fmt.Fprintf(&b, " WHEN %d THEN s_dist_%02d", d, d)
	}
	b.WriteString(" END")
	return b.String()
}

// mysqlProcs are the MySQL-family procedures. Local variables shadow
// columns in MySQL routines: every one is named p_ or v_.
func mysqlProcs() []string {
	return []string{`CREATE PROCEDURE dbarena_tpcc_neword(p_w INT, p_d INT, p_c INT, p_cnt INT, p_all_local INT,
  p_items VARCHAR(255), p_supws VARCHAR(255), p_qtys VARCHAR(255), p_entry DATETIME)
body: BEGIN
  DECLARE v_i INT DEFAULT 1;
  DECLARE v_notfound INT DEFAULT 0;
  DECLARE v_iid, v_sw, v_q, v_sq, v_o INT;
  DECLARE v_disc, v_wtax, v_dtax DECIMAL(12,4);
  DECLARE v_clast VARCHAR(16);
  DECLARE v_credit CHAR(2);
  DECLARE v_price DECIMAL(5,2);
  DECLARE v_iname VARCHAR(24);
  DECLARE v_idata, v_sdata VARCHAR(50);
  DECLARE v_dist CHAR(24);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_notfound = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT c_discount, c_last, c_credit, w_tax INTO v_disc, v_clast, v_credit, v_wtax
    FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
  SELECT d_next_o_id, d_tax INTO v_o, v_dtax FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_next_o_id = v_o + 1 WHERE d_w_id = p_w AND d_id = p_d;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
    VALUES (v_o, p_d, p_w, p_c, p_entry, p_cnt, p_all_local);
  INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
  WHILE v_i <= p_cnt DO
    SET v_iid = SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_i), ',', -1);
    SET v_sw = SUBSTRING_INDEX(SUBSTRING_INDEX(p_supws, ',', v_i), ',', -1);
    SET v_q = SUBSTRING_INDEX(SUBSTRING_INDEX(p_qtys, ',', v_i), ',', -1);
    SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM item WHERE i_id = v_iid;
    IF v_notfound THEN
      ROLLBACK;
      LEAVE body;
    END IF;
    SELECT s_quantity, s_data, ` + distCase("p_d") + ` INTO v_sq, v_sdata, v_dist
      FROM stock WHERE s_i_id = v_iid AND s_w_id = v_sw FOR UPDATE;
    IF v_sq >= v_q + 10 THEN SET v_sq = v_sq - v_q; ELSE SET v_sq = v_sq - v_q + 91; END IF;
    UPDATE stock SET s_quantity = v_sq, s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + IF(v_sw <> p_w, 1, 0) WHERE s_i_id = v_iid AND s_w_id = v_sw;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o, p_d, p_w, v_i, v_iid, v_sw, v_q, v_q * v_price, v_dist);
    SET v_i = v_i + 1;
  END WHILE;
  COMMIT;
END`,
		`CREATE PROCEDURE dbarena_tpcc_payment(p_w INT, p_d INT, p_cw INT, p_cd INT, p_c INT, p_byname INT,
  p_clast VARCHAR(16), p_amount DECIMAL(6,2), p_now DATETIME)
BEGIN
  DECLARE v_n, v_c INT;
  DECLARE v_wname, v_dname VARCHAR(10);
  DECLARE v_waddr, v_daddr VARCHAR(100);
  DECLARE v_cust VARCHAR(200);
  DECLARE v_credit CHAR(2);
  DECLARE v_data VARCHAR(500);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET v_c = p_c;
  START TRANSACTION;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  SELECT CONCAT(w_street_1, w_street_2, w_city, w_state, w_zip), w_name INTO v_waddr, v_wname FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  SELECT CONCAT(d_street_1, d_street_2, d_city, d_state, d_zip), d_name INTO v_daddr, v_dname
    FROM district WHERE d_w_id = p_w AND d_id = p_d;
  IF p_byname THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_clast;
    SET v_n = (v_n + 1) DIV 2 - 1;
    SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_clast
      ORDER BY c_first LIMIT v_n, 1;
  END IF;
  SELECT CONCAT(c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
      c_credit_lim, c_discount, c_balance, c_since), c_credit INTO v_cust, v_credit
    FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c FOR UPDATE;
  IF v_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    SET v_data = LEFT(CONCAT(v_c, ' ', p_cd, ' ', p_cw, ' ', p_d, ' ', p_w, ' ', p_amount, ' | ', v_data), 500);
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
      c_payment_cnt = c_payment_cnt + 1, c_data = v_data WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
      c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  END IF;
  INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (p_cd, p_cw, v_c, p_d, p_w, p_now, p_amount, CONCAT(v_wname, '    ', v_dname));
  COMMIT;
END`,
		`CREATE PROCEDURE dbarena_tpcc_ostat(p_w INT, p_d INT, p_c INT, p_byname INT, p_clast VARCHAR(16))
BEGIN
  DECLARE v_n, v_c, v_o, v_carrier, v_lines INT;
  DECLARE v_bal, v_sum DECIMAL(12,2);
  DECLARE v_name VARCHAR(60);
  DECLARE v_entry, v_deliv DATETIME;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET v_c = p_c;
  START TRANSACTION;
  IF p_byname THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_clast;
    SET v_n = (v_n + 1) DIV 2 - 1;
    SELECT c_id, c_balance, CONCAT(c_first, c_middle, c_last) INTO v_c, v_bal, v_name
      FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_clast ORDER BY c_first LIMIT v_n, 1;
  ELSE
    SELECT c_balance, CONCAT(c_first, c_middle, c_last) INTO v_bal, v_name
      FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  END IF;
  SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier
    FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
  SELECT COUNT(*), SUM(ol_amount), MAX(ol_delivery_d) INTO v_lines, v_sum, v_deliv
    FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  COMMIT;
END`,
		`CREATE PROCEDURE dbarena_tpcc_delivery(p_w INT, p_carrier INT, p_now DATETIME)
BEGIN
  DECLARE v_d INT DEFAULT 1;
  DECLARE v_notfound INT DEFAULT 0;
  DECLARE v_o, v_c INT;
  DECLARE v_amount DECIMAL(12,2);
  DECLARE v_delivered INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_notfound = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  WHILE v_d <= 10 DO
    SET v_notfound = 0;
    SELECT no_o_id INTO v_o FROM new_orders WHERE no_w_id = p_w AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_notfound = 0 THEN
      DELETE FROM new_orders WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
      SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE order_line SET ol_delivery_d = p_now WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      SELECT SUM(ol_amount) INTO v_amount FROM order_line WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
      SET v_delivered = v_delivered + 1;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
  SELECT v_delivered;
END`,
		`CREATE PROCEDURE dbarena_tpcc_slev(p_w INT, p_d INT, p_threshold INT)
BEGIN
  DECLARE v_next, v_n INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT COUNT(DISTINCT s_i_id) INTO v_n FROM order_line, stock
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
      AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  COMMIT;
END`}
}

// pgProcs are the PostgreSQL functions. A function cannot roll its own
// writes back without an exception block (a subtransaction per call), so
// New-Order looks for an unused item number before it writes: the
// transaction then ends without effect, as a rollback would.
func pgProcs() []string {
	return []string{`CREATE OR REPLACE FUNCTION dbarena_tpcc_neword(p_w int, p_d int, p_c int, p_cnt int, p_all_local int,
  p_items int[], p_supws int[], p_qtys int[], p_entry timestamp) RETURNS int AS $$
DECLARE
  v_disc numeric; v_clast text; v_credit text; v_wtax numeric; v_dtax numeric; v_o int;
  v_price numeric; v_iname text; v_idata text; v_sq int; v_sdata text; v_dist text;
  v_iid int; v_sw int; v_q int;
BEGIN
  IF (SELECT COUNT(*) FROM item WHERE i_id = ANY(p_items)) < (SELECT COUNT(DISTINCT x) FROM unnest(p_items) x) THEN
    RETURN 0;
  END IF;
  SELECT c_discount, c_last, c_credit, w_tax INTO v_disc, v_clast, v_credit, v_wtax
    FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
  SELECT d_next_o_id, d_tax INTO v_o, v_dtax FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_next_o_id = v_o + 1 WHERE d_w_id = p_w AND d_id = p_d;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
    VALUES (v_o, p_d, p_w, p_c, p_entry, p_cnt, p_all_local);
  INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
  FOR i IN 1..p_cnt LOOP
    v_iid := p_items[i]; v_sw := p_supws[i]; v_q := p_qtys[i];
    SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM item WHERE i_id = v_iid;
    SELECT s_quantity, s_data, ` + distCase("p_d") + ` INTO v_sq, v_sdata, v_dist
      FROM stock WHERE s_i_id = v_iid AND s_w_id = v_sw FOR UPDATE;
    IF v_sq >= v_q + 10 THEN v_sq := v_sq - v_q; ELSE v_sq := v_sq - v_q + 91; END IF;
    UPDATE stock SET s_quantity = v_sq, s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN v_sw <> p_w THEN 1 ELSE 0 END WHERE s_i_id = v_iid AND s_w_id = v_sw;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o, p_d, p_w, i, v_iid, v_sw, v_q, v_q * v_price, v_dist);
  END LOOP;
  RETURN 1;
END $$ LANGUAGE plpgsql`,
		`CREATE OR REPLACE FUNCTION dbarena_tpcc_payment(p_w int, p_d int, p_cw int, p_cd int, p_c int, p_byname int,
  p_clast text, p_amount numeric, p_now timestamp) RETURNS int AS $$
DECLARE
  v_n int; v_c int := p_c; v_wname text; v_dname text; v_waddr text; v_daddr text; v_cust text;
  v_credit text; v_data text;
BEGIN
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  SELECT concat(w_street_1, w_street_2, w_city, w_state, w_zip), w_name INTO v_waddr, v_wname FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  SELECT concat(d_street_1, d_street_2, d_city, d_state, d_zip), d_name INTO v_daddr, v_dname
    FROM district WHERE d_w_id = p_w AND d_id = p_d;
  IF p_byname = 1 THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_clast;
    SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_clast
      ORDER BY c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  END IF;
  SELECT concat(c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
      c_credit_lim, c_discount, c_balance, c_since), c_credit INTO v_cust, v_credit
    FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c FOR UPDATE;
  IF v_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    v_data := left(concat(v_c, ' ', p_cd, ' ', p_cw, ' ', p_d, ' ', p_w, ' ', p_amount, ' | ', v_data), 500);
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
      c_payment_cnt = c_payment_cnt + 1, c_data = v_data WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
      c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  END IF;
  INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (p_cd, p_cw, v_c, p_d, p_w, p_now, p_amount, v_wname || '    ' || v_dname);
  RETURN 1;
END $$ LANGUAGE plpgsql`,
		`CREATE OR REPLACE FUNCTION dbarena_tpcc_ostat(p_w int, p_d int, p_c int, p_byname int, p_clast text) RETURNS int AS $$
DECLARE
  v_n int; v_c int := p_c; v_o int; v_carrier int; v_lines int; v_bal numeric; v_sum numeric;
  v_name text; v_entry timestamp; v_deliv timestamp;
BEGIN
  IF p_byname = 1 THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_clast;
    SELECT c_id, c_balance, concat(c_first, c_middle, c_last) INTO v_c, v_bal, v_name
      FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_clast ORDER BY c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  ELSE
    SELECT c_balance, concat(c_first, c_middle, c_last) INTO v_bal, v_name
      FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  END IF;
  SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier
    FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
  SELECT COUNT(*), SUM(ol_amount), MAX(ol_delivery_d) INTO v_lines, v_sum, v_deliv
    FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  RETURN v_lines;
END $$ LANGUAGE plpgsql`,
		`CREATE OR REPLACE FUNCTION dbarena_tpcc_delivery(p_w int, p_carrier int, p_now timestamp) RETURNS int AS $$
DECLARE
  v_o int; v_c int; v_amount numeric; v_delivered int := 0;
BEGIN
  FOR v_d IN 1..10 LOOP
    SELECT no_o_id INTO v_o FROM new_orders WHERE no_w_id = p_w AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF FOUND THEN
      DELETE FROM new_orders WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
      SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE order_line SET ol_delivery_d = p_now WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      SELECT SUM(ol_amount) INTO v_amount FROM order_line WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
      v_delivered := v_delivered + 1;
    END IF;
  END LOOP;
  RETURN v_delivered;
END $$ LANGUAGE plpgsql`,
		`CREATE OR REPLACE FUNCTION dbarena_tpcc_slev(p_w int, p_d int, p_threshold int) RETURNS int AS $$
DECLARE
  v_next int; v_n int;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT COUNT(DISTINCT s_i_id) INTO v_n FROM order_line, stock
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
      AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  RETURN v_n;
END $$ LANGUAGE plpgsql`}
}

// createProcs (re)creates the routines of the procedures shape on conn.
func createProcs(ctx context.Context, env workload.Env, conn *sql.Conn) error {
	if pgSQL(env.Dialect) {
		for _, q := range pgProcs() {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("create the procedures shape's functions: %w", err)
			}
		}
		return nil
	}
	if err := dropProcs(ctx, env, conn); err != nil {
		return err
	}
	for _, q := range mysqlProcs() {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create the procedures shape's procedures: %w", err)
		}
	}
	return nil
}

// execer is a *sql.DB or a *sql.Conn.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// dropProcs drops the routines of the procedures shape, if there.
func dropProcs(ctx context.Context, env workload.Env, db execer) error {
	for _, n := range procNames {
		q := "DROP " + env.Dialect.Routine() + " IF EXISTS " + n
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("drop %s: %w", n, err)
		}
	}
	return nil
}

// procCall runs one call: a PostgreSQL function's result is read into n,
// a MariaDB procedure is executed.
func (w *worker) procCall(ctx context.Context, ev *workload.Event, st stmt, n *int, args ...any) error {
	if !w.pg {
		return w.exec(ctx, ev, st, args...)
	}
	return w.row(ctx, ev, st, func(r row) error {
		if r.IsNull(0) {
			*n = 0
			return nil
		}
		c := cols{r: r}
		*n = c.int(0)
		return c.err
	}, args...)
}

// list writes ints as a PostgreSQL array or a comma list.
func (w *worker) list(get func(orderItem) int) string {
	b := w.buf[:0]
	if w.pg {
		b = append(b, '{')
	}
	for i, it := range w.items {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(get(it)), 10)
	}
	if w.pg {
		b = append(b, '}')
	}
	w.buf = b
	return string(b)
}

// procNewOrder is New-Order as one call.
func (w *worker) procNewOrder(ctx context.Context, ev *workload.Event) error {
	dID, cID, olCnt, allLocal := w.newOrderInput()
	items := w.list(func(it orderItem) int { return it.iid })
	supws := w.list(func(it orderItem) int { return it.supplyW })
	qtys := w.list(func(it orderItem) int { return it.qty })
	var n int
	return w.procCall(ctx, ev, w.st.proc.newOrder, &n, w.w, dID, cID, olCnt, allLocal, items, supws, qtys, nowSecond())
}

// procPayment is Payment as one call.
func (w *worker) procPayment(ctx context.Context, ev *workload.Event) error {
	dID := w.r.between(1, nDist)
	cW, cD := w.w, dID
	if w.r.between(1, 100) > 85 {
		cD = w.r.between(1, nDist)
		cW = w.otherWarehouse()
	}
	named, cLast, cID := w.pickCustomer()
	byName := 0 // the routines take 1 for by name
	if named {
		byName = 1
	}
	amount := decimal(int64(w.r.between(100, 500000)))
	var n int
	return w.procCall(ctx, ev, w.st.proc.payment, &n, w.w, dID, cW, cD, cID, byName, cLast, amount, nowSecond())
}

// procOrderStatus is Order-Status as one call.
func (w *worker) procOrderStatus(ctx context.Context, ev *workload.Event) error {
	dID := w.r.between(1, nDist)
	named, cLast, cID := w.pickCustomer()
	byName := 0 // the routines take 1 for by name
	if named {
		byName = 1
	}
	var n int
	return w.procCall(ctx, ev, w.st.proc.orderStatus, &n, w.w, dID, cID, byName, cLast)
}

// procDelivery is Delivery as one call, which returns the districts it
// delivered (MariaDB's procedure as a result set after its commit).
func (w *worker) procDelivery(ctx context.Context, ev *workload.Event) error {
	carrier := w.r.between(1, 10)
	var n int
	if err := w.row(ctx, ev, w.st.proc.delivery, func(r row) error {
		c := cols{r: r}
		n = c.int(0)
		return c.err
	}, w.w, carrier, nowSecond()); err != nil {
		return err
	}
	w.wl.delivery.delivered.Add(int64(n))
	w.wl.delivery.skipped.Add(int64(nDist - n))
	return nil
}

// procStockLevel is Stock-Level as one call.
func (w *worker) procStockLevel(ctx context.Context, ev *workload.Event) error {
	threshold := w.r.between(10, 20)
	var n int
	return w.procCall(ctx, ev, w.st.proc.stockLevel, &n, w.w, w.slDistrict, threshold)
}

// procEvent runs the current card's transaction as one call.
func (w *worker) procEvent(ctx context.Context, ev *workload.Event) error {
	switch w.cur {
	case 0:
		return w.procNewOrder(ctx, ev)
	case 1:
		return w.procPayment(ctx, ev)
	case 2:
		return w.procOrderStatus(ctx, ev)
	case 3:
		return w.procDelivery(ctx, ev)
	}
	return w.procStockLevel(ctx, ev)
}
