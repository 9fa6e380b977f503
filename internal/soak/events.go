package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var client = &http.Client{Timeout: 5 * time.Second}

// reloads alternates the legacy file between its two versions and asks
// orderly to reload, every -reload-every, until the end. Each reload must
// answer 200 with the next generation, and the flip path, which only the
// reloads touch, must then answer as that version says: 403 (Deny from
// all) under A, 401 (Require valid-user) under B.
type reloads struct {
	ok, failed int
	slowest    time.Duration
	errs       []string
}

func (r *reloads) run(o options, t0, end time.Time) {
	tick := time.NewTicker(o.reloadEvery)
	defer tick.Stop()
	for gen := 2; ; gen++ {
		<-tick.C
		if time.Now().After(end) {
			return
		}
		if err := r.once(o, gen); err != nil {
			r.failed++
			if len(r.errs) < 10 {
				r.errs = append(r.errs, fmt.Sprintf("at %.1fs, generation %d: %v", time.Since(t0).Seconds(), gen, err))
			}
			// Assume the generation moved on if orderly says so.
			if g, err := generation(o.metrics); err == nil {
				gen = g
			}
			continue
		}
		r.ok++
	}
}

func (r *reloads) once(o options, gen int) error {
	src, want := o.legacyA, http.StatusForbidden
	if gen%2 == 0 {
		src, want = o.legacyB, http.StatusUnauthorized
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(o.legacyFile), ".soak-legacy.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, o.legacyFile); err != nil {
		return err
	}
	start := time.Now()
	resp, err := client.Post("http://"+o.admin+"/-/reload", "text/plain", nil)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.slowest = max(r.slowest, time.Since(start))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), fmt.Sprintf("reloaded: generation %d\n", gen)) {
		return fmt.Errorf("POST /-/reload: %d %q", resp.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+o.target+"/flip/", nil)
	req.Header.Set("X-Forwarded-For", "10.255.0.1")
	resp, err = client.Do(req)
	if err != nil {
		return fmt.Errorf("GET /flip/: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("GET /flip/ after the reload: %d, want %d", resp.StatusCode, want)
	}
	return nil
}

// restart is the backend's stop and start, as offsets from the start.
type restart struct {
	stop, gone, start, back, ready time.Duration
	err                            error
}

// restartBackend stops the backend by its pid (SIGTERM), waits until it
// is gone, leaves it down for -down, starts it again with -backend-cmd,
// and notes when it answers again directly and when orderly is ready.
func restartBackend(o options, t0 time.Time, pid *atomic.Int64) (r restart) {
	since := func() time.Duration { return time.Since(t0) }
	r.stop = since()
	if err := syscall.Kill(o.backendPID, syscall.SIGTERM); err != nil {
		r.err = fmt.Errorf("stopping the backend (pid %d): %v", o.backendPID, err)
		return
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if gone(o.backendPID) && !answers(o.backend) {
			break
		}
		if time.Now().After(deadline) {
			r.err = fmt.Errorf("the backend (pid %d) still runs 15s after SIGTERM", o.backendPID)
			return
		}
	}
	r.gone = since()
	time.Sleep(o.downFor)
	cmd := exec.Command("sh", "-c", "exec "+o.backendCmd)
	if o.backendLog != "" {
		if f, err := os.OpenFile(o.backendLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			cmd.Stdout, cmd.Stderr = f, f
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.start = since()
	if err := cmd.Start(); err != nil {
		r.err = fmt.Errorf("starting the backend again: %v", err)
		return
	}
	pid.Store(int64(cmd.Process.Pid))
	if o.backendPIDFile != "" {
		os.WriteFile(o.backendPIDFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	}
	go cmd.Wait() // reap it if it exits while the soak runs
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if r.back == 0 && answers(o.backend) {
			r.back = since()
		}
		if r.back != 0 {
			if resp, err := client.Get("http://" + o.admin + "/-/ready"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					r.ready = since()
					return
				}
			}
		}
		if time.Now().After(deadline) {
			r.err = fmt.Errorf("the backend or orderly not ready 15s after the backend's start (back at %v)", r.back)
			return
		}
	}
}

// gone reports whether pid has exited (no process, or a zombie).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// answers reports whether an HTTP server answers GET / at addr.
func answers(addr string) bool {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode < 500
}

// slowloris opens -slow connections that send a request line and then a
// header a byte every -slow-interval, never finishing it, from start to
// end; a connection orderly closes is opened again. It notes how long
// orderly let each live.
type slowloris struct {
	mu       sync.Mutex
	opened   int
	cut      []time.Duration // lifetimes of the connections orderly closed
	ports    map[int]bool
	dialErrs int
}

func (s *slowloris) run(o options, end time.Time) {
	var wg sync.WaitGroup
	for range o.slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				s.one(o, end)
			}
		}()
	}
	wg.Wait()
}

