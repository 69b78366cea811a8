package workload

import (
	"fmt"
	"strings"
)

// Pick finds the workload named on the command line of command cmd: the
// first argument, or any argument that names a registered workload, so
// that sysbench's `oltp_read_write --threads=4 run` order also works. It
// returns the workload and the other arguments.
func (r *Registry) Pick(cmd string, args []string) (Workload, []string, error) {
	known := map[string]bool{}
	for _, n := range r.Names() {
		known[n] = true
	}
	for i, arg := range args {
		if known[arg] {
			w, err := r.New(arg)
			if err != nil {
				return nil, nil, err
			}
			rest := append(append([]string{}, args[:i]...), args[i+1:]...)
			return w, rest, nil
		}
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return nil, nil, fmt.Errorf("unknown workload %q (see `dbarena workloads`)", args[0])
	}
	return nil, nil, fmt.Errorf("name a workload: dbarena %s WORKLOAD [flags] (see `dbarena workloads`)", cmd)
}
