"""Steady-state window measurement shared by the bench scripts that compare
dbarena with a peer tool (pgbench-compare, sysbench-compare).

A run is measured in a window: --settle seconds after the tool starts, for
--window seconds. The work done in the window is counted by the server, the
same way for both tools (a counter the caller reads), and the client's CPU
in the window is the run time of all its threads
(/proc/PID/task/*/schedstat, nanoseconds). Start-up, connecting and the end
of the run stay outside the window for both tools. Pairs of runs are
compared by the geometric mean of their ratios with a 95% interval.

Each run is also measured whole: the user and system CPU of the process
and all its threads and children from start to exit (wait4's rusage), which
the callers divide by the queries the tool reports for its whole run, as a
user pays for `tool ... --time N`. Both views are reported (Whole).
"""
import atexit
import collections
import glob
import json
import math
import os
import shutil
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


def sandbox(dbarena, name, flavor, keep, args=()):
    """Starts sandbox name of flavor (--profile fast, then args) in
    $DBARENA_HOME, or in a new home removed at exit; unless keep, the
    sandbox is removed at exit too. Returns the environment with
    DBARENA_HOME, the sandbox's `server show --json` and its password (mode
    0600 in the home, never on a command line)."""
    home = os.environ.get("DBARENA_HOME") or tempfile.mkdtemp(prefix="dbarena-bench-")
    env = dict(os.environ, DBARENA_HOME=home)
    sh([dbarena, "server", "start", name, "--flavor", flavor, "--profile", "fast", *args], env=env)
    if not keep:
        own_home = not os.environ.get("DBARENA_HOME")

        def remove():
            subprocess.run([dbarena, "server", "rm", name], env=env, capture_output=True)
            if own_home:
                shutil.rmtree(home, ignore_errors=True)
        atexit.register(remove)
    info = json.loads(sh([dbarena, "server", "show", name, "--json"], env=env).stdout)
    with open(os.path.join(home, "sandboxes", name, "password")) as f:
        password = f.readline().rstrip("\n")
    return env, info, password


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


# A measured run: the tool's stdout; the window's rate (counted per second)
# and client CPU microseconds per count; the whole process's user and
# system CPU seconds (wait4) and its wall seconds.
Run = collections.namedtuple("Run", "stdout rate us user sys wall")


def measure(args, env, count, settle, window, started=None, tally=None):
    """Run args, reading the process's CPU and the server's counter count()
    at settle and settle+window seconds after its start, or, with started (a
    compiled regular expression), after the first line of its output that
    matches (the tool's first interval report: its run is under way, set-up
    and connecting done). Without count, tally(stdout) counts the window's
    work from the tool's own output once it ended. Returns a Run."""
    with tempfile.NamedTemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = begun = time.monotonic()
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
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - begun
        rc = p.returncode = os.waitstatus_to_exitcode(status)
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
    return Run(stdout, n / (t1 - t0), (c1 - c0) / 1e3 / n, ru.ru_utime, ru.ru_stime, wall)


class Whole:
    """The whole-process view of a cell's pairs: per tool, its own reported
    rate for the whole run and its user, system and total CPU microseconds
    per unit (query or transaction) of the whole run; the ratios
    second/first as geometric means of the pairs with 95% intervals."""

    def __init__(self, first, second, rate="qps", per="q"):
        self.names, self.rate, self.per = (first, second), rate, per
        self.pairs = []  # ((rate, user us, sys us), (rate, user us, sys us))

    def add(self, first, second):
        """Adds a pair: for each tool (Run, units done in the whole run,
        its own reported rate)."""
        self.pairs.append(tuple((rate, r.user / n * 1e6, r.sys / n * 1e6) for r, n, rate in (first, second)))

    def line(self):
        a, b = self.names
        med = [[statistics.median(p[t][i] for p in self.pairs) for i in range(3)] for t in (0, 1)]

        def col(i):
            if i == 3:
                return ci([(p[1][1] + p[1][2]) / (p[0][1] + p[0][2]) for p in self.pairs])
            return ci([p[1][i] / p[0][i] for p in self.pairs])
        tot = [m[1] + m[2] for m in med]
        return (f"    whole process, {a} / {b} = ratio {b}/{a}: own {self.rate} {med[0][0]:.0f} / {med[1][0]:.0f} = {col(0)}; "
                f"us/{self.per} user {med[0][1]:.2f} / {med[1][1]:.2f} = {col(1)}, "
                f"sys {med[0][2]:.2f} / {med[1][2]:.2f} = {col(2)}, total {tot[0]:.2f} / {tot[1]:.2f} = {col(3)}")
