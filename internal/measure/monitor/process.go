package monitor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture dbarena runs on.
const clockTicks = 100

// procStat is what dbarena reads of /proc/PID/stat (proc(5)).
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime uint64 // clock ticks
}

// ticks is the CPU time of the process and of its children it has waited
// for: a backend that exits moves its time into its parent's cutime and
// cstime, so the sum over a process tree never goes backwards.
func (p procStat) ticks() uint64 { return p.utime + p.stime + p.cutime + p.cstime }

// parseProcStat reads /proc/PID/stat. The command name (field 2) is in
// parentheses and may hold spaces and parentheses itself, so the fields
// are counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime..cstime are fields 14..17.
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("stat: %d fields after the command name, want at least 15", len(f))
	}
	var v [4]uint64
	for k := range v {
		n, err := strconv.ParseUint(f[11+k], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("stat field %d: %w", 14+k, err)
		}
		v[k] = n
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("stat ppid: %w", err)
	}
	return procStat{ppid: ppid, utime: v[0], stime: v[1], cutime: v[2], cstime: v[3]}, nil
}

// procMem is a process's resident memory from /proc/PID/status, in kB:
// anonymous memory is private, file and shared-memory pages (binaries,
// PostgreSQL's shared buffers) are shared between the processes of a tree.
type procMem struct{ anon, file, shmem, rss uint64 }

// parseProcStatus reads the Rss* lines of /proc/PID/status.
func parseProcStatus(r io.Reader) (procMem, error) {
	var m procMem
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Rss") && !strings.HasPrefix(line, "VmRSS") {
			continue
		}
		name, rest, _ := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("status %s: %w", name, err)
		}
		switch name {
		case "VmRSS":
			m.rss = v
		case "RssAnon":
			m.anon = v
		case "RssFile":
			m.file = v
		case "RssShmem":
			m.shmem = v
		}
	}
	return m, sc.Err()
}

// treeRSSkB is the resident memory of a process tree without counting
// shared pages once per process: the private (anonymous) memory of every
// process plus the largest shared part of any one of them. Kernels before
// 4.5 have no RssAnon: then it is the largest VmRSS.
func treeRSSkB(mems []procMem) uint64 {
	var anon, shared, largest uint64
	split := false
	for _, m := range mems {
		if m.anon > 0 || m.file > 0 || m.shmem > 0 {
			split = true
		}
		anon += m.anon
		shared = max(shared, m.file+m.shmem)
		largest = max(largest, m.rss)
	}
	if !split {
		return largest
	}
	return anon + shared
}

// ProcessSampler reads a process's CPU and resident memory, optionally
// with its direct children (PostgreSQL's backends and background
// processes are children of the postmaster). Keys: PREFIX.cpu (percent of
// one core: 250 is two and a half cores busy), PREFIX.rss_mb and, with
// children, PREFIX.procs.
//
// The CPU time of a tree is the root's own time plus that of the children
// it has reaped (cutime, cstime) plus the live children's: a backend that
// exits moves its time from the live sum into its parent's, so the total
// grows steadily and its growth over an interval is the tree's CPU use.
type ProcessSampler struct {
	procRoot string
	prefix   string
	pid      int
	children bool
	prev     uint64 // the tree's ticks at the previous sample
	have     bool
	at       time.Time
	stat     procFile
	status   procFile
	kids     procFile
}

var _ Sampler = (*ProcessSampler)(nil)

// NewProcessSampler samples process pid under procRoot, naming its keys
// prefix.cpu, prefix.rss_mb ("server", "client"). With children, the
// process's direct children count too.
func NewProcessSampler(procRoot, prefix string, pid int, children bool) *ProcessSampler {
	return &ProcessSampler{procRoot: procRoot, prefix: prefix, pid: pid, children: children}
}

// Name implements Sampler.
func (s *ProcessSampler) Name() string { return s.prefix + " process" }

// tree lists the process and, if asked, its direct children: from
// /proc/PID/task/PID/children (CONFIG_PROC_CHILDREN), or else by scanning
// every process's parent.
func (s *ProcessSampler) tree() ([]int, error) {
	pids := []int{s.pid}
	if !s.children {
		return pids, nil
	}
	s.kids.path = filepath.Join(s.procRoot, strconv.Itoa(s.pid), "task", strconv.Itoa(s.pid), "children")
	if r, err := s.kids.read(); err == nil {
		b, _ := io.ReadAll(r)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return pids, nil
	}
	entries, err := os.ReadDir(s.procRoot)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == s.pid {
			continue
		}
		if st, err := s.readStat(pid); err == nil && st.ppid == s.pid {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

func (s *ProcessSampler) readStat(pid int) (procStat, error) {
	s.stat.path = filepath.Join(s.procRoot, strconv.Itoa(pid), "stat")
	if _, err := s.stat.read(); err != nil {
		return procStat{}, err
	}
	return parseProcStat(s.stat.buf)
}

// Sample implements Sampler. Children that exit between listing and
// reading are skipped (their time reaches the parent); the process itself
// gone is an error.
func (s *ProcessSampler) Sample(_ context.Context, now time.Time, out map[string]float64) error {
	pids, err := s.tree()
	if err != nil {
		return err
	}
	mems := make([]procMem, 0, len(pids))
	var ticks uint64
	n := 0
	for i, pid := range pids {
		st, err := s.readStat(pid)
		if err != nil {
			if i == 0 {
				return fmt.Errorf("pid %d: %w", pid, err)
			}
			continue
		}
		ticks += st.ticks()
		n++
		s.status.path = filepath.Join(s.procRoot, strconv.Itoa(pid), "status")
		if r, err := s.status.read(); err == nil {
			if m, err := parseProcStatus(r); err == nil {
				mems = append(mems, m)
			}
		}
	}
	if s.have {
		if secs := now.Sub(s.at).Seconds(); secs > 0 {
			var spent uint64
			if ticks > s.prev { // a child gone but not yet reaped may lower the sum
				spent = ticks - s.prev
			}
			out[s.prefix+".cpu"] = float64(spent) / clockTicks / secs * 100
		}
	}
	out[s.prefix+".rss_mb"] = float64(treeRSSkB(mems)) / 1024
	if s.children {
		out[s.prefix+".procs"] = float64(n)
	}
	s.prev, s.have, s.at = ticks, true, now
	return nil
}
