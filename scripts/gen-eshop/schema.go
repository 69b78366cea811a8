package main

import "fmt"

// kind is a column's type, spelled per family by sqlType.
type kind int

const (
	kInt kind = iota
	kSmall
	kBig
	kDec // precision p, scale s
	kStr // varchar(n)
	kChar
	kText
	kDate
	kDateTime
	kFlag
)

type column struct {
	name     string
	kind     kind
	n, scale int // length, or decimal precision and scale
	null     bool
}

// table is one table of the shop: its columns, keys and row maker.
type table struct {
	name string
	cols []column
	pk   []string
	// unique and keys are secondary indexes: name -> columns.
	unique, keys [][]string
	rows         int64
	// row returns row i (1-based) as values in column order: nil, int64,
	// bool, decimal, stamp or string.
	row func(i int64) []any
}

// decimal is a decimal literal ("12.50"); stamp a date or datetime literal.
type (
	decimal string
	stamp   string
)

func sqlType(c column, pg bool) string {
	switch c.kind {
	case kInt:
		return pick(pg, "integer", "int(11)")
	case kSmall:
		return pick(pg, "smallint", "smallint(6)")
	case kBig:
		return pick(pg, "bigint", "bigint(20)")
	case kDec:
		return fmt.Sprintf(pick(pg, "numeric(%d,%d)", "decimal(%d,%d)"), c.n, c.scale)
	case kStr:
		return fmt.Sprintf(pick(pg, "character varying(%d)", "varchar(%d)"), c.n)
	case kChar:
		return fmt.Sprintf(pick(pg, "character(%d)", "char(%d)"), c.n)
	case kText:
		return "text"
	case kDate:
		return "date"
	case kDateTime:
		return pick(pg, "timestamp(0) without time zone", "datetime")
	case kFlag:
		return pick(pg, "boolean", "tinyint(1)")
	}
	panic("unknown kind")
}

func pick(pg bool, a, b string) string {
	if pg {
		return a
	}
	return b
}

// sizes are the row counts of a shop of n products.
type sizes struct {
	products, categories, brands, suppliers, taxes, currencies, units, collections, promos, warehouses int64
}

func sizesFor(n int64) sizes {
	return sizes{products: n, categories: max(20, n/200), brands: max(10, n/100), suppliers: max(10, n/800),
		taxes: 5, currencies: 6, units: 8, collections: 24, promos: 30, warehouses: 5}
}

// Per-product child rows.
const (
	imagesPer     = 3
	attributesPer = 5
	pricesPer     = 3 // currencies with a price of their own
)

// Product property columns beyond the fixed ones: about 200 columns in all,
// as document 000's shop.
const (
	propInts  = 60
	propDecs  = 30
	propStrs  = 60
	propFlags = 15
	propDates = 5
)

func idCol(name string) column      { return column{name: name, kind: kInt} }
func str(name string, n int) column { return column{name: name, kind: kStr, n: n} }
func nstr(name string, n int) column {
	return column{name: name, kind: kStr, n: n, null: true}
}
func dec(name string, p, s int, null bool) column {
	return column{name: name, kind: kDec, n: p, scale: s, null: null}
}

