package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// result is what a run saw, for the summary.
type result struct {
	o       options
	load    *load
	slow    *slowloris
	reloads *reloads
	restart restart
	ticks   []tick

	backendNow atomic.Int64 // the backend's pid once restarted

	goroutinesBefore, goroutinesAfter int64
	heapBefore, heapAfter             int64 // live heap after a collection
	metricsEnd                        map[string]float64
	hwmKiB                            int64
}

// run drives the soak: the keep-alive clients for the whole duration,
// reloads every -reload-every, the slowloris phase, the backend restart,
// and a sample of orderly every second.
func run(o options) *result {
	r := &result{o: o, slow: &slowloris{ports: map[int]bool{}}, reloads: &reloads{}}
	if m, err := scrape(o.metrics); err == nil {
		r.goroutinesBefore = int64(m["go_goroutines"])
	}
	r.heapBefore, _ = liveHeap(o.admin)
	t0 := time.Now()
	l := newLoad(o, t0)
	r.load = l
	at := func(f float64) time.Time { return t0.Add(time.Duration(f * float64(o.duration))) }

	var wg sync.WaitGroup
	for i := range o.conns {
		wg.Add(1)
		go func() { defer wg.Done(); l.worker(i) }()
	}
	var side sync.WaitGroup
	side.Add(3)
	go func() { defer side.Done(); r.reloads.run(o, t0, l.end) }()
	go func() {
		defer side.Done()
		time.Sleep(time.Until(at(phaseStart[phaseSlow])))
		r.slow.run(o, at(phaseStart[phaseAfter]))
	}()
	go func() {
		defer side.Done()
		time.Sleep(time.Until(at(restartAt)))
		r.restart = restartBackend(o, t0, &r.backendNow)
	}()
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() { r.watch(t0, done); close(watched) }()
	wg.Wait()
	side.Wait()
	close(done)
	<-watched
	r.hwmKiB = procStatus(o.orderlyPID, "VmHWM")
	// Leaks: once every client has gone, orderly's goroutines should be
	// back near where they were (plus the backend connections its
	// transport keeps idle).
	time.Sleep(3 * time.Second)
	if m, err := scrape(o.metrics); err == nil {
		r.goroutinesAfter = int64(m["go_goroutines"])
		r.metricsEnd = m
	}
	r.heapAfter, _ = liveHeap(o.admin)
	if o.heapProfile != "" {
		saveProfile(o.admin, o.heapProfile)
	}
	return r
}

// watch samples orderly every second until done.
func (r *result) watch(t0 time.Time, done <-chan struct{}) {
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	const hz = 100 // USER_HZ
	prevBusy, prevOurs := cpuTicks(r.o.orderlyPID, os.Getpid(), r.o.backendPID)
	prevAt := time.Now()
	front := "( sport = :" + port(r.o.target) + " )"
	back := "( dport = :" + port(r.o.backend) + " )"
	for {
		select {
		case <-done:
			return
		case <-tk.C:
		}
		t := tick{at: time.Since(t0), rssKiB: procStatus(r.o.orderlyPID, "VmRSS")}
		if m, err := scrape(r.o.metrics); err == nil {
			t.goroutines, t.heapInuse, t.openFDs = int64(m["go_goroutines"]), int64(m["go_memstats_heap_inuse_bytes"]), int64(m["process_open_fds"])
			t.backendUp = m[`orderly_backend_up{backend="http://`+r.o.backend+`"}`]
		}
		backendPID := r.o.backendPID
		if p := r.backendNow.Load(); p != 0 {
			backendPID = int(p)
		}
		busy, ours := cpuTicks(r.o.orderlyPID, os.Getpid(), backendPID)
		secs := time.Since(prevAt).Seconds()
		var d int64
		for p, v := range ours {
			d += v - prevOurs[p]
		}
		t.orderlyCPU = float64(ours[r.o.orderlyPID]-prevOurs[r.o.orderlyPID]) / hz / secs
		t.othersCPU = max(0, float64(busy-prevBusy-d)/hz/secs)
		prevBusy, prevOurs, prevAt = busy, ours, time.Now()
		mine, slow := r.load.openPorts(), r.slow.openPorts()
		for _, p := range peerPorts("established", front) {
			switch {
			case mine[p]:
				t.conns++
			case slow[p]:
				t.slowConns++
			}
		}
		t.backendEst = len(peerPorts("established", back))
		t.backendTW = len(peerPorts("time-wait", back))
		if s := int(t.at/time.Second) - 1; s >= 0 && s < len(r.load.perSecond) {
			t.okPerSecond = r.load.perSecond[s].Load()
		}
		r.ticks = append(r.ticks, t)
	}
}

