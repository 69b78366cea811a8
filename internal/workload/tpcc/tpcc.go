// Package tpcc implements TPC-C (TPC Benchmark C, revision 5.11) on
// tpcc-mysql's schema for the MySQL family and PostgreSQL: the initial
// database of clause 4.3.3, loaded in parallel through each server's bulk
// path; the five transactions of clause 2 driven by a card deck; tpcc-mysql's
// report (clause 5 mix and response-time rules, TpmC); and the consistency
// conditions of clause 3.3.2.
//
// One file per transaction (neworder.go, payment.go, orderstatus.go,
// delivery.go, stocklevel.go); comments cite the clause they implement.
package tpcc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Parts of a load (--parts), as tpcc_load's: items; warehouse (WAREHOUSE,
// DISTRICT, STOCK); customer (CUSTOMER, HISTORY); orders (ORDER,
// NEW-ORDER, ORDER-LINE).
const (
	PartItems     = "items"
	PartWarehouse = "warehouse"
	PartCustomer  = "customer"
	PartOrders    = "orders"
)

var allParts = []string{PartItems, PartWarehouse, PartCustomer, PartOrders}

// Transaction type names (Event.Type), in tpcc-mysql's report order.
const (
	NewOrder    = "New-Order"
	Payment     = "Payment"
	OrderStatus = "Order-Status"
	Delivery    = "Delivery"
	StockLevel  = "Stock-Level"
)

// txTypes lists the five transactions in report order.
var txTypes = []string{NewOrder, Payment, OrderStatus, Delivery, StockLevel}

// Config is the workload's configuration. DefaultConfig gives defaults.
type Config struct {
	// Warehouses is the number of warehouses of the database (W).
	Warehouses int
	// Schema is SchemaStandard or SchemaAIDPK.
	Schema string
	// FK adds tpcc-mysql's foreign keys after the load (standard schema only).
	FK bool
	// Parts are the parts prepare loads.
	Parts []string
	// FromW and ToW bound the warehouses prepare loads (--warehouse-range);
	// 0 means 1 and Warehouses.
	FromW, ToW int
	// Seed makes the initial data repeatable.
	Seed uint64
	// LoadTime is the "current date and time" written at load; zero uses
	// the time of the first prepare, kept in the database so that a resumed
	// load writes the same values.
	LoadTime time.Time
	// Weights of the deck: New-Order, Payment, Order-Status, Delivery,
	// Stock-Level (--weights).
	Weights [5]int
	// Think turns on keying and think times (clause 5.2.5.7).
	Think bool
	// ThinkScale multiplies keying and think times (tests).
	ThinkScale float64
	// LoadMethod is LoadAuto or LoadInsert (--load-method).
	LoadMethod string
	// BindWarehouse binds terminal i to home warehouse i % W + 1 and one
	// Stock-Level district for its whole life (clauses 2.8.1.1, 5.2.1);
	// without it each transaction draws its home warehouse uniformly over
	// 1..W, as go-tpc and tpcc-mysql do (--bind-warehouse).
	BindWarehouse bool
	// Client is --client: ClientAuto or ClientSQL.
	Client string
	// Pipeline sends a transaction's writes in one round trip at its
	// commit, on the wire clients (--pipeline, batched shape only).
	Pipeline bool
	// Shape is the statement shape: ShapeTpccMySQL or ShapeBatched
	// (--shape).
	Shape string
	// RTLimitMS are the late limits in milliseconds, by transaction in
	// report order (--rt-limit0..4, tpcc-mysql's -0..-4); 0 keeps the
	// shape's own.
	RTLimitMS [5]int
}

// DefaultConfig returns tpcc-mysql's defaults: one warehouse, standard
// schema, every part, the 10/10/1/1/1 mix, no think time, tpcc-mysql's
// statements and late limits.
func DefaultConfig() Config {
	return Config{Warehouses: 1, Schema: SchemaStandard, Parts: append([]string(nil), allParts...),
		Seed: 1, Weights: [5]int{10, 10, 1, 1, 1}, ThinkScale: 1, LoadMethod: LoadAuto, Client: ClientAuto,
		Shape: ShapeTpccMySQL}
}

// Workload is TPC-C. Its configuration methods are called from one
// goroutine; NewWorker is safe for concurrent use.
type Workload struct {
	cfg Config
	fs  *pflag.FlagSet
	// flag values before parsing into cfg.
	parts, wrange, weights string

	// mu guards runInfo, prepared and sqlTexts.
	mu       sync.Mutex
	runInfo  *runInfo // read once per run from the database
	prepared int      // warehouses Ready found
	found    *runInfo // what Ready found (no C constants), nil before
	sqlTexts map[target.Family]*texts
	// delivery counts Delivery's districts (clause 2.7.4.2).
	delivery deliveryCount
	// shard of shards is this process's part of a sharded run (Shard);
	// shards is 0 for a whole run.
	shard, shards int
	// started says MEASURING START was printed in this round (tpcc-mysql
	// shape); Summarize clears it for the next round.
	started bool
}

