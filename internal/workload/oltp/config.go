package oltp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/workload/oltp/sbrand"
)

// Clients of --client.
const (
	// ClientAuto uses dbarena's lean wire clients for the run's
	// statements: package mysqlwire on the MySQL family, package pgwire on
	// PostgreSQL.
	ClientAuto = "auto"
	// ClientSQL always uses database/sql and the Go drivers.
	ClientSQL = "sql"
)

// PS modes of --ps-mode (sysbench's --db-ps-mode, db_driver.c).
const (
	// PSAuto prepares statements on the server where sysbench does.
	PSAuto = "auto"
	// PSDisable sends every statement as text with its arguments inlined.
	PSDisable = "disable"
)

// Config is the configuration shared by the OLTP workloads. Field comments
// name the flag; defaults are those of oltp_common.lua (sysbench 1.0.20).
type Config struct {
	Tables          int  // --tables: number of tables
	TableSize       int  // --table-size: rows per table
	RangeSize       int  // --range-size: range size for range SELECTs
	PointSelects    int  // --point-selects: point SELECTs per transaction
	SimpleRanges    int  // --simple-ranges: simple range SELECTs per transaction
	SumRanges       int  // --sum-ranges: SELECT SUM() queries per transaction
	OrderRanges     int  // --order-ranges: SELECT ORDER BY queries per transaction
	DistinctRanges  int  // --distinct-ranges: SELECT DISTINCT queries per transaction
	IndexUpdates    int  // --index-updates: UPDATE index queries per transaction
	NonIndexUpdates int  // --non-index-updates: UPDATE non-index queries per transaction
	DeleteInserts   int  // --delete-inserts: DELETE/INSERT combinations per transaction
	RangeSelects    bool // --range-selects: enable all range SELECTs
	AutoInc         bool // --auto-inc: AUTO_INCREMENT/SERIAL id, else client-generated ids
	SkipTrx         bool // --skip-trx: no BEGIN/COMMIT, autocommit mode
	Secondary       bool // --secondary: secondary index "xid" in place of the PRIMARY KEY
	CreateSecondary bool // --create-secondary: create index k_N on k after the load
	// MySQLStorageEngine is --mysql-storage-engine.
	MySQLStorageEngine string
	// PSMode is --ps-mode: "auto" (server-side prepared statements) or "disable".
	PSMode string
	// Client is --client: ClientAuto or ClientSQL.
	Client string

	// RandomPoints is --random-points of select_random_points.lua.
	RandomPoints int
	// NumberOfRanges and Delta are --number-of-ranges and --delta of select_random_ranges.lua.
	NumberOfRanges int
	Delta          int

	// Rand holds the --rand-* options.
	Rand sbrand.Config
}

// DefaultConfig returns sysbench 1.0.20's defaults (oltp_common.lua,
// select_random_points.lua, select_random_ranges.lua, sb_rand.c, db_driver.c).
func DefaultConfig() Config {
	return Config{
		Tables:             1,
		TableSize:          10000,
		RangeSize:          100,
		PointSelects:       10,
		SimpleRanges:       1,
		SumRanges:          1,
		OrderRanges:        1,
		DistinctRanges:     1,
		IndexUpdates:       1,
		NonIndexUpdates:    1,
		DeleteInserts:      1,
		RangeSelects:       true,
		AutoInc:            true,
		SkipTrx:            false,
		Secondary:          false,
		CreateSecondary:    true,
		MySQLStorageEngine: "innodb",
		PSMode:             PSAuto,
		Client:             ClientAuto,
		RandomPoints:       10,
		NumberOfRanges:     10,
		Delta:              5,
		Rand:               sbrand.DefaultConfig(),
	}
}

// flagSet says which groups of flags a workload registers.
type flagSet uint8

const (
	flagsCommon       flagSet = 1 << iota // oltp_common.lua options
	flagsRandomPoints                     // select_random_points.lua
	flagsRandomRanges                     // select_random_ranges.lua
)

