package weir

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CPUReader reads the CPU use a Shedder wants, in thousandths of what the
// process may use, right under cgroup v2 and inside containers: the use is
// the cgroup's usage_usec (cpu.stat) where the process's cgroup v2 is
// readable, else the process's own CPU time (getrusage); the capacity is
// the CPUs the process may run on (runtime.NumCPU, which follows its
// affinity) held to the tightest cpu.max quota from its cgroup up to the
// root. go-zero once read a cgroup v1 path under v2 and got the host's CPU;
// this reads the process's own cgroup from /proc/self/cgroup.
//
// Each Read answers the use since the previous Read (the first, since the
// reader was made). Safe for many goroutines.
type CPUReader struct {
	mu       sync.Mutex
	fsys     fs.FS
	dir      string // the cgroup's directory inside fsys; "" for none
	capacity float64
	used     func() time.Duration
	wall     func() time.Duration
	lastUsed time.Duration
	lastWall time.Duration
	cgroup   bool
}

// NewCPUReader reads the machine's own /proc and /sys/fs/cgroup.
func NewCPUReader() *CPUReader {
	return newCPUReader(os.DirFS("/"), runtime.NumCPU(), Now)
}

func newCPUReader(fsys fs.FS, cpus int, wall func() time.Duration) *CPUReader {
	r := &CPUReader{fsys: fsys, wall: wall}
	r.dir = cgroupDir(fsys)
	r.capacity = float64(cpus)
	if q, ok := cgroupQuota(fsys, r.dir); ok && q < r.capacity {
		r.capacity = q
	}
	if r.dir != "" {
		if _, ok := cgroupUsage(fsys, r.dir); ok {
			r.used = func() time.Duration { u, _ := cgroupUsage(r.fsys, r.dir); return u }
			r.cgroup = true
		}
	}
	if r.used == nil {
		r.used = processCPU
	}
	r.lastUsed, r.lastWall = r.used(), r.wall()
	return r
}

// Capacity is the CPUs the reader divides by (a quota of 1.5 CPUs is 1.5).
func (r *CPUReader) Capacity() float64 { return r.capacity }

// Cgroup reports whether the reader reads a cgroup v2's usage (else the
// process's own CPU time).
func (r *CPUReader) Cgroup() bool { return r.cgroup }

// Read is the CPU use since the last Read, in thousandths of Capacity,
// held to [0, 1000]; 0 when no time has passed.
func (r *CPUReader) Read() int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	used, wall := r.used(), r.wall()
	du, dw := used-r.lastUsed, wall-r.lastWall
	if dw <= 0 {
		return 0
	}
	r.lastUsed, r.lastWall = used, wall
	p := float64(du) / (float64(dw) * r.capacity) * 1000
	switch {
	case p < 0:
		return 0
	case p > 1000:
		return 1000
	}
	return int32(p)
}

// cgroupDir is the process's cgroup v2 directory under sys/fs/cgroup, from
// the "0::/path" line of /proc/self/cgroup; "" without cgroup v2.
func cgroupDir(fsys fs.FS) string {
	b, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			dir := path.Join("sys/fs/cgroup", path.Clean("/"+rest))
			if _, err := fs.Stat(fsys, path.Join(dir, "cgroup.controllers")); err == nil {
				return dir
			}
			// Inside a container whose cgroup namespace shows its own root
			// as "/", or one that mounts only its own cgroup.
			if _, err := fs.Stat(fsys, "sys/fs/cgroup/cgroup.controllers"); err == nil {
				return "sys/fs/cgroup"
			}
		}
	}
	return ""
}

// cgroupQuota is the tightest cpu.max quota (quota / period CPUs) from dir
// up to the cgroup root.
func cgroupQuota(fsys fs.FS, dir string) (float64, bool) {
	best, found := 0.0, false
	for d := dir; d != "" && strings.HasPrefix(d, "sys/fs/cgroup"); d = path.Dir(d) {
		if b, err := fs.ReadFile(fsys, path.Join(d, "cpu.max")); err == nil {
			f := strings.Fields(string(b))
			if len(f) == 2 && f[0] != "max" {
				q, e1 := strconv.ParseFloat(f[0], 64)
				p, e2 := strconv.ParseFloat(f[1], 64)
				if e1 == nil && e2 == nil && q > 0 && p > 0 && (!found || q/p < best) {
					best, found = q/p, true
				}
			}
		}
		if d == "sys/fs/cgroup" {
			break
		}
	}
	return best, found
}

// cgroupUsage is the cgroup's usage_usec from cpu.stat.
func cgroupUsage(fsys fs.FS, dir string) (time.Duration, bool) {
	b, err := fs.ReadFile(fsys, path.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, false
			}
			return time.Duration(us) * time.Microsecond, true
		}
	}
	return 0, false
}

// processCPU is the process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
