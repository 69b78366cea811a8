package micro

// SQLBenchOp maps one operation of sql-bench (MySQL's sql-bench 2.15, as
// run-all-tests names it in its RUN file and output files) to the micro
// suite: Micro is the operation that does the same (Same) or the closest
// one, "" when there is none; Why says how they differ, or why micro has
// none. docs/benchmarks.md prints this table.
type SQLBenchOp struct {
	Test, Name, Micro string
	Same              bool
	Why               string
}

// SQLBench is every operation of sql-bench's run-all-tests, in the order
// of its test programs.
var SQLBench = []SQLBenchOp{
	{"alter-table", "insert", "insert", false, "rows for the table altered; micro's insert times its own inserts"},
	{"alter-table", "alter_table_add", "alter_table_add_column", true, ""},
	{"alter-table", "create_index", "create_index", true, ""},
	{"alter-table", "drop_index", "drop_index", true, ""},
	{"alter-table", "alter_table_drop", "alter_table_drop_column", true, ""},
	{"ATIS", "create_table", "create_table", true, "28 ATIS tables; micro creates plain tables"},
	{"ATIS", "insert", "insert", false, "the ATIS data (9,768 rows) from files"},
	{"ATIS", "select_simple_join", "select_join_2", false, "ATIS two-table joins; micro joins its own key chains"},
	{"ATIS", "select_join", "select_join_3", false, "ATIS multi-table joins"},
	{"ATIS", "select_key_prefix_join", "select_join_2", false, "join on a key prefix: micro's keys are one column"},
	{"ATIS", "select_distinct", "select_distinct", true, ""},
	{"ATIS", "select_group", "select_group_by", false, "ATIS GROUP BY queries"},
	{"ATIS", "drop_table", "drop_table", true, ""},
	{"big-tables", "select_many_fields", "select_wide_row", true, "sql-bench's table has 1000 columns, micro's 100"},
	{"big-tables", "insert_many_fields", "insert_wide_row", true, "sql-bench's table has 1000 columns, micro's 100"},
	{"connect", "connect", "connect", true, ""},
	{"connect", "connect+select_simple", "connect+select_1", true, ""},
	{"connect", "select_simple", "select_1", true, ""},
	{"connect", "select_simple_cache", "select_1", false, "the same constant each time, for MySQL's query cache (off in MariaDB 10.11 and gone in MySQL 8)"},
	{"connect", "connect+select_1_row", "connect+select_1", false, "reads a one-row table; micro selects a constant"},
	{"connect", "select_1_row", "select_key", false, "scans a one-row table; micro looks a key up"},
	{"connect", "select_1_row_cache", "select_key", false, "query cache variant of select_1_row"},
	{"connect", "select_2_rows", "select_range_100", false, "scans a two-row table"},
	{"connect", "select_column+column", "", false, "arithmetic over columns of a one-row table: expression evaluation, which micro does not time apart"},
	{"connect", "select_big_str", "select_big_str", true, "a 10,000-character string"},
	{"create", "create_MANY_tables", "create_table", false, "sql-bench creates thousands of tables first (10 with --small-test)"},
	{"create", "select_group_when_MANY_tables", "", false, "a query on each of thousands of tables (the table cache): micro drops its tables as it goes; use a plan with many tables"},
	{"create", "drop_table_when_MANY_tables", "drop_table", false, "see create_MANY_tables"},
	{"create", "create+drop", "create_table", false, "micro times create_table and drop_table apart"},
	{"create", "create_key+drop", "create_key+drop", true, ""},
	{"insert", "insert", "insert", true, ""},
	{"insert", "insert_duplicates", "insert_duplicate", true, "sql-bench's fail with a duplicate-key error; micro's are ignored (INSERT IGNORE, ON CONFLICT DO NOTHING)"},
	{"insert", "prepared_select", "prepared_select", true, ""},
	{"insert", "once_prepared_select", "once_prepared_select", true, ""},
	{"insert", "select_big", "order_by_big_key2", false, "a whole-table select; micro's orders it by the primary key"},
	{"insert", "order_by_big_key", "order_by_big_key", true, ""},
	{"insert", "order_by_big_key_desc", "order_by_big_key_desc", true, ""},
	{"insert", "order_by_big_key_prefix", "order_by_big_key", false, "a two-column key's prefix: micro's keys are one column"},
	{"insert", "order_by_big_key2", "order_by_big_key2", true, ""},
	{"insert", "order_by_big_key_diff", "order_by_big", false, "ordered by another key than the one read"},
	{"insert", "order_by_big", "order_by_big", true, ""},
	{"insert", "order_by_range", "order_by_range", true, ""},
	{"insert", "order_by_key_prefix", "order_by_key", false, "a key prefix: micro's keys are one column"},
	{"insert", "order_by_key2_diff", "order_by_nokey", false, "ordered by another column than the key read"},
	{"insert", "select_diff_key", "select_key2", false, "several keys of the same table"},
	{"insert", "select_range_prefix", "select_range_100", false, "a range over a key prefix"},
	{"insert", "select_range_key2", "wisc_select_10pct_index", false, "a range over a secondary key"},
	{"insert", "select_key_prefix", "select_key2", false, "a key prefix lookup"},
	{"insert", "select_key", "select_key", true, ""},
	{"insert", "select_key_return_key", "select_key2", false, "returns only the key (covering index)"},
	{"insert", "select_key2", "select_key2", true, "micro's returns the primary key (sql-bench's select_key2_return_prim)"},
	{"insert", "select_key2_return_key", "select_key2", false, "returns only the key"},
	{"insert", "select_key2_return_prim", "select_key2", false, "micro's select_key2 does this"},
	{"insert", "select_group", "select_group_by", false, ""},
	{"insert", "min_max_on_key", "select_min_max", false, "MIN/MAX of a key; micro's is over a key range"},
	{"insert", "min_max", "select_min_max", false, "MIN/MAX without a key"},
	{"insert", "count_on_key", "select_count", false, "COUNT(*) over a key range"},
	{"insert", "count", "select_count", false, "COUNT(*) with a condition"},
	{"insert", "count_distinct_big", "count_distinct_big", true, ""},
	{"insert", "update_of_key", "update_key", false, "sql-bench changes the key column; micro's update_key a non-key column by primary key"},
	{"insert", "update_of_key_big", "update_of_key_big", true, ""},
	{"insert", "update_with_key", "update_key", true, ""},
	{"insert", "update_with_key_prefix", "update_key", false, "by a key prefix"},
	{"insert", "update_big", "update_range", false, "a whole-table update of a non-key column; micro's is 100 rows"},
	{"insert", "outer_join_on_key", "outer_join_on_key", true, ""},
	{"insert", "outer_join", "outer_join", true, ""},
	{"insert", "outer_join_found", "outer_join_found", true, ""},
	{"insert", "outer_join_not_found", "outer_join_not_found", true, ""},
	{"insert", "select_in", "select_in", true, "sql-bench prints it without the colon run-all-tests needs: only its output file has it"},
	{"insert", "select_join_in", "select_join_in", true, "as select_in"},
	{"insert", "insert_select_1_key", "insert_select_1_key", true, ""},
	{"insert", "insert_select_2_keys", "insert_select_2_keys", true, ""},
	{"insert", "drop", "drop_table", false, "\"Time for drop table(N)\": not in run-all-tests' summary"},
	{"insert", "delete_key", "delete_key", true, ""},
	{"insert", "delete_range", "delete_range", true, ""},
	{"insert", "insert_key", "insert", false, "inserts into a table with many keys; micro's insert table has one"},
	{"insert", "update_of_primary_key_many_keys", "update_of_key_big", false, "changes the primary key of a many-key table; micro changes a secondary key"},
	{"insert", "delete_big_many_keys", "delete_big_many_keys", true, ""},
	{"insert", "delete_all_many_keys", "delete_big_many_keys", false, "micro's last slices empty the table, and it checks that it is empty"},
	{"insert", "multiple_value_insert", "insert_multi_100", true, "100 rows per INSERT in micro"},
	{"select", "insert", "insert", false, ""},
	{"select", "select_cache", "select_key", false, "the same query repeated, for the query cache"},
	{"select", "select_cache2", "select_key", false, "as select_cache"},
	{"select", "select_big", "order_by_big_key2", false, ""},
	{"select", "select_range", "select_range_100", true, ""},
	{"select", "min_max_on_key", "select_min_max", false, ""},
	{"select", "count_on_key", "select_count", false, ""},
	{"select", "count_group_on_key_parts", "select_group_by", false, "GROUP BY key parts"},
	{"select", "count_distinct_key_prefix", "count_distinct_key_prefix", true, ""},
	{"select", "count_distinct", "count_distinct", true, ""},
	{"select", "count_distinct_2", "count_distinct_2", true, ""},
	{"select", "count_distinct_group_on_key", "count_distinct_group_on_key", true, ""},
	{"select", "count_distinct_group_on_key_parts", "count_distinct_group_on_key", false, "key parts: micro's keys are one column"},
	{"select", "count_distinct_group", "count_distinct_group", true, ""},
	{"select", "count_distinct_big", "count_distinct_big", true, ""},
	{"transactions", "insert_commit", "insert_commit", true, ""},
	{"transactions", "insert_autocommit", "insert_autocommit", true, ""},
	{"transactions", "insert_rollback", "insert_rollback", true, ""},
	{"transactions", "update_rollback", "update_rollback", true, ""},
	{"transactions", "delete_rollback", "delete_rollback", true, ""},
	{"transactions", "update_commit", "update_commit", true, ""},
	{"transactions", "update_autocommit", "update_autocommit", true, ""},
	{"transactions", "delete_commit", "delete_commit", true, ""},
	{"transactions", "delete_autocommit", "delete_autocommit", true, ""},
	{"wisconsin", "create_table", "create_table", true, ""},
	{"wisconsin", "insert", "insert", false, "the Wisconsin data from files"},
	{"wisconsin", "delete_big", "delete_big", true, ""},
	{"wisconsin", "wisc_benchmark", "wisc_select_1pct", false, "sql-bench times its 34 Wisconsin queries as one figure; micro times four kinds apart (wisc_*)"},
}

// SQLBenchName is the name an imported sql-bench operation is stored
// under: micro's when SQLBench says they are the same operation (so that
// `dbarena compare` sets them side by side), its own otherwise.
func SQLBenchName(op string) string {
	for _, m := range SQLBench {
		if m.Name == op && m.Same {
			return m.Micro
		}
	}
	return op
}
