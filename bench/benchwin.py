"""Steady-state window measurement shared by the bench scripts that compare
dbarena with a peer tool (pgbench-compare, sysbench-compare).

A run is measured in a window: --settle seconds after the tool starts, for
--window seconds. The work done in the window is counted by the server, the
same way for both tools (a counter the caller reads), and the client's CPU
in the window is the run time of all its threads
(/proc/PID/task/*/schedstat, nanoseconds). Start-up, connecting and the end
of the run stay outside the window for both tools. Pairs of runs are
compared by the geometric mean of their ratios with a 95% interval.
"""
import glob
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# Student's t at 97.5% by degrees of freedom (a 95% two-sided interval).
T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
        11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 17: 2.11, 18: 2.10, 19: 2.09,
        20: 2.09, 25: 2.06, 30: 2.04, 40: 2.02, 60: 2.00}


def t975(df):
    """Student's t for df degrees of freedom, rounded towards the next
    tabulated df below (a slightly wider interval)."""
    return T975[max(k for k in T975 if k <= df)]


def paired(ratios):
    """Geometric mean of ratios, its 95% interval, as (mean, low, high)."""
    logs = [math.log(r) for r in ratios]
    m = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(m), float("nan"), float("nan")
    h = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def ci(ratios):
    """paired(ratios) as "mean [low, high]"."""
    m, lo, hi = paired(ratios)
    return f"{m:.3f} [{lo:.3f}, {hi:.3f}]"


def sh(args, **kw):
    return subprocess.run(args, check=True, text=True, capture_output=True, **kw)


def timed(args, env=None):
    """Run args; return (stdout, client cpu seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(args, text=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"command failed ({out.returncode}): {' '.join(args)}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def cpu_ns(pid):
    """Run time of the threads of process pid so far, in nanoseconds, and
    their ids (a thread that ended takes its time with it)."""
    total, tids = 0, set()
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
            tids.add(path.split("/")[4])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total, tids


def measure(args, env, count, settle, window, started=None, tally=None):
    """Run args, reading the process's CPU and the server's counter count()
    at settle and settle+window seconds after its start, or, with started (a
    compiled regular expression), after the first line of its output that
    matches (the tool's first interval report: its run is under way, set-up
    and connecting done). Without count, tally(stdout) counts the window's
    work from the tool's own output once it ended. Returns (stdout, counted
    per second in the window, client CPU microseconds per count)."""
    with tempfile.NamedTemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        p = subprocess.Popen(args, stdout=out, stderr=err, text=True, env=env)
        if started is not None:
            with open(out.name) as progress:
                seen = ""
                while not started.search(seen):
                    if p.poll() is not None:
                        sys.exit(f"the run ended before its first interval report: {' '.join(args)}")
                    time.sleep(0.1)
                    seen += progress.read()
            start = time.monotonic()
        time.sleep(max(0.0, start + settle - time.monotonic()))
        (c0, tids0), t0, x0 = cpu_ns(p.pid), time.monotonic(), count() if count else 0
        # The window ends at a fixed time after the start, however long the
        # first count took on a busy server: before the run ends.
        time.sleep(max(0.0, start + settle + window - time.monotonic()))
        (c1, tids1), t1, x1 = cpu_ns(p.pid), time.monotonic(), count() if count else 0
        rc = p.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if rc != 0:
        sys.exit(f"command failed ({rc}): {' '.join(args)}\n{stdout[-2000:]}\n{stderr[-2000:]}")
    if tids0 - tids1:
        sys.exit(f"{len(tids0 - tids1)} of the client's threads ended during the window, taking their CPU "
                 f"time with them (the run ended early?): {' '.join(args)}")
    if tally:
        x1, t1 = tally(stdout), t0 + window
    if x1 <= x0:
        sys.exit(f"nothing counted in the window ({settle}s after the start, for {window}s): {' '.join(args)}")
    n = x1 - x0
    return stdout, n / (t1 - t0), (c1 - c0) / 1e3 / n