func (s *slowloris) one(o options, end time.Time) {
	nc, err := net.DialTimeout("tcp", o.target, 5*time.Second)
	if err != nil {
		s.mu.Lock()
		s.dialErrs++
		s.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		return
	}
	defer nc.Close()
	port := nc.LocalAddr().(*net.TCPAddr).Port
	s.mu.Lock()
	s.opened++
	s.ports[port] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.ports, port)
		s.mu.Unlock()
	}()
	opened := time.Now()
	closed := func() {
		s.mu.Lock()
		s.cut = append(s.cut, time.Since(opened))
		s.mu.Unlock()
	}
	if _, err := io.WriteString(nc, "GET /index.html HTTP/1.1\r\nHost: soak.test\r\nX-Slow: "); err != nil {
		closed()
		return
	}
	buf := make([]byte, 512)
	for time.Now().Before(end) {
		if _, err := nc.Write([]byte{'a'}); err != nil {
			closed()
			return
		}
		nc.SetReadDeadline(time.Now().Add(o.slowInterval))
		if _, err := nc.Read(buf); err == nil || !isTimeout(err) {
			closed() // an answer (408) or the connection closed
			return
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func (s *slowloris) openPorts() map[int]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[int]bool, len(s.ports))
	for p := range s.ports {
		m[p] = true
	}
	return m
}

// lifetimes returns the median and the longest life of the connections
// orderly closed, and how many it closed.
func (s *slowloris) lifetimes() (n int, median, longest time.Duration) {
	s.mu.Lock()
	d := append([]time.Duration(nil), s.cut...)
	s.mu.Unlock()
	if len(d) == 0 {
		return 0, 0, 0
	}
	sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
	return len(d), d[len(d)/2], d[len(d)-1]
}

// tick is one second's sample of orderly.
type tick struct {
	at          time.Duration
	rssKiB      int64 // VmRSS
	goroutines  int64
	heapInuse   int64
	openFDs     int64
	conns       int // established connections at orderly's listener from the soak's keep-alive clients
	slowConns   int // ... from the slowloris clients
	backendEst  int // established connections from orderly to the backend
	backendTW   int // orderly's connections to the backend in TIME-WAIT
	okPerSecond int64
	backendUp   float64 // orderly_backend_up
	orderlyCPU  float64 // cores used by orderly in the last second
	othersCPU   float64 // ... by processes other than orderly, the backend and the soak
}

// procStatus returns a field of /proc/pid/status in KiB (VmRSS, VmHWM).
func procStatus(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// scrape reads orderly's /metrics into name{labels} -> value.
func scrape(addr string) (map[string]float64, error) {
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m, sc.Err()
}

func generation(metrics string) (int, error) {
	m, err := scrape(metrics)
	if err != nil {
		return 0, err
	}
	return int(m["orderly_config_generation"]), nil
}

// peerPorts runs ss with a filter and returns the peer port of each
// connection it lists.
func peerPorts(state, filter string) []int {
	out, err := exec.Command("ss", "-Htn", "state", state, filter).Output()
	if err != nil {
		return nil
	}
	var ports []int
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		peer := f[len(f)-1]
		if i := strings.LastIndexByte(peer, ':'); i >= 0 {
			if p, err := strconv.Atoi(peer[i+1:]); err == nil {
				ports = append(ports, p)
			}
		}
	}
	return ports
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// cpuTicks returns the machine's busy time (/proc/stat) and the CPU time
// of pid and its children (utime+stime from /proc/PID/stat, of every
// process whose pid or parent is one of pids), in clock ticks.
func cpuTicks(pids ...int) (busy int64, ours map[int]int64) {
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		// cpu user nice system idle iowait irq softirq steal ...
		for i, v := range f[1:] {
			if i == 3 || i == 4 || i > 7 {
				continue // idle, iowait, guest
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			busy += n
		}
	}
	ours = map[int]int64{}
	want := map[int]bool{}
	for _, p := range pids {
		want[p] = true
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid ... utime(12) stime(13)
		if len(f) < 14 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		owner := 0
		switch {
		case want[pid]:
			owner = pid
		case want[ppid]:
			owner = ppid
		default:
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ours[owner] += u + st
	}
	return busy, ours
}

// liveHeap asks orderly's profiler for two garbage collections (what
// sync.Pools hold survives one) and returns the heap left
// (runtime.MemStats.HeapAlloc right after the second), in bytes.
func liveHeap(admin string) (int64, error) {
	if err := saveProfile(admin, os.DevNull); err != nil {
		return 0, err
	}
	resp, err := client.Get("http://" + admin + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no HeapAlloc in the heap profile")
}

// saveProfile saves orderly's heap profile (after a collection) to path.
func saveProfile(admin, path string) error {
	resp, err := client.Get("http://" + admin + "/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}
