package oltp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/workload"
)

var (
	_ workload.Readier  = (*Workload)(nil)
	_ workload.Demander = (*Workload)(nil)
	_ workload.Readier  = (*BulkInsert)(nil)
	_ workload.Demander = (*BulkInsert)(nil)
)

// prepareHint is the prepare command for this configuration: the table
// count and size, and the options that shape the tables where they are not
// the defaults.
func (wl *Workload) prepareHint() string {
	c, d := &wl.cfg, DefaultConfig()
	b := []string{"dbarena prepare", wl.spec.name, "--tables", strconv.Itoa(c.Tables), "--table-size", strconv.Itoa(c.TableSize)}
	onOff := func(v bool) string {
		if v {
			return "on"
		}
		return "off"
	}
	if c.AutoInc != d.AutoInc {
		b = append(b, "--auto-inc="+onOff(c.AutoInc))
	}
	if c.Secondary != d.Secondary {
		b = append(b, "--secondary="+onOff(c.Secondary))
	}
	if c.CreateSecondary != d.CreateSecondary {
		b = append(b, "--create-secondary="+onOff(c.CreateSecondary))
	}
	if c.MySQLStorageEngine != d.MySQLStorageEngine {
		b = append(b, "--mysql-storage-engine", c.MySQLStorageEngine)
	}
	return strings.Join(b, " ")
}

// cleanupHint is the cleanup command that drops this configuration's tables.
func (wl *Workload) cleanupHint() string {
	return "dbarena cleanup " + wl.spec.name + " --tables " + strconv.Itoa(wl.cfg.Tables)
}

// Ready implements workload.Readier. It reads the catalog, then checks
// each table by primary-key lookups only, whatever its size: where the
// index k_N is there, the load that creates it last ended, so only id
// table_size is looked up (a table made with a smaller --table-size lacks
// it); elsewhere the last id of every block (see blockEndsPresent), about
// 40 ms per million rows. Only a table found short is counted, for the
// message.
func (wl *Workload) Ready(ctx context.Context, env workload.Env) error {
	c := &wl.cfg
	if wl.spec.singleTable && c.Tables != 1 {
		return errors.New("this benchmark does not support --tables > 1")
	}
	infos, err := inspect(ctx, env, c.Tables)
	if err != nil {
		return err
	}
	var missing []string
	for t := 1; t <= c.Tables; t++ {
		if !infos[t].exists {
			missing = append(missing, tableName(t))
		}
	}
	if len(missing) > 0 {
		return &workload.NotReadyError{Problem: doNotExist(missing), Hint: wl.prepareHint()}
	}
	rows := int64(wl.loadRows())
	var problems []string
	short := true
	for t := 1; t <= c.Tables; t++ {
		if rows > 0 {
			var whole bool
			if infos[t].kIndex {
				whole, err = hasID(ctx, env.DB, t, rows)
			} else {
				whole, err = blockEndsPresent(ctx, env.DB, t, rows)
			}
			if err != nil {
				return err
			}
			if !whole {
				n, err := countIDs(ctx, env.DB, t, rows)
				if err != nil {
					return err
				}
				problems = append(problems, fmt.Sprintf("table %s holds %d of the %d rows --table-size asks for", tableName(t), n, rows))
			}
		}
		if c.CreateSecondary && !infos[t].kIndex {
			problems = append(problems, fmt.Sprintf("table %s has no index k_%d (its prepare did not finish)", tableName(t), t))
			short = false
		}
	}
	if len(problems) > 0 {
		return &workload.NotReadyError{Problem: strings.Join(problems, "; "), Hint: wl.prepareHint(), Short: short}
	}
	return nil
}

// doNotExist is "table sbtest3 does not exist" or "tables sbtest3, sbtest4
// do not exist".
func doNotExist(names []string) string {
	if len(names) == 1 {
		return "table " + names[0] + " does not exist"
	}
	return "tables " + strings.Join(names, ", ") + " do not exist"
}

// Demand implements workload.Demander. With --ps-mode=auto each worker
// prepares one statement per statement kind and table (thread_init() of
// oltp_common.lua), and select_random_* one more; BEGIN, COMMIT and
// oltp_insert's INSERT go as text on both clients (the drivers interpolate
// or use the simple protocol, see package dialect).
func (wl *Workload) Demand(threads int) workload.Demand {
	d := workload.Demand{Connections: threads, Tables: wl.cfg.Tables}
	if wl.cfg.PSMode != PSAuto {
		return d
	}
	if wl.spec.kinds != nil {
		d.PreparedPerConn = len(wl.spec.kinds(&wl.cfg)) * wl.cfg.Tables
	}
	if wl.spec.preparesCustom {
		d.PreparedPerConn++
	}
	return d
}

// Ready implements workload.Readier: the tables sbtest1..threads exist.
func (b *BulkInsert) Ready(ctx context.Context, env workload.Env) error {
	n := b.runThreads()
	infos, err := inspect(ctx, env, n)
	if err != nil {
		return err
	}
	var missing []string
	for t := 1; t <= n; t++ {
		if !infos[t].exists {
			missing = append(missing, tableName(t))
		}
	}
	if len(missing) > 0 {
		return &workload.NotReadyError{Problem: doNotExist(missing), Hint: "dbarena prepare bulk_insert --threads " + strconv.Itoa(n)}
	}
	return nil
}

// Demand implements workload.Demander: one table per thread, statements
// sent as text.
func (*BulkInsert) Demand(threads int) workload.Demand {
	return workload.Demand{Connections: threads, Tables: threads}
}