// shop returns the tables of a shop of n products from seed, lookups
// first, product and its child tables last.
func shop(n int64, seed uint64) []table {
	sz := sizesFor(n)
	g := gen{seed: seed}
	var out []table

	out = append(out, table{name: "category", rows: sz.categories, pk: []string{"id"}, keys: [][]string{{"parent_id"}},
		cols: []column{idCol("id"), {name: "parent_id", kind: kInt, null: true}, str("name", 100), str("slug", 120),
			{name: "description", kind: kText, null: true}, {name: "sort_order", kind: kSmall}, {name: "is_active", kind: kFlag}},
		row: func(i int64) []any {
			r := g.at("category", i)
			var parent any
			if i > 8 {
				parent = 1 + r.n(8)
			}
			name := r.title(2) + fmt.Sprintf(" %d", i)
			return []any{i, parent, name, slug(name), r.nullable(0.2, r.text(1, 3)), int64(r.n(100)), r.chance(0.95)}
		}})
	out = append(out, table{name: "brand", rows: sz.brands, pk: []string{"id"},
		cols: []column{idCol("id"), str("name", 100), str("slug", 120), {name: "country", kind: kChar, n: 2},
			nstr("website", 200), {name: "founded", kind: kSmall, null: true}, {name: "description", kind: kText, null: true}},
		row: func(i int64) []any {
			r := g.at("brand", i)
			name := r.title(1) + fmt.Sprintf(" %d", i)
			return []any{i, name, slug(name), r.oneOf(countries), r.nullable(0.1, "https://"+slug(name)+".example"),
				r.nullable(0.3, int64(1900+r.n(120))), r.nullable(0.3, r.text(1, 2))}
		}})
	out = append(out, table{name: "supplier", rows: sz.suppliers, pk: []string{"id"},
		cols: []column{idCol("id"), str("name", 100), nstr("email", 120), nstr("phone", 32), str("city", 64),
			dec("rating", 3, 2, false), {name: "contract_start", kind: kDate}},
		row: func(i int64) []any {
			r := g.at("supplier", i)
			name := r.title(2) + " Ltd"
			return []any{i, name, r.nullable(0.1, fmt.Sprintf("sales%d@%s.example", i, slug(r.word()))),
				r.nullable(0.2, fmt.Sprintf("+1-555-%04d", r.n(10000))), r.oneOf(cities), r.decimal(100, 500, 2),
				r.date(2010, 2024)}
		}})
	out = append(out, table{name: "tax", rows: sz.taxes, pk: []string{"id"},
		cols: []column{idCol("id"), str("name", 64), dec("rate", 5, 2, false)},
		row: func(i int64) []any {
			rates := []string{"0.00", "5.00", "10.00", "20.00", "21.50"}
			return []any{i, fmt.Sprintf("VAT %s%%", rates[(i-1)%5]), decimal(rates[(i-1)%5])}
		}})
	out = append(out, table{name: "currency", rows: sz.currencies, pk: []string{"id"}, unique: [][]string{{"code"}},
		cols: []column{idCol("id"), {name: "code", kind: kChar, n: 3}, str("name", 64), str("symbol", 8),
			dec("rate", 12, 6, false), {name: "updated", kind: kDate}},
		row: func(i int64) []any {
			c := currencies[(i-1)%int64(len(currencies))]
			return []any{i, c[0], c[1], c[2], decimal(c[3]), stamp("2026-11-01")}
		}})
	out = append(out, table{name: "unit", rows: sz.units, pk: []string{"id"},
		cols: []column{idCol("id"), str("code", 8), str("name", 32)},
		row: func(i int64) []any {
			u := units[(i-1)%int64(len(units))]
			return []any{i, u[0], u[1]}
		}})
	out = append(out, table{name: "collection", rows: sz.collections, pk: []string{"id"},
		cols: []column{idCol("id"), str("name", 100), str("season", 16), {name: "starts", kind: kDate}, {name: "ends", kind: kDate, null: true}},
		row: func(i int64) []any {
			r := g.at("collection", i)
			year := 2015 + (i-1)/4
			season := []string{"spring", "summer", "autumn", "winter"}[(i-1)%4]
			var ends any
			if year < 2026 {
				ends = stamp(fmt.Sprintf("%d-12-31", year))
			}
			return []any{i, r.title(2) + " " + season, season, stamp(fmt.Sprintf("%d-%02d-01", year, 1+3*((i-1)%4))), ends}
		}})
	out = append(out, table{name: "promo", rows: sz.promos, pk: []string{"id"},
		cols: []column{idCol("id"), str("name", 100), dec("discount_pct", 5, 2, false), {name: "starts", kind: kDateTime},
			{name: "ends", kind: kDateTime, null: true}, {name: "is_active", kind: kFlag}},
		row: func(i int64) []any {
			r := g.at("promo", i)
			return []any{i, "Sale: " + r.title(2), r.decimal(500, 5000, 2), r.datetime(2024, 2025),
				r.nullable(0.3, r.datetime(2026, 2027)), r.chance(0.7)}
		}})
	out = append(out, table{name: "warehouse", rows: sz.warehouses, pk: []string{"id"},
		cols: []column{idCol("id"), str("name", 64), str("city", 64), {name: "capacity", kind: kInt}},
		row: func(i int64) []any {
			r := g.at("warehouse", i)
			return []any{i, fmt.Sprintf("Warehouse %d", i), r.oneOf(cities), int64(1000 * (10 + r.n(90)))}
		}})
	out = append(out, product(g, sz))
	out = append(out, table{name: "product_image", rows: n * imagesPer, pk: []string{"id"}, keys: [][]string{{"product_id", "sort_order"}},
		cols: []column{idCol("id"), idCol("product_id"), str("url", 255), nstr("alt", 200), {name: "sort_order", kind: kSmall},
			{name: "width", kind: kSmall}, {name: "height", kind: kSmall}},
		row: func(i int64) []any {
			r := g.at("product_image", i)
			pid, k := (i-1)/imagesPer+1, (i-1)%imagesPer+1
			return []any{i, pid, fmt.Sprintf("/img/p/%d/%d-%d.jpg", pid%1000, pid, k), r.nullable(0.2, r.title(3)), k,
				int64(400 + 200*r.n(4)), int64(300 + 200*r.n(4))}
		}})
	out = append(out, table{name: "product_attribute", rows: n * attributesPer, pk: []string{"product_id", "name"},
		cols: []column{idCol("product_id"), str("name", 64), str("value", 255)},
		row: func(i int64) []any {
			r := g.at("product_attribute", i)
			pid, k := (i-1)/attributesPer+1, (i-1)%attributesPer
			return []any{pid, attributeNames[k], r.text(1, 1)}
		}})
	out = append(out, table{name: "product_price", rows: n * pricesPer, pk: []string{"product_id", "currency_id"},
		cols: []column{idCol("product_id"), idCol("currency_id"), dec("price", 12, 2, false)},
		row: func(i int64) []any {
			r := g.at("product_price", i)
			pid, k := (i-1)/pricesPer+1, (i-1)%pricesPer+2
			return []any{pid, k, r.decimal(100, 500000, 2)}
		}})
	out = append(out, table{name: "stock", rows: n * sz.warehouses, pk: []string{"product_id", "warehouse_id"},
		keys: [][]string{{"warehouse_id"}},
		cols: []column{idCol("product_id"), idCol("warehouse_id"), {name: "qty", kind: kInt}, {name: "reserved", kind: kInt},
			{name: "updated", kind: kDateTime}},
		row: func(i int64) []any {
			r := g.at("stock", i)
			pid, w := (i-1)/sz.warehouses+1, (i-1)%sz.warehouses+1
			q := int64(r.n(500))
			return []any{pid, w, q, int64(r.n(int(q/10 + 1))), r.datetime(2026, 2026)}
		}})
	return out
}