var (
	_ workload.Workload        = (*Workload)(nil)
	_ workload.Preparer        = (*Workload)(nil)
	_ workload.Cleaner         = (*Workload)(nil)
	_ workload.Checker         = (*Workload)(nil)
	_ workload.Runner          = (*Workload)(nil)
	_ workload.ResponseLimiter = (*Workload)(nil)
	_ workload.Reporter        = (*Workload)(nil)
	_ workload.Demander        = (*Workload)(nil)
	_ workload.Readier         = (*Workload)(nil)
	_ workload.Noter           = (*Workload)(nil)
	_ workload.MeasureBeginner = (*Workload)(nil)
)

// New returns TPC-C with default configuration.
func New() *Workload {
	c := DefaultConfig()
	return &Workload{cfg: c, parts: strings.Join(c.Parts, ","), weights: "10,10,1,1,1"}
}

// All returns the constructor for workload.NewRegistry.
func All() []func() workload.Workload {
	return []func() workload.Workload{func() workload.Workload { return New() }}
}

// Config returns the configuration, to read or change before use.
func (wl *Workload) Config() *Config { return &wl.cfg }

// Name implements workload.Workload.
func (wl *Workload) Name() string { return "tpcc" }

// Description implements workload.Workload.
func (wl *Workload) Description() string {
	return "TPC-C on tpcc-mysql's schema: New-Order, Payment, Order-Status, Delivery, Stock-Level"
}

// Flags implements workload.Workload. --seed (data seed) is registered only
// where the command has none of its own (prepare); a run reads the data's
// seed from the database.
func (wl *Workload) Flags(fs *pflag.FlagSet) {
	wl.fs = fs
	c := &wl.cfg
	fs.IntVar(&c.Warehouses, "warehouses", c.Warehouses, "number of warehouses (at run: default as prepared)")
	fs.StringVar(&c.Schema, "schema", c.Schema, "schema variant: standard (tpcc-mysql) or aidpk (auto-increment surrogate keys, no foreign keys)")
	fs.BoolVar(&c.FK, "fk", c.FK, "add tpcc-mysql's foreign keys after the load")
	fs.StringVar(&wl.parts, "parts", wl.parts, "parts to load: items,warehouse,customer,orders")
	fs.StringVar(&wl.wrange, "warehouse-range", "", "load only warehouses A-B (to resume or split a load)")
	if fs.Lookup("seed") == nil {
		fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the initial data")
	}
	fs.StringVar(&c.LoadMethod, "load-method", c.LoadMethod, "auto (LOAD DATA LOCAL INFILE / COPY, INSERT if refused) or insert")
	fs.StringVar(&wl.weights, "weights", wl.weights, "deck of New-Order,Payment,Order-Status,Delivery,Stock-Level cards")
	fs.BoolVar(&c.Think, "think", c.Think, "keying and think times of clause 5.2.5 (off by default)")
	fs.BoolVar(&c.BindWarehouse, "bind-warehouse", c.BindWarehouse,
		"bind terminal i to home warehouse i%W+1 for the whole run (the spec's terminals; default: drawn per transaction, as go-tpc and tpcc-mysql)")
	fs.StringVar(&c.Client, "client", c.Client,
		"client library for the transactions {auto: dbarena's lean wire client where the target allows it, sql: database/sql}")
	fs.BoolVar(&c.Pipeline, "pipeline", c.Pipeline,
		"send each transaction's writes in one round trip at its commit (wire clients, --shape batched; changes what is measured: fewer waits, shorter lock holds)")
	fs.StringVar(&c.Shape, "shape", c.Shape,
		"statement shape {tpcc-mysql: tpcc-mysql's row-at-a-time statements and report, batched: dbarena's IN-list and multi-row statements, procedures: one stored routine call per transaction, as HammerDB}")
	for i, t := range txTypes {
		fs.IntVarP(&c.RTLimitMS[i], fmt.Sprintf("rt-limit%d", i), fmt.Sprint(i), c.RTLimitMS[i],
			fmt.Sprintf("late limit of %s in milliseconds, as tpcc-mysql's -%d (default: tpcc-mysql's %d ms with --shape tpcc-mysql, the specification's %s with batched)",
				t, i, tpccMySQLLimitMS[i], specLimits[i]))
	}
}

