// Command soak is the load side of `make soak` (scripts/soak.sh): it holds
// a thousand keep-alive connections to a running orderly for a fixed time
// while it reloads orderly's configuration every second, restarts the
// Apache backend once, and opens slowloris connections for a while; it
// samples orderly's memory, goroutines and connections, and prints a
// summary with the pass conditions, exiting 1 when one fails.
//
// Every answer is checked against the status the soak's legacy rules give
// for its path and client address (each connection sends its own
// X-Forwarded-For address, so orderly's per-client limit is not what is
// measured); a failure is counted by cause: connection error, timeout, or
// unexpected status. 502s are allowed only around the backend restart:
// the window from the first to the last 502 must lie between the backend's
// stop and a few seconds after it answers again.
//
// soak is a program of the repository's scripts, not part of orderly: it
// imports only the standard library.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// options are the soak's flags.
type options struct {
	target  string // orderly's listen address
	admin   string // orderly's admin listener
	metrics string // orderly's metrics listener
	backend string // the Apache backend, asked directly to see it back

	orderlyPID int

	conns    int
	duration time.Duration
	rate     float64 // requests per second per connection; 0: as fast as answered
	timeout  time.Duration

	slow         int           // slowloris connections
	slowInterval time.Duration // between two bytes of a slowloris header
	headerLimit  time.Duration // orderly's limits.read_header_timeout

	reloadEvery time.Duration
	legacyFile  string // the legacy file orderly reads
	legacyA     string // its two versions, alternated at each reload
	legacyB     string

	backendPID     int
	backendCmd     string // the command that starts the backend again (sh -c)
	backendLog     string
	backendPIDFile string // where the restarted backend's pid is written
	downFor        time.Duration
	windowSlack    time.Duration // 502s allowed this long after the backend answers again

	rssMargin   float64
	timeline    string // a file for the per-second samples
	heapProfile string // a file for orderly's heap profile after the run
}

func main() {
	var o options
	flag.StringVar(&o.target, "target", "127.0.0.1:18300", "orderly's listen address")
	flag.StringVar(&o.admin, "admin", "127.0.0.1:18303", "orderly's admin listener")
	flag.StringVar(&o.metrics, "metrics", "127.0.0.1:18302", "orderly's metrics listener")
	flag.StringVar(&o.backend, "backend", "127.0.0.1:18301", "the backend's address")
	flag.IntVar(&o.orderlyPID, "orderly-pid", 0, "orderly's pid (memory samples)")
	flag.IntVar(&o.conns, "conns", 1000, "keep-alive connections")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "how long")
	flag.Float64Var(&o.rate, "rate", 5, "requests per second per connection (0: as fast as answered)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "a request with no whole answer after this is a timeout")
	flag.IntVar(&o.slow, "slow", 200, "slowloris connections during the middle phase")
	flag.DurationVar(&o.slowInterval, "slow-interval", 500*time.Millisecond, "between two header bytes of a slowloris connection")
	flag.DurationVar(&o.headerLimit, "read-header-timeout", 5*time.Second, "orderly's limits.read_header_timeout")
	flag.DurationVar(&o.reloadEvery, "reload-every", time.Second, "between two reloads")
	flag.StringVar(&o.legacyFile, "legacy", "", "the legacy file orderly reads (rewritten at each reload)")
	flag.StringVar(&o.legacyA, "legacy-a", "", "version A of the legacy file (generation 1)")
	flag.StringVar(&o.legacyB, "legacy-b", "", "version B of the legacy file")
	flag.IntVar(&o.backendPID, "backend-pid", 0, "the backend's pid, stopped once (SIGTERM)")
	flag.StringVar(&o.backendCmd, "backend-cmd", "", "starts the backend again (sh -c)")
	flag.StringVar(&o.backendLog, "backend-log", "", "the restarted backend's output")
	flag.StringVar(&o.backendPIDFile, "backend-pidfile", "", "the restarted backend's pid is written here")
	flag.DurationVar(&o.downFor, "down", 2*time.Second, "how long the backend stays stopped")
	flag.DurationVar(&o.windowSlack, "window-slack", 5*time.Second, "502s are allowed until this long after the backend answers again")
	flag.Float64Var(&o.rssMargin, "rss-margin", 0.20, "the second half's peak RSS may exceed the first half's by this fraction")
	flag.StringVar(&o.timeline, "timeline", "", "write the per-second samples (TSV) here")
	flag.StringVar(&o.heapProfile, "heap-profile", "", "save orderly's heap profile after the run here (go tool pprof)")
	flag.Parse()
	if o.legacyFile == "" || o.legacyA == "" || o.legacyB == "" || o.backendPID == 0 || o.backendCmd == "" || o.orderlyPID == 0 {
		fmt.Fprintln(os.Stderr, "soak: -legacy, -legacy-a, -legacy-b, -backend-pid, -backend-cmd and -orderly-pid are required")
		os.Exit(2)
	}
	r := run(o)
	if o.timeline != "" {
		if err := r.writeTimeline(o.timeline); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
		}
	}
	if !r.print(os.Stdout) {
		os.Exit(1)
	}
}