// product is the wide table: fixed columns, then property columns.
func product(g gen, sz sizes) table {
	cols := []column{idCol("id"), str("sku", 32), str("name", 200), str("slug", 220),
		idCol("category_id"), idCol("brand_id"), idCol("supplier_id"), idCol("tax_id"), idCol("currency_id"), idCol("unit_id"),
		{name: "collection_id", kind: kInt, null: true}, {name: "promo_id", kind: kInt, null: true}, idCol("warehouse_id"),
		dec("price", 12, 2, false), dec("old_price", 12, 2, true), dec("cost", 12, 2, false),
		{name: "weight_g", kind: kInt}, {name: "width_mm", kind: kInt}, {name: "height_mm", kind: kInt}, {name: "depth_mm", kind: kInt},
		{name: "is_active", kind: kFlag}, {name: "is_new", kind: kFlag}, {name: "is_hit", kind: kFlag}, {name: "is_sale", kind: kFlag},
		dec("rating", 3, 2, true), {name: "reviews", kind: kInt}, {name: "views", kind: kBig},
		{name: "created", kind: kDateTime}, {name: "updated", kind: kDateTime}, {name: "released", kind: kDate, null: true},
		{name: "ean", kind: kChar, n: 13, null: true}, nstr("short_description", 500), {name: "description", kind: kText, null: true},
		nstr("meta_title", 200), nstr("meta_keywords", 500)}
	fixed := len(cols)
	for i := 1; i <= propInts; i++ {
		cols = append(cols, column{name: fmt.Sprintf("prop_int_%02d", i), kind: kInt, null: true})
	}
	for i := 1; i <= propDecs; i++ {
		cols = append(cols, dec(fmt.Sprintf("prop_dec_%02d", i), 10, 2, true))
	}
	for i := 1; i <= propStrs; i++ {
		cols = append(cols, nstr(fmt.Sprintf("prop_str_%02d", i), 64))
	}
	for i := 1; i <= propFlags; i++ {
		cols = append(cols, column{name: fmt.Sprintf("prop_flag_%02d", i), kind: kFlag})
	}
	for i := 1; i <= propDates; i++ {
		cols = append(cols, column{name: fmt.Sprintf("prop_date_%02d", i), kind: kDate, null: true})
	}
	return table{name: "product", rows: sz.products, cols: cols, pk: []string{"id"}, unique: [][]string{{"sku"}},
		keys: [][]string{{"category_id", "is_active", "price"}, {"brand_id"}, {"slug"}, {"promo_id"}},
		row: func(i int64) []any {
			r := g.at("product", i)
			name := r.title(3) + fmt.Sprintf(" %d", i)
			price := r.decimal(199, 250000, 2)
			v := []any{i, fmt.Sprintf("SKU-%07d", i), name, slug(name),
				1 + r.n64(sz.categories), 1 + r.n64(sz.brands), 1 + r.n64(sz.suppliers), 1 + r.n64(sz.taxes),
				int64(1), 1 + r.n64(sz.units), r.nullable(0.4, 1+r.n64(sz.collections)), r.nullable(0.8, 1+r.n64(sz.promos)),
				1 + r.n64(sz.warehouses),
				price, r.nullable(0.7, r.decimal(25000, 300000, 2)), r.decimal(100, 200000, 2),
				int64(50 + r.n(20000)), int64(10 + r.n(1000)), int64(10 + r.n(1000)), int64(10 + r.n(1000)),
				r.chance(0.93), r.chance(0.1), r.chance(0.05), r.chance(0.15),
				r.nullable(0.3, r.decimal(100, 500, 2)), int64(r.n(400)), int64(r.n(2_000_000)),
				r.datetime(2018, 2025), r.datetime(2025, 2026), r.nullable(0.2, r.date(2015, 2026)),
				r.nullable(0.2, fmt.Sprintf("%013d", r.n64(1e13))), r.nullable(0.1, r.text(1, 2)), r.nullable(0.05, r.description(i)),
				r.nullable(0.2, name+" | buy online"), r.nullable(0.3, r.keywords())}
			for range propInts {
				v = append(v, r.nullable(0.3, int64(r.n(100000))))
			}
			for range propDecs {
				v = append(v, r.nullable(0.3, r.decimal(0, 1000000, 2)))
			}
			for range propStrs {
				v = append(v, r.nullable(0.3, r.title(2)))
			}
			for range propFlags {
				v = append(v, r.chance(0.5))
			}
			for range propDates {
				v = append(v, r.nullable(0.5, r.date(2000, 2026)))
			}
			_ = fixed
			return v
		}}
}
