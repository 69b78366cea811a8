package tpcc

import (
	"fmt"
	"strings"
	"time"
)

// Statement shapes (--shape): how the five transactions talk to the
// server. The data, the deck, the inputs and the report's figures are the
// same in every shape; what differs is the statements a transaction sends.
const (
	// ShapeTpccMySQL sends tpcc-mysql's statements (neword.c, payment.c,
	// ordstat.c, delivery.c, slev.c): one row at a time, about 36
	// statements per transaction over the 10/10/1/1/1 mix, Delivery
	// committing district by district, Stock-Level counting the stock of
	// each item with its own query. Its report is tpcc-mysql's, with
	// tpcc-mysql's late limits. The default: dbarena's TPC-C is documented
	// and reported as tpcc-mysql's, so its TpmC must compare with a
	// tpcc-mysql history.
	ShapeTpccMySQL = "tpcc-mysql"
	// ShapeBatched sends dbarena's batched statements: items and stock
	// read with IN lists, stock updated with one CASE statement and order
	// lines inserted with one multi-row INSERT per supplying warehouse,
	// Delivery's ten districts deleted, stamped and summed with one
	// statement per table (about 11 statements per transaction).
	ShapeBatched = "batched"
)

// shapes lists --shape's values, the default first.
var shapes = []string{ShapeTpccMySQL, ShapeBatched, ShapeProcedures}

// tpccMySQLLimitMS are tpcc-mysql's late limits: its RTIME_* constants
// (5, 5, 5, 80, 20) are compared with response times in milliseconds, so
// a transaction is late after 5 ms (New-Order, Payment, Order-Status),
// 80 ms (Delivery) and 20 ms (Stock-Level).
var tpccMySQLLimitMS = [5]int{5, 5, 5, 80, 20}

// specLimits are the 90th percentile response-time limits of clause
// 5.2.5.3.
var specLimits = [5]time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, 80 * time.Second, 20 * time.Second}

// validShape reports whether s names a shape.
func validShape(s string) bool {
	for _, v := range shapes {
		if s == v {
			return true
		}
	}
	return false
}

// limits returns the late limit of each transaction type, in txTypes
// order: --rt-limitN (milliseconds, tpcc-mysql's -0..-4) where given, else
// the shape's own (tpcc-mysql's milliseconds, or the specification's
// seconds for the batched shape).
func (c *Config) limits() [5]time.Duration {
	var out [5]time.Duration
	for i := range out {
		switch {
		case c.RTLimitMS[i] > 0:
			out[i] = time.Duration(c.RTLimitMS[i]) * time.Millisecond
		case c.Shape == ShapeTpccMySQL:
			out[i] = time.Duration(tpccMySQLLimitMS[i]) * time.Millisecond
		default:
			out[i] = specLimits[i]
		}
	}
	return out
}

// formatLimit writes a late limit in the unit it was given in.
func formatLimit(ms float64) string {
	if ms >= 1000 && int64(ms)%1000 == 0 {
		return fmt.Sprintf("%.0f s", ms/1000)
	}
	return fmt.Sprintf("%g ms", ms)
}

// shapeLine names the shape in a report.
func shapeLine(shape string) string {
	switch shape {
	case ShapeTpccMySQL:
		return "statement shape: tpcc-mysql (its row-at-a-time statements, as neword.c, payment.c, ordstat.c, delivery.c and slev.c send them)"
	case ShapeBatched:
		return "statement shape: batched (dbarena's IN-list reads, one CASE stock update, multi-row order line inserts, set-wise Delivery)"
	case ShapeProcedures:
		return "statement shape: procedures (one stored routine call per transaction, as HammerDB)"
	}
	return "statement shape: " + shape
}

// shapeNames is --shape's help list.
func shapeNames() string { return strings.Join(shapes, ", ") }
