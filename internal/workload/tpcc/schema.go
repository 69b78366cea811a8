package tpcc

import (
	"strings"

	"github.com/dbarena/dbarena/internal/server/dialect"
)

// Schema variants (--schema).
const (
	// SchemaStandard is tpcc-mysql's create_table.sql: the spec's primary
	// keys, plus add_fkey_idx.sql's secondary indexes.
	SchemaStandard = "standard"
	// SchemaAIDPK is the variant of the source documents: an auto-increment
	// surrogate primary key "id" on every table, no foreign keys, the
	// original keys kept as unique indexes.
	SchemaAIDPK = "aidpk"
)

// table is one TPC-C table: tpcc-mysql's columns (MySQL types; postgres
// maps them), primary key and the columns by which a warehouse's rows are
// found.
type table struct {
	name string
	// cols are "name type" pairs in tpcc-mysql's order.
	cols []string
	// pk is the original primary key; empty for history.
	pk []string
	// wcol is the warehouse column, for deleting an interrupted unit.
	wcol string
}

// colNames returns the column names.
func (t *table) colNames() []string {
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}

var (
	tWarehouse = &table{name: "warehouse", wcol: "w_id", pk: []string{"w_id"}, cols: []string{
		"w_id smallint not null", "w_name varchar(10)", "w_street_1 varchar(20)", "w_street_2 varchar(20)",
		"w_city varchar(20)", "w_state char(2)", "w_zip char(9)", "w_tax decimal(4,2)", "w_ytd decimal(12,2)"}}
	tDistrict = &table{name: "district", wcol: "d_w_id", pk: []string{"d_w_id", "d_id"}, cols: []string{
		"d_id tinyint not null", "d_w_id smallint not null", "d_name varchar(10)", "d_street_1 varchar(20)",
		"d_street_2 varchar(20)", "d_city varchar(20)", "d_state char(2)", "d_zip char(9)", "d_tax decimal(4,2)",
		"d_ytd decimal(12,2)", "d_next_o_id int"}}
	tCustomer = &table{name: "customer", wcol: "c_w_id", pk: []string{"c_w_id", "c_d_id", "c_id"}, cols: []string{
		"c_id int not null", "c_d_id tinyint not null", "c_w_id smallint not null", "c_first varchar(16)",
		"c_middle char(2)", "c_last varchar(16)", "c_street_1 varchar(20)", "c_street_2 varchar(20)",
		"c_city varchar(20)", "c_state char(2)", "c_zip char(9)", "c_phone char(16)", "c_since datetime",
		"c_credit char(2)", "c_credit_lim bigint", "c_discount decimal(4,2)", "c_balance decimal(12,2)",
		"c_ytd_payment decimal(12,2)", "c_payment_cnt smallint", "c_delivery_cnt smallint", "c_data text"}}
	tHistory = &table{name: "history", wcol: "h_w_id", cols: []string{
		"h_c_id int", "h_c_d_id tinyint", "h_c_w_id smallint", "h_d_id tinyint", "h_w_id smallint",
		"h_date datetime", "h_amount decimal(6,2)", "h_data varchar(24)"}}
	tNewOrders = &table{name: "new_orders", wcol: "no_w_id", pk: []string{"no_w_id", "no_d_id", "no_o_id"}, cols: []string{
		"no_o_id int not null", "no_d_id tinyint not null", "no_w_id smallint not null"}}
	tOrders = &table{name: "orders", wcol: "o_w_id", pk: []string{"o_w_id", "o_d_id", "o_id"}, cols: []string{
		"o_id int not null", "o_d_id tinyint not null", "o_w_id smallint not null", "o_c_id int",
		"o_entry_d datetime", "o_carrier_id tinyint", "o_ol_cnt tinyint", "o_all_local tinyint"}}
	tOrderLine = &table{name: "order_line", wcol: "ol_w_id", pk: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"}, cols: []string{
		"ol_o_id int not null", "ol_d_id tinyint not null", "ol_w_id smallint not null", "ol_number tinyint not null",
		"ol_i_id int", "ol_supply_w_id smallint", "ol_delivery_d datetime", "ol_quantity tinyint",
		"ol_amount decimal(6,2)", "ol_dist_info char(24)"}}
	tItem = &table{name: "item", pk: []string{"i_id"}, cols: []string{
		"i_id int not null", "i_im_id int", "i_name varchar(24)", "i_price decimal(5,2)", "i_data varchar(50)"}}
	tStock = &table{name: "stock", wcol: "s_w_id", pk: []string{"s_w_id", "s_i_id"}, cols: []string{
		"s_i_id int not null", "s_w_id smallint not null", "s_quantity smallint",
		"s_dist_01 char(24)", "s_dist_02 char(24)", "s_dist_03 char(24)", "s_dist_04 char(24)", "s_dist_05 char(24)",
		"s_dist_06 char(24)", "s_dist_07 char(24)", "s_dist_08 char(24)", "s_dist_09 char(24)", "s_dist_10 char(24)",
		"s_ytd decimal(8,0)", "s_order_cnt smallint", "s_remote_cnt smallint", "s_data varchar(50)"}}
)

// allTables lists the tables children first, the order to drop them in.
var allTables = []*table{tOrderLine, tNewOrders, tHistory, tOrders, tCustomer, tDistrict, tStock, tItem, tWarehouse}

// Names of dbarena's own bookkeeping tables.
const (
	metaTable  = "dbarena_tpcc_meta"
	unitsTable = "dbarena_tpcc_load"
)

