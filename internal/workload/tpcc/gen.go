package tpcc

import "github.com/dbarena/dbarena/internal/server/dialect"

// The generator writes rows in the bulk text format (dialect.Rows).
// Generated strings are alphanumeric, so the generator appends them to
// the chunk unescaped.

// writeCents writes an amount in cents as a decimal with two places.
func writeCents(w *dialect.Rows, c int64) {
	w.Field()
	w.Buf = appendCents(w.Buf, c)
}

// Stream keys: each (table, warehouse, district or batch) has its own
// random stream, so any loader can produce any part (see newRNG).
const (
	kItem uint64 = iota + 1
	kWarehouse
	kDistrict
	kStock
	kCustomer
	kHistory
	kOrders
	kOrderLine
)

// batchRows is the granule of ITEM and STOCK streams.
const batchRows = 10000

// generator produces the initial database of clause 4.3.3.1. Its output is
// a pure function of seed and loadTime.
type generator struct {
	seed uint64
	// now is the load's date and time ("current date and time" of the
	// clause), formatted for both families.
	now string
	// c are the load's C constants (clause 2.1.6).
	c Constants
}

// taxCents returns a random tax or discount in [0.0000 .. max/10000],
// rounded to the two decimals of tpcc-mysql's decimal(4,2) columns.
func taxCents(r rng, max int) int64 { return int64((r.between(0, max) + 50) / 100) }

// address appends street 1, street 2, city, state and zip (clause 4.3.3.1).
func address(w *dialect.Rows, r rng) {
	w.Field()
	w.Buf = r.appendAString(w.Buf, 10, 20)
	w.Field()
	w.Buf = r.appendAString(w.Buf, 10, 20)
	w.Field()
	w.Buf = r.appendAString(w.Buf, 10, 20)
	w.Field()
	w.Buf = r.appendAlnum(w.Buf, 2)
	w.Field()
	w.Buf = r.appendZip(w.Buf)
}

