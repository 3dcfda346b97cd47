//go:build linux

package bench

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, which
// Linux fixes at 100 on every architecture it exports to user space.
const userHZ = 100

// processCPU is the user + system CPU time process pid has used so far;
// pid 0 is this process (from getrusage, at microsecond resolution). For
// another process it is the run time of its threads, in nanoseconds, from
// /proc/PID/task/*/schedstat (threads that have exited no longer count; a
// Go program keeps its threads), or else utime + stime of /proc/PID/stat,
// in ticks of 10 ms.
func processCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0, fmt.Errorf("getrusage: %w", err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
	}
	if d, err := threadsRunTime(pid); err == nil {
		return d, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu time of pid %d: %w", pid, err)
	}
	d, err := statCPU(b)
	if err != nil {
		return 0, fmt.Errorf("cpu time of pid %d: %w", pid, err)
	}
	return d, nil
}

// statCPU reads utime + stime from the contents of a /proc/PID/stat.
func statCPU(b []byte) (time.Duration, error) {
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: the fields from 3 on start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("stat: no command field")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("stat: cpu ticks %q: want a count", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// threadsRunTime sums the time on CPU of process pid's threads, the first
// field of /proc/PID/task/TID/schedstat.
func threadsRunTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no schedstat for pid %d", pid)
	}
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return 0, fmt.Errorf("%s: empty", t)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		ns += n
	}
	return time.Duration(ns), nil
}

// processIO returns read_bytes and write_bytes of /proc/PID/io: the bytes
// process pid (0: this process) has caused to be read from and written to
// storage devices.
func processIO(pid int) (read, write int64, err error) {
	p := "/proc/self/io"
	if pid != 0 {
		p = fmt.Sprintf("/proc/%d/io", pid)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, 0, fmt.Errorf("i/o counters: %w", err)
	}
	var haveR, haveW bool
	for _, line := range strings.Split(string(b), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		switch name {
		case "read_bytes":
			read, haveR, err = n, true, perr
		case "write_bytes":
			write, haveW, err = n, true, perr
		}
		if err != nil {
			return 0, 0, fmt.Errorf("i/o counters %s: %s: %w", p, name, err)
		}
	}
	if !haveR || !haveW {
		return 0, 0, fmt.Errorf("i/o counters: %s has no read_bytes/write_bytes", p)
	}
	return read, write, nil
}

// listenerPID finds the process listening on addr's TCP port on this host:
// the socket's inode from /proc/net/tcp{,6}, then the process holding it
// among /proc/*/fd.
func listenerPID(addr string) (int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("server pid: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !(ip.IsLoopback() || ip.IsUnspecified())) {
		return 0, fmt.Errorf("server pid: %s is not a loopback address (pass --server-pid)", host)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("server pid: port %q: %w", portStr, err)
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && p == port {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("server pid: no socket of this host listens on port %d", port)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && inodes[link] {
			pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
			if err == nil {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("server pid: the socket listening on port %d belongs to no process whose descriptors are readable here (pass --server-pid)", port)
}

// dropPageCache writes back dirty pages and drops the clean ones, so that
// the next reads come from the device. It needs root.
func dropPageCache() error {
	syscall.Sync()
	err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0)
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("dropping the page cache needs root: %w", err)
	}
	if err != nil {
		return fmt.Errorf("dropping the page cache: %w", err)
	}
	return nil
}