// index is a secondary index (tpcc-mysql add_fkey_idx.sql) or, for aidpk,
// an original primary key kept as a unique index.
type index struct {
	name, table string
	cols        []string
	unique      bool
}

// secondaryIndexes are add_fkey_idx.sql's indexes.
var secondaryIndexes = []index{
	{name: "idx_customer", table: "customer", cols: []string{"c_w_id", "c_d_id", "c_last", "c_first"}},
	{name: "idx_orders", table: "orders", cols: []string{"o_w_id", "o_d_id", "o_c_id", "o_id"}},
	{name: "fkey_stock_2", table: "stock", cols: []string{"s_i_id"}},
	{name: "fkey_order_line_2", table: "order_line", cols: []string{"ol_supply_w_id", "ol_i_id"}},
}

// foreignKeys are add_fkey_idx.sql's constraints, added by --fk.
var foreignKeys = []string{
	"ALTER TABLE district ADD CONSTRAINT fkey_district_1 FOREIGN KEY(d_w_id) REFERENCES warehouse(w_id)",
	"ALTER TABLE customer ADD CONSTRAINT fkey_customer_1 FOREIGN KEY(c_w_id,c_d_id) REFERENCES district(d_w_id,d_id)",
	"ALTER TABLE history ADD CONSTRAINT fkey_history_1 FOREIGN KEY(h_c_w_id,h_c_d_id,h_c_id) REFERENCES customer(c_w_id,c_d_id,c_id)",
	"ALTER TABLE history ADD CONSTRAINT fkey_history_2 FOREIGN KEY(h_w_id,h_d_id) REFERENCES district(d_w_id,d_id)",
	"ALTER TABLE new_orders ADD CONSTRAINT fkey_new_orders_1 FOREIGN KEY(no_w_id,no_d_id,no_o_id) REFERENCES orders(o_w_id,o_d_id,o_id)",
	"ALTER TABLE orders ADD CONSTRAINT fkey_orders_1 FOREIGN KEY(o_w_id,o_d_id,o_c_id) REFERENCES customer(c_w_id,c_d_id,c_id)",
	"ALTER TABLE order_line ADD CONSTRAINT fkey_order_line_1 FOREIGN KEY(ol_w_id,ol_d_id,ol_o_id) REFERENCES orders(o_w_id,o_d_id,o_id)",
	"ALTER TABLE order_line ADD CONSTRAINT fkey_order_line_2 FOREIGN KEY(ol_supply_w_id,ol_i_id) REFERENCES stock(s_w_id,s_i_id)",
	"ALTER TABLE stock ADD CONSTRAINT fkey_stock_1 FOREIGN KEY(s_w_id) REFERENCES warehouse(w_id)",
	"ALTER TABLE stock ADD CONSTRAINT fkey_stock_2 FOREIGN KEY(s_i_id) REFERENCES item(i_id)",
}

// createTableSQL is the CREATE TABLE of t for the family and schema
// variant. Standard tables carry their primary key; aidpk tables an "id"
// surrogate key (the original key becomes a unique index after the load).
func createTableSQL(d dialect.Dialect, schema string, t *table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS ")
	b.WriteString(t.name)
	b.WriteString(" (\n")
	if schema == SchemaAIDPK {
		b.WriteString("  id " + d.AutoIncrement("BIGINT") + ",\n")
	}
	for _, c := range t.cols {
		name, typ, _ := strings.Cut(c, " ")
		typ = d.ColumnType(typ)
		b.WriteString("  " + name + " " + typ + ",\n")
	}
	switch {
	case schema == SchemaAIDPK:
		b.WriteString("  PRIMARY KEY (id)")
	case len(t.pk) > 0:
		b.WriteString("  PRIMARY KEY (" + strings.Join(t.pk, ", ") + ")")
	default:
		s := b.String()
		b.Reset()
		b.WriteString(strings.TrimSuffix(s, ",\n"))
	}
	b.WriteString("\n)")
	if o := d.TableOptions("InnoDB"); o != "" {
		b.WriteString(" " + o)
	}
	return b.String()
}

// allIndexes are add_fkey_idx.sql's indexes and, for aidpk, the original
// keys as unique indexes.
func allIndexes(schema string) []index {
	var out []index
	if schema == SchemaAIDPK {
		for _, t := range allTables {
			if len(t.pk) > 0 {
				out = append(out, index{name: "uk_" + t.name, table: t.name, cols: t.pk, unique: true})
			}
		}
	}
	return append(out, secondaryIndexes...)
}

// partIndexes are the indexes on the tables of part (all parts: "").
// They are built after the data: on MariaDB 10.11 keeping them up to date
// during the load cost as much as building them afterwards, and a build can
// start as soon as its part is loaded, beside the rest of the load.
func partIndexes(schema, part string) []index {
	tables := map[string]bool{}
	for _, j := range (&generator{}).jobs(unit{part: part, w: 1}) {
		tables[j.t.name] = true
	}
	var out []index
	for _, ix := range allIndexes(schema) {
		if part == "" || tables[ix.table] {
			out = append(out, ix)
		}
	}
	return out
}

// createIndexSQL is the CREATE INDEX of ix.
func createIndexSQL(ix index) string {
	u := ""
	if ix.unique {
		u = "UNIQUE "
	}
	return "CREATE " + u + "INDEX " + ix.name + " ON " + ix.table + " (" + strings.Join(ix.cols, ", ") + ")"
}