// Validate implements workload.Workload: it parses the string flags and
// reports every problem at once.
func (wl *Workload) Validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c := &wl.cfg
	if c.Warehouses < 1 {
		add("--warehouses must be >= 1, got %d", c.Warehouses)
	}
	if c.Schema != SchemaStandard && c.Schema != SchemaAIDPK {
		add("--schema must be standard or aidpk, got %q", c.Schema)
	}
	if c.FK && c.Schema == SchemaAIDPK {
		add("--fk: the aidpk schema has no foreign keys")
	}
	if c.Client != ClientAuto && c.Client != ClientSQL {
		add("--client must be auto or sql, got %q", c.Client)
	}
	if c.Pipeline && c.Client == ClientSQL {
		add("--pipeline needs the wire client (--client auto)")
	}
	if !validShape(c.Shape) {
		add("--shape must be one of %s, got %q", shapeNames(), c.Shape)
	} else if c.Pipeline && c.Shape != ShapeBatched {
		add("--pipeline needs --shape batched (tpcc-mysql's shape reads rows its own writes changed)")
	}
	for i, v := range c.RTLimitMS {
		if v < 0 {
			add("--rt-limit%d (-%d) must be >= 0 milliseconds, got %d", i, i, v)
		}
	}
	if c.LoadMethod != LoadAuto && c.LoadMethod != LoadInsert {
		add("--load-method must be auto or insert, got %q", c.LoadMethod)
	}
	c.Parts = nil
	for _, p := range strings.Split(wl.parts, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		switch p {
		case PartItems, PartWarehouse, PartCustomer, PartOrders:
			c.Parts = append(c.Parts, p)
		case "":
		default:
			add("--parts: unknown part %q (items, warehouse, customer, orders)", p)
		}
	}
	if len(c.Parts) == 0 {
		add("--parts: name at least one part")
	}
	c.FromW, c.ToW = 0, 0
	if wl.wrange != "" {
		a, b, ok := strings.Cut(wl.wrange, "-")
		from, err1 := strconv.Atoi(strings.TrimSpace(a))
		to, err2 := strconv.Atoi(strings.TrimSpace(b))
		switch {
		case !ok || err1 != nil || err2 != nil:
			add("--warehouse-range must be A-B, got %q", wl.wrange)
		case from < 1 || to < from || to > c.Warehouses:
			add("--warehouse-range %d-%d must lie within 1-%d (--warehouses)", from, to, c.Warehouses)
		default:
			c.FromW, c.ToW = from, to
		}
	}
	ws := strings.Split(wl.weights, ",")
	if len(ws) != 5 {
		add("--weights needs 5 numbers (New-Order,Payment,Order-Status,Delivery,Stock-Level), got %q", wl.weights)
	} else {
		sum := 0
		for i, s := range ws {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 0 || n > 1000 {
				add("--weights: %q is not a number in 0..1000", s)
				continue
			}
			c.Weights[i] = n
			sum += n
		}
		if sum == 0 {
			add("--weights: at least one weight must be > 0")
		}
	}
	return errs
}

// warehouseRange returns the warehouses prepare loads.
func (c *Config) warehouseRange() (int, int) {
	if c.FromW > 0 {
		return c.FromW, c.ToW
	}
	return 1, c.Warehouses
}

// Params implements workload.Workload.
func (wl *Workload) Params() map[string]any {
	c := &wl.cfg
	p := map[string]any{
		"warehouses": c.Warehouses, "schema": c.Schema, "fk": c.FK,
		"weights":        fmt.Sprintf("%d,%d,%d,%d,%d", c.Weights[0], c.Weights[1], c.Weights[2], c.Weights[3], c.Weights[4]),
		"think":          c.Think,
		"bind_warehouse": c.BindWarehouse,
		"client":         c.Client,
		"pipeline":       c.Pipeline,
		"shape":          c.Shape,
	}
	lim := c.limits()
	for i, t := range txTypes {
		p["rt_limit_ms "+t] = float64(lim[i]) / float64(time.Millisecond)
	}
	wl.mu.Lock()
	ri := wl.runInfo
	if ri == nil && wl.found != nil {
		// Before the run: as Ready found the tables; --warehouses, when
		// given, is what the run will use.
		f := *wl.found
		if wl.fs != nil && wl.fs.Changed("warehouses") {
			f.warehouses = c.Warehouses
		}
		p["warehouses"], p["schema"], p["fk"] = f.warehouses, f.schema, f.fk
		if f.seed != 0 {
			p["data_seed"] = f.seed
		}
	}
	if ri != nil {
		p["warehouses"] = ri.warehouses
		p["data_seed"] = ri.seed
		p["schema"], p["fk"] = ri.schema, ri.fk
		p["c_last_load"], p["c_last_run"] = ri.load.CLast, ri.run.CLast
	}
	wl.mu.Unlock()
	return p
}

// errNotPrepared reports a run or check on a database without TPC-C tables.
var errNotPrepared = errors.New("no TPC-C tables here: run `dbarena prepare tpcc` first")