// register binds the flags of the groups in which to fs.
func (c *Config) register(fs *pflag.FlagSet, which flagSet) {
	fs.StringVar(&c.Client, "client", c.Client, "client library for the run's statements {auto: dbarena's lean wire clients (MySQL family and PostgreSQL), sql: database/sql}")
	if which&flagsCommon != 0 {
		// oltp_common.lua, sysbench.cmdline.options.
		fs.IntVar(&c.TableSize, "table-size", c.TableSize, "Number of rows per table")
		fs.IntVar(&c.RangeSize, "range-size", c.RangeSize, "Range size for range SELECT queries")
		fs.IntVar(&c.Tables, "tables", c.Tables, "Number of tables")
		fs.IntVar(&c.PointSelects, "point-selects", c.PointSelects, "Number of point SELECT queries per transaction")
		fs.IntVar(&c.SimpleRanges, "simple-ranges", c.SimpleRanges, "Number of simple range SELECT queries per transaction")
		fs.IntVar(&c.SumRanges, "sum-ranges", c.SumRanges, "Number of SELECT SUM() queries per transaction")
		fs.IntVar(&c.OrderRanges, "order-ranges", c.OrderRanges, "Number of SELECT ORDER BY queries per transaction")
		fs.IntVar(&c.DistinctRanges, "distinct-ranges", c.DistinctRanges, "Number of SELECT DISTINCT queries per transaction")
		fs.IntVar(&c.IndexUpdates, "index-updates", c.IndexUpdates, "Number of UPDATE index queries per transaction")
		fs.IntVar(&c.NonIndexUpdates, "non-index-updates", c.NonIndexUpdates, "Number of UPDATE non-index queries per transaction")
		fs.IntVar(&c.DeleteInserts, "delete-inserts", c.DeleteInserts, "Number of DELETE/INSERT combinations per transaction")
		boolFlag(fs, &c.RangeSelects, "range-selects", "Enable/disable all range SELECT queries")
		boolFlag(fs, &c.AutoInc, "auto-inc", "Use AUTO_INCREMENT column as Primary Key (for MySQL), "+
			"or its alternatives in other DBMS. When disabled, use client-generated IDs")
		boolFlag(fs, &c.SkipTrx, "skip-trx", "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode")
		boolFlag(fs, &c.Secondary, "secondary", "Use a secondary index in place of the PRIMARY KEY")
		boolFlag(fs, &c.CreateSecondary, "create-secondary", "Create a secondary index in addition to the PRIMARY KEY")
		fs.StringVar(&c.MySQLStorageEngine, "mysql-storage-engine", c.MySQLStorageEngine, "Storage engine, if MySQL is used")
		fs.StringVar(&c.PSMode, "ps-mode", c.PSMode, "prepared statements usage mode {auto, disable}")
		c.Rand.Flags(fs)
	}
	if which&flagsRandomPoints != 0 {
		fs.IntVar(&c.RandomPoints, "random-points", c.RandomPoints, "Number of random points in the IN() clause in generated SELECTs")
	}
	if which&flagsRandomRanges != 0 {
		fs.IntVar(&c.NumberOfRanges, "number-of-ranges", c.NumberOfRanges, "Number of random BETWEEN ranges per SELECT")
		fs.IntVar(&c.Delta, "delta", c.Delta, "Size of BETWEEN ranges")
	}
}