// items writes ITEM rows [from, to] (clause 4.3.3.1: 100,000 rows).
func (g *generator) items(w *dialect.Rows, from, to int) error {
	var r rng
	for id := from; id <= to; id++ {
		if id == from || (id-1)%batchRows == 0 {
			r = g.stream(kItem, uint64((id-1)/batchRows))
			for skip := (id - 1) % batchRows; skip > 0; skip-- {
				g.itemRow(&dialect.Rows{}, r, 0)
			}
		}
		g.itemRow(w, r, id)
		if err := w.End(); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) itemRow(w *dialect.Rows, r rng, id int) {
	w.Int(int64(id))
	w.Int(int64(r.between(1, 10000))) // I_IM_ID
	w.Field()
	w.Buf = r.appendAString(w.Buf, 14, 24)      // I_NAME
	writeCents(w, int64(r.between(100, 10000))) // I_PRICE [1.00 .. 100.00]
	w.Field()
	w.Buf = r.appendData(w.Buf) // I_DATA, 10% ORIGINAL
}

func (g *generator) stream(key ...uint64) rng { return newRNG(g.seed, key...) }

// warehouse writes the WAREHOUSE row of wid.
func (g *generator) warehouse(w *dialect.Rows, wid int) error {
	r := g.stream(kWarehouse, uint64(wid))
	w.Int(int64(wid))
	w.Field()
	w.Buf = r.appendAString(w.Buf, 6, 10)
	address(w, r)
	writeCents(w, taxCents(r, 2000)) // W_TAX [0.0000 .. 0.2000]
	writeCents(w, 30000000)          // W_YTD 300,000.00
	return w.End()
}

// districts writes the 10 DISTRICT rows of wid.
func (g *generator) districts(w *dialect.Rows, wid int) error {
	for d := 1; d <= nDist; d++ {
		r := g.stream(kDistrict, uint64(wid), uint64(d))
		w.Int(int64(d))
		w.Int(int64(wid))
		w.Field()
		w.Buf = r.appendAString(w.Buf, 6, 10)
		address(w, r)
		writeCents(w, taxCents(r, 2000)) // D_TAX
		writeCents(w, 3000000)           // D_YTD 30,000.00
		w.Int(int64(nOrders + 1))        // D_NEXT_O_ID 3001
		if err := w.End(); err != nil {
			return err
		}
	}
	return nil
}

// stock writes the 100,000 STOCK rows of wid.
func (g *generator) stock(w *dialect.Rows, wid int) error {
	var r rng
	for id := 1; id <= nItems; id++ {
		if (id-1)%batchRows == 0 {
			r = g.stream(kStock, uint64(wid), uint64((id-1)/batchRows))
		}
		w.Int(int64(id))
		w.Int(int64(wid))
		w.Int(int64(r.between(10, 100))) // S_QUANTITY
		for i := 0; i < 10; i++ {        // S_DIST_01..10
			w.Field()
			w.Buf = r.appendAlnum(w.Buf, 24)
		}
		w.Int(int64(0)) // S_YTD
		w.Int(int64(0)) // S_ORDER_CNT
		w.Int(int64(0)) // S_REMOTE_CNT
		w.Field()
		w.Buf = r.appendData(w.Buf) // S_DATA, 10% ORIGINAL
		if err := w.End(); err != nil {
			return err
		}
	}
	return nil
}

// customers writes the 30,000 CUSTOMER rows of wid.
func (g *generator) customers(w *dialect.Rows, wid int) error {
	for d := 1; d <= nDist; d++ {
		r := g.stream(kCustomer, uint64(wid), uint64(d))
		for c := 1; c <= nCust; c++ {
			w.Int(int64(c))
			w.Int(int64(d))
			w.Int(int64(wid))
			w.Field()
			w.Buf = r.appendAString(w.Buf, 8, 16) // C_FIRST
			w.Text("OE")                          // C_MIDDLE
			// C_LAST: 0..999 for the first 1,000 customers, then
			// NURand(255,0,999) with the load's C (clause 4.3.2.3).
			n := c - 1
			if c > 1000 {
				n = r.nurand(cLastA, 0, 999, g.c.CLast)
			}
			w.Field()
			w.Buf = appendLastName(w.Buf, n)
			address(w, r)
			w.Field()
			w.Buf = r.appendNString(w.Buf, 16) // C_PHONE
			w.Text(g.now)                      // C_SINCE
			if r.IntN(10) == 0 {               // C_CREDIT: 10% BC
				w.Text("BC")
			} else {
				w.Text("GC")
			}
			w.Int(int64(50000))              // C_CREDIT_LIM
			writeCents(w, taxCents(r, 5000)) // C_DISCOUNT [0.0000 .. 0.5000]
			writeCents(w, -1000)             // C_BALANCE -10.00
			writeCents(w, 1000)              // C_YTD_PAYMENT 10.00
			w.Int(int64(1))                  // C_PAYMENT_CNT
			w.Int(int64(0))                  // C_DELIVERY_CNT
			w.Field()
			w.Buf = r.appendAString(w.Buf, 300, 500) // C_DATA
			if err := w.End(); err != nil {
				return err
			}
		}
	}
	return nil
}

// history writes the 30,000 HISTORY rows of wid, one per customer.
func (g *generator) history(w *dialect.Rows, wid int) error {
	for d := 1; d <= nDist; d++ {
		r := g.stream(kHistory, uint64(wid), uint64(d))
		for c := 1; c <= nCust; c++ {
			w.Int(int64(c))
			w.Int(int64(d))
			w.Int(int64(wid))
			w.Int(int64(d))
			w.Int(int64(wid))
			w.Text(g.now)       // H_DATE
			writeCents(w, 1000) // H_AMOUNT 10.00
			w.Field()
			w.Buf = r.appendAString(w.Buf, 12, 24) // H_DATA
			if err := w.End(); err != nil {
				return err
			}
		}
	}
	return nil
}

// districtOrders are the order headers of one district at load.
type districtOrders struct {
	cid, olCnt, carrier [nOrders + 1]int // by O_ID; carrier 0 = null
}

// orderHeaders draws the district's O_C_ID (a random permutation of
// [1..3000]), O_CARRIER_ID (random [1..10] for O_ID < 2101, else null) and
// O_OL_CNT (random [5..15]) (clause 4.3.3.1).
func (g *generator) orderHeaders(wid, d int) *districtOrders {
	r := g.stream(kOrders, uint64(wid), uint64(d))
	o := new(districtOrders)
	for i := 1; i <= nOrders; i++ {
		o.cid[i] = i
	}
	for i := nOrders; i > 1; i-- {
		j := 1 + r.IntN(i)
		o.cid[i], o.cid[j] = o.cid[j], o.cid[i]
	}
	for i := 1; i <= nOrders; i++ {
		if i < firstNewOrder {
			o.carrier[i] = r.between(1, 10)
		}
		o.olCnt[i] = r.between(5, 15)
	}
	return o
}

// orders writes the 30,000 ORDER rows of wid.
func (g *generator) orders(w *dialect.Rows, wid int) error {
	for d := 1; d <= nDist; d++ {
		o := g.orderHeaders(wid, d)
		for id := 1; id <= nOrders; id++ {
			w.Int(int64(id))
			w.Int(int64(d))
			w.Int(int64(wid))
			w.Int(int64(o.cid[id]))
			w.Text(g.now) // O_ENTRY_D
			if o.carrier[id] == 0 {
				w.Null()
			} else {
				w.Int(int64(o.carrier[id]))
			}
			w.Int(int64(o.olCnt[id]))
			w.Int(int64(1)) // O_ALL_LOCAL
			if err := w.End(); err != nil {
				return err
			}
		}
	}
	return nil
}

// newOrders writes the 9,000 NEW-ORDER rows of wid: orders 2101..3000 of
// each district.
func (g *generator) newOrders(w *dialect.Rows, wid int) error {
	for d := 1; d <= nDist; d++ {
		for id := firstNewOrder; id <= nOrders; id++ {
			w.Int(int64(id))
			w.Int(int64(d))
			w.Int(int64(wid))
			if err := w.End(); err != nil {
				return err
			}
		}
	}
	return nil
}

// orderLines writes the ORDER-LINE rows of wid, O_OL_CNT per order.
func (g *generator) orderLines(w *dialect.Rows, wid int) error {
	for d := 1; d <= nDist; d++ {
		o := g.orderHeaders(wid, d)
		r := g.stream(kOrderLine, uint64(wid), uint64(d))
		for id := 1; id <= nOrders; id++ {
			delivered := id < firstNewOrder
			for n := 1; n <= o.olCnt[id]; n++ {
				w.Int(int64(id))
				w.Int(int64(d))
				w.Int(int64(wid))
				w.Int(int64(n))
				w.Int(int64(r.between(1, nItems))) // OL_I_ID
				w.Int(int64(wid))                  // OL_SUPPLY_W_ID
				if delivered {                     // OL_DELIVERY_D
					w.Text(g.now)
				} else {
					w.Null()
				}
				w.Int(int64(5)) // OL_QUANTITY
				if delivered {
					writeCents(w, 0) // OL_AMOUNT
				} else {
					writeCents(w, int64(r.between(1, 999999))) // [0.01 .. 9,999.99]
				}
				w.Field()
				w.Buf = r.appendAlnum(w.Buf, 24) // OL_DIST_INFO
				if err := w.End(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// orderLineRows counts the ORDER-LINE rows of wid, for progress totals.
func (g *generator) orderLineRows(wid int) int64 {
	var n int64
	for d := 1; d <= nDist; d++ {
		o := g.orderHeaders(wid, d)
		for id := 1; id <= nOrders; id++ {
			n += int64(o.olCnt[id])
		}
	}
	return n
}
