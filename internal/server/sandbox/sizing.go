package sandbox

import (
	"strconv"
	"syscall"
)

// Every sandbox, whatever its profile, is sized for the largest run dbarena
// ships: a workload at up to MaxThreadsMySQL (MySQL family) or
// MaxThreadsPostgres (PostgreSQL) connections, each holding its prepared
// statements, plus ReserveConns for the monitor, the counter reads and an
// administrator. Settings given with --set still win.
const (
	MaxThreadsMySQL    = 2048
	MaxThreadsPostgres = 1000
	ReserveConns       = 16
)

const (
	// mysqlMaxPrepared is valid on MariaDB and MySQL (whose largest
	// value is 4194304); at 2048 connections it leaves 512 statements per
	// connection.
	mysqlMaxPrepared = 1048576
	// mysqlTableCache covers every connection holding TPC-C's nine tables
	// (2048 x 9 = 18432) when the file limit allows it.
	mysqlTableCache = 20000
	// mysqlTableInstances is the most table cache instances wanted.
	mysqlTableInstances = 8
	// mysqlOtherFiles are files besides sockets and table cache entries:
	// InnoDB's tablespaces and logs, binary logs, temporary files.
	mysqlOtherFiles = 256
	// maxFileLimit caps the file budget (Linux's default fs.nr_open).
	maxFileLimit = 1 << 20
	// pgSuperuserReserved is PostgreSQL's superuser_reserved_connections
	// default: those slots are not open to the workload account.
	pgSuperuserReserved = 3
)

// mysqlSizing returns the limits of a MySQL-family server allowed
// fileLimit open files (the hard RLIMIT_NOFILE it starts with; 0 for
// unknown) and conns connections (0: the default, sized for
// MaxThreadsMySQL); instances is false for servers without several table
// cache instances (MariaDB before 10.2.2). mysqld raises its own soft limit to open_files_limit and, when
// the files it wants (MariaDB: 10 + max_connections + table_open_cache x 2
// x table_open_cache_instances) exceed it, silently shrinks the table
// cache or even max_connections: the values here already fit.
func mysqlSizing(fileLimit uint64, conns int64, instances bool) []Setting {
	if conns <= 0 {
		conns = MaxThreadsMySQL + ReserveConns
	}
	budget := int64(maxFileLimit)
	if fileLimit > 0 && fileLimit < maxFileLimit {
		budget = int64(fileLimit)
	}
	fixed := 10 + conns + mysqlOtherFiles
	cache, inst := int64(mysqlTableCache), int64(mysqlTableInstances)
	if !instances {
		inst = 1
	}
	for inst > 1 && fixed+cache*2*inst > budget {
		inst /= 2
	}
	if fixed+cache*2*inst > budget {
		cache = max((budget-fixed)/2, 400)
	}
	files := min(budget, fixed+cache*2*inst)
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	out := []Setting{
		{"max_connections", itoa(conns)},
		{"max_prepared_stmt_count", itoa(mysqlMaxPrepared)},
		{"open_files_limit", itoa(files)},
		{"table_open_cache", itoa(cache)},
		{"table_definition_cache", "4096"},
		// Connections opened at once wait in the listen queue.
		{"back_log", itoa(conns)},
	}
	if instances {
		out = append(out, Setting{"table_open_cache_instances", itoa(inst)})
	}
	return out
}

// postgresSizing returns the connection limit of a PostgreSQL sandbox.
// Each connection is a process with its own file limit
// (max_files_per_process) and a slot in shared memory (PGPROC, lock table:
// about 20 MB at 1000 connections); PostgreSQL 10 and newer use POSIX
// semaphores in that shared memory on Linux, so no System V limits apply.
func postgresSizing() []Setting {
	return []Setting{
		{"max_connections", strconv.Itoa(MaxThreadsPostgres + ReserveConns + pgSuperuserReserved)},
		{"superuser_reserved_connections", strconv.Itoa(pgSuperuserReserved)},
	}
}

// fileLimit is the hard RLIMIT_NOFILE servers started now inherit, 0 when
// unknown.
func fileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Max
}

// raiseFileLimit sets this process's soft RLIMIT_NOFILE to its hard limit,
// so that servers started from it inherit the most files allowed (Go
// raises its own soft limit at start-up but gives children the original
// one, often 1024, unless the program sets the limit itself).
func raiseFileLimit() {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	lim.Cur = lim.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