// validate reports every problem with the flags of the groups in which.
// minTableSize is 0 where an empty table makes sense (oltp_insert).
func (c *Config) validate(which flagSet, minTableSize int) []error {
	var errs []error
	atLeast := func(flag string, v, min int) {
		if v < min {
			errs = append(errs, fmt.Errorf("--%s must be at least %d, got %d", flag, min, v))
		}
	}
	if c.Client != ClientAuto && c.Client != ClientSQL {
		errs = append(errs, fmt.Errorf("--client: invalid value %q (want auto or sql)", c.Client))
	}
	if which&flagsCommon != 0 {
		atLeast("tables", c.Tables, 1)
		atLeast("table-size", c.TableSize, minTableSize)
		if c.TableSize > 1<<31-1 {
			errs = append(errs, fmt.Errorf("--table-size must fit an INTEGER id, got %d", c.TableSize))
		}
		atLeast("range-size", c.RangeSize, 0)
		atLeast("point-selects", c.PointSelects, 0)
		atLeast("simple-ranges", c.SimpleRanges, 0)
		atLeast("sum-ranges", c.SumRanges, 0)
		atLeast("order-ranges", c.OrderRanges, 0)
		atLeast("distinct-ranges", c.DistinctRanges, 0)
		atLeast("index-updates", c.IndexUpdates, 0)
		atLeast("non-index-updates", c.NonIndexUpdates, 0)
		atLeast("delete-inserts", c.DeleteInserts, 0)
		if !isIdent(c.MySQLStorageEngine) {
			errs = append(errs, fmt.Errorf("--mysql-storage-engine: %q is not a storage engine name", c.MySQLStorageEngine))
		}
		if c.PSMode != PSAuto && c.PSMode != PSDisable {
			errs = append(errs, fmt.Errorf("--ps-mode: invalid value %q (want auto or disable)", c.PSMode))
		}
		errs = append(errs, c.Rand.Validate()...)
	}
	if which&flagsRandomPoints != 0 {
		atLeast("random-points", c.RandomPoints, 1)
	}
	if which&flagsRandomRanges != 0 {
		atLeast("number-of-ranges", c.NumberOfRanges, 1)
		atLeast("delta", c.Delta, 0)
	}
	return errs
}

// params returns the flags of the groups in which as plain values.
func (c *Config) params(which flagSet) map[string]any {
	p := map[string]any{"client": c.Client}
	if which&flagsCommon != 0 {
		p["tables"] = c.Tables
		p["table_size"] = c.TableSize
		p["range_size"] = c.RangeSize
		p["point_selects"] = c.PointSelects
		p["simple_ranges"] = c.SimpleRanges
		p["sum_ranges"] = c.SumRanges
		p["order_ranges"] = c.OrderRanges
		p["distinct_ranges"] = c.DistinctRanges
		p["index_updates"] = c.IndexUpdates
		p["non_index_updates"] = c.NonIndexUpdates
		p["delete_inserts"] = c.DeleteInserts
		p["range_selects"] = c.RangeSelects
		p["auto_inc"] = c.AutoInc
		p["skip_trx"] = c.SkipTrx
		p["secondary"] = c.Secondary
		p["create_secondary"] = c.CreateSecondary
		p["mysql_storage_engine"] = c.MySQLStorageEngine
		p["ps_mode"] = c.PSMode
		for k, v := range c.Rand.Params() {
			p[k] = v
		}
	}
	if which&flagsRandomPoints != 0 {
		p["random_points"] = c.RandomPoints
	}
	if which&flagsRandomRanges != 0 {
		p["number_of_ranges"] = c.NumberOfRanges
		p["delta"] = c.Delta
	}
	return p
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch == '_' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			return false
		}
	}
	return true
}

// boolFlag registers a boolean flag that, like sysbench's, also accepts
// on/off and yes/no and may be given bare (--skip-trx means on).
func boolFlag(fs *pflag.FlagSet, p *bool, name, usage string) {
	f := fs.VarPF((*onOff)(p), name, "", usage)
	f.NoOptDefVal = "on"
}

// onOff is a bool flag value accepting sysbench's spellings.
type onOff bool

func (b *onOff) String() string { return strconv.FormatBool(bool(*b)) }
func (b *onOff) Type() string   { return "bool" }
func (b *onOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "yes", "true", "1", "t":
		*b = true
	case "off", "no", "false", "0", "f":
		*b = false
	default:
		return fmt.Errorf("invalid boolean %q (want on or off)", s)
	}
	return nil
}