// print writes the summary and reports whether every pass condition held.
func (r *result) print(w io.Writer) bool {
	o, l := r.o, r.load
	pass := true
	check := func(ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark, pass = "FAIL", false
		}
		fmt.Fprintf(w, "  %s %s\n", mark, fmt.Sprintf(format, args...))
	}
	secs := func(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

	fmt.Fprintf(w, "== soak: %d keep-alive connections for %v (%s), reload every %v, backend restarted at %s, %d slowloris connections from %s to %s\n",
		o.conns, o.duration, pace(o.rate), o.reloadEvery, secs(time.Duration(restartAt*float64(o.duration))), o.slow,
		secs(time.Duration(phaseStart[phaseSlow]*float64(o.duration))), secs(time.Duration(phaseStart[phaseAfter]*float64(o.duration))))
	req, ans := l.requests.Load(), l.answered.Load()
	fmt.Fprintf(w, "requests  %d sent, %d answered, %.0f req/s over the run; %d connections opened (%d closed by orderly after an answer)\n",
		req, ans, float64(ans)/o.duration.Seconds(), l.dials.Load(), l.serverClosed.Load())

	// Connections really held.
	minC, maxC := -1, 0
	for _, t := range r.ticks {
		if float64(t.at) < phaseStart[phaseBase]*float64(o.duration) || t.at >= o.duration-time.Second {
			continue // still opening, or (ss runs after the sample's time) closing
		}
		if minC < 0 || t.conns < minC {
			minC = t.conns
		}
		maxC = max(maxC, t.conns)
	}
	fmt.Fprintf(w, "connections at orderly's listener from the keep-alive clients (ss, every second after warm-up): min %d, max %d\n", minC, maxC)

	// Failures.
	l.mu.Lock()
	fails, first, last := l.fails, l.firstFail, l.lastFail
	bad := l.badStatus
	sample := l.sample
	l.mu.Unlock()
	causes := []string{causeConnect, causeConn, causeTimeout, causeStatus}
	var other []string
	nOther := 0
	for _, c := range causes {
		nOther += fails[c]
		other = append(other, fmt.Sprintf("%s %d", c, fails[c]))
	}
	fmt.Fprintf(w, "failures  %s", strings.Join(other, ", "))
	if len(bad) > 0 {
		fmt.Fprintf(w, " (statuses %v)", bad)
	}
	fmt.Fprintln(w)
	for _, f := range sample {
		fmt.Fprintf(w, "          at %s conn %d: %s: %s\n", secs(f.at), f.conn, f.cause, f.detail)
	}
	rs := r.restart
	fmt.Fprintf(w, "backend   SIGTERM at %s, gone at %s, started at %s, answering at %s, orderly ready at %s\n",
		secs(rs.stop), secs(rs.gone), secs(rs.start), secs(rs.back), secs(rs.ready))
	n502 := fails[cause502]
	if n502 > 0 {
		fmt.Fprintf(w, "502 window  %d answers 502 from %s to %s (%s long; %s after the SIGTERM to %s after the backend answered again)\n",
			n502, secs(first[cause502]), secs(last[cause502]), secs(last[cause502]-first[cause502]),
			secs(first[cause502]-rs.stop), secs(last[cause502]-rs.back))
	} else {
		fmt.Fprintln(w, "502 window  none")
	}
	fmt.Fprintf(w, "reloads   %d ok, %d failed, slowest %s\n", r.reloads.ok, r.reloads.failed, round(r.reloads.slowest))
	for _, e := range r.reloads.errs {
		fmt.Fprintf(w, "          %s\n", e)
	}

	var down []string
	for _, t := range r.ticks {
		if t.backendUp == 0 && t.at < o.duration {
			down = append(down, fmt.Sprintf("%.0f", t.at.Seconds()))
		}
	}
	fmt.Fprintf(w, "backend_up 0 in orderly's metrics at the samples of seconds [%s]\n", strings.Join(down, " "))
	var st [nPhases]stats
	for p := range nPhases {
		st[p] = l.phaseStats(p)
		var n, ours, others float64
		for _, t := range r.ticks {
			// A sample covers the second before it.
			if at := float64(t.at-time.Second/2) / float64(o.duration); at >= phaseStart[p] && at < phaseStart[p+1] {
				n, ours, others = n+1, ours+t.orderlyCPU, others+t.othersCPU
			}
		}
		fmt.Fprintf(w, "%-10s %4.0f-%2.0fs %s  orderly %.2f cores, other processes %.2f\n", phaseNames[p],
			phaseStart[p]*o.duration.Seconds(), phaseStart[p+1]*o.duration.Seconds(), st[p], ours/max(n, 1), others/max(n, 1))
	}
	cutN, cutMed, cutMax := r.slow.lifetimes()
	maxSlow := 0
	for _, t := range r.ticks {
		maxSlow = max(maxSlow, t.slowConns)
	}
	r.slow.mu.Lock()
	slowOpened, slowDialErrs := r.slow.opened, r.slow.dialErrs
	r.slow.mu.Unlock()
	fmt.Fprintf(w, "slowloris %d connections opened (at most %d open at once at orderly's listener), %d cut off by orderly after %s (median), %s (longest); %d could not connect\n",
		slowOpened, maxSlow, cutN, round(cutMed), round(cutMax), slowDialErrs)

	// Memory.
	var firstMax, secondMax, peak int64
	var peakAt time.Duration
	for _, t := range r.ticks {
		if t.at <= o.duration/2 {
			firstMax = max(firstMax, t.rssKiB)
		} else {
			secondMax = max(secondMax, t.rssKiB)
		}
		if t.rssKiB > peak {
			peak, peakAt = t.rssKiB, t.at
		}
	}
	mib := func(k int64) string { return fmt.Sprintf("%.1f MiB", float64(k)/1024) }
	fmt.Fprintf(w, "memory    peak RSS (VmHWM) %s; sampled RSS: max %s at %s, first half's max %s, second half's max %s\n",
		mib(r.hwmKiB), mib(peak), secs(peakAt), mib(firstMax), mib(secondMax))
	fmt.Fprintf(w, "live heap after a collection: %s before the load, %s after it (and %d reloads)\n",
		mib(r.heapBefore/1024), mib(r.heapAfter/1024), r.reloads.ok+r.reloads.failed)
	var maxG, maxFD int64
	for _, t := range r.ticks {
		maxG, maxFD = max(maxG, t.goroutines), max(maxFD, t.openFDs)
	}
	fmt.Fprintf(w, "goroutines %d before, %d at most, %d 3s after the clients left; open fds at most %d\n",
		r.goroutinesBefore, maxG, r.goroutinesAfter, maxFD)
	if m := r.metricsEnd; m != nil {
		fmt.Fprintf(w, "orderly   generation %.0f, reloads %.0f ok / %.0f failed, backend errors (502) %.0f\n",
			m["orderly_config_generation"], m[`orderly_config_reloads_total{result="success"}`],
			m[`orderly_config_reloads_total{result="failure"}`], m["orderly_backend_errors_total"])
	}

	fmt.Fprintln(w, "== pass conditions")
	if o.rate > 0 {
		offered := int64(float64(o.conns) * o.rate * o.duration.Seconds())
		check(req >= offered*95/100, "the soak kept its pace: %d of %d requests sent (fewer: the machine was too busy to judge orderly)", req, offered)
	}
	check(maxC == o.conns, "%d keep-alive connections held at orderly (max seen %d, min %d)", o.conns, maxC, minC)
	check(nOther == 0, "no failed request but the 502 window: %d connection, %d connect, %d timeout, %d unexpected status",
		fails[causeConn], fails[causeConnect], fails[causeTimeout], fails[causeStatus])
	check(rs.err == nil, "backend restarted (%v)", errOr(rs.err))
	inWindow := n502 == 0 || rs.err == nil && first[cause502] >= rs.stop && last[cause502] <= rs.back+o.windowSlack
	check(inWindow, "every 502 between the backend's SIGTERM and %v after it answered again", o.windowSlack)
	wantReloads := int(o.duration/o.reloadEvery) - 1
	check(r.reloads.failed == 0 && r.reloads.ok >= wantReloads, "every reload succeeded and took effect (%d ok, %d failed, want at least %d)",
		r.reloads.ok, r.reloads.failed, wantReloads)
	b, s := st[phaseBase], st[phaseSlow]
	check(b.n > 0 && s.p99 <= 2*b.p99+10*time.Millisecond,
		"slowloris: normal p99 %s during vs %s before (at most 2x + 10ms)", round(s.p99), round(b.p99))
	check(b.n > 0 && s.rps >= 0.9*b.rps, "slowloris: normal throughput %.0f req/s during vs %.0f before (at least 90%%)", s.rps, b.rps)
	if slowFor := time.Duration((phaseStart[phaseAfter] - phaseStart[phaseSlow]) * float64(o.duration)); slowFor > o.headerLimit+time.Second {
		check(cutN > 0 && cutMax <= o.headerLimit+2*time.Second,
			"slowloris connections cut off within read_header_timeout (%v) + 2s: longest %s", o.headerLimit, round(cutMax))
	} else {
		fmt.Fprintf(w, "  --   slowloris cut-off not checked: the phase (%v) is not longer than read_header_timeout (%v) + 1s\n", slowFor, o.headerLimit)
	}
	check(maxSlow >= o.slow*9/10, "slowloris connections really open at orderly: %d at once (want at least %d)", maxSlow, o.slow*9/10)
	check(secondMax <= int64(float64(firstMax)*(1+o.rssMargin)),
		"memory bounded: second half's RSS max %s <= first half's %s + %.0f%%", mib(secondMax), mib(firstMax), 100*o.rssMargin)
	check(r.heapBefore > 0 && r.heapAfter <= 2*r.heapBefore+4<<20, "no heap leak: live heap %s after vs %s before (at most twice + 4 MiB)",
		mib(r.heapAfter/1024), mib(r.heapBefore/1024))
	check(r.goroutinesAfter <= r.goroutinesBefore+200, "no goroutine leak: %d after vs %d before (+2 per idle backend connection kept, at most 64)",
		r.goroutinesAfter, r.goroutinesBefore)
	if pass {
		fmt.Fprintln(w, "soak: PASS")
	} else {
		fmt.Fprintln(w, "soak: FAIL")
	}
	return pass
}

