package cli

// compareUsage is `dbarena help compare`.
const compareUsage = `dbarena compare ID_A ID_B [--threshold PCT] [--results PATH|DSN]

  Sets run B against run A (the baseline). An ID is a run number, or a sharded
  run's --run-id. Each side takes in its rounds: the other runs of its plan cell,
  or runs tagged with another round=N and otherwise alike, for 95% confidence
  intervals.

  Output:
    A (baseline) / B     each side named by its runs, workload, server and version,
                         where it ran (sandbox NAME, the masked DSN, or an imported
                         sql-bench file), threads and start time
    the figures table    throughput, latency, errors: A, B, B vs A, the 95% interval
                         of the ratio and a verdict (single runs: cannot judge)
    micro runs           (micro, or sql-bench files brought in by results import)
                         seconds per operation side by side, the winner, or "tie"
                         when the difference is within the noise: the ratio's 95%
                         interval includes 1 (rounds), within 5% (single runs), or
                         within the coarser clock (sql-bench's whole seconds);
                         "?" marks wrong results, "~" extrapolated seconds
    replays              statements slower or faster by more than --threshold
    What differs         workload, server version, sandbox or target, threads,
                         parameters, the settings dbarena records, the server
                         variables that differ (beside ports, paths and ids), tags

  Flags:
    --threshold PCT      replays: percent by which a statement must be slower or
                         faster to count as such (default 20)
    --results PATH|DSN   results store (default $DBARENA_HOME/results.db)

  Examples:
    dbarena compare 12 14
    dbarena results import sql-bench/output/RUN-mysql-Linux_x86_64 && dbarena compare 15 16
`