// writeTimeline writes the samples, one line a second.
func (r *result) writeTimeline(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintln(f, "t_s\tok_per_s\tp50_ms\tp99_ms\tbackend_up\torderly_cpu\tothers_cpu\trss_mib\theap_inuse_mib\tgoroutines\topen_fds\tclient_conns\tslow_conns\tbackend_conns\tbackend_time_wait")
	ticks := append([]tick(nil), r.ticks...)
	sort.Slice(ticks, func(a, b int) bool { return ticks[a].at < ticks[b].at })
	for _, t := range ticks {
		s := int(t.at/time.Second) - 1
		st := r.load.stats(time.Duration(s)*time.Second, time.Duration(s+1)*time.Second)
		fmt.Fprintf(f, "%.0f\t%d\t%.1f\t%.1f\t%.0f\t%.2f\t%.2f\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\n", t.at.Seconds(), t.okPerSecond,
			float64(st.p50)/1e6, float64(st.p99)/1e6, t.backendUp, t.orderlyCPU, t.othersCPU,
			float64(t.rssKiB)/1024, float64(t.heapInuse)/(1<<20), t.goroutines, t.openFDs, t.conns, t.slowConns, t.backendEst, t.backendTW)
	}
	return nil
}

func pace(rate float64) string {
	if rate <= 0 {
		return "each as fast as answered"
	}
	return fmt.Sprintf("each paced at %g req/s", rate)
}

func errOr(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
