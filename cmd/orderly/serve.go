package main

// orderly serve: flags, then the server's open, run and drain steps
// (server.go).

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"
)

const serveUsage = `usage: orderly serve [-config orderly.hcl] [-log.level debug|info|warn|error] [-log.format json|logfmt]

Runs the proxy. orderly's own logs go to standard error; the Apache-format
error log (error_log) to standard output unless the configuration names a
file. SIGHUP reloads the configuration, SIGUSR1 reopens the log files,
SIGTERM and SIGINT drain and stop.
`

// cmdServe runs the proxy until SIGINT or SIGTERM.
func cmdServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve runs the proxy until ctx is done: exit 2 when it cannot start
// (bad flags, a configuration or listener refused), 1 when a listener
// fails while serving, 0 after draining.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", serveUsage, stderr)
	configPath := fs.String("config", "orderly.hcl", "configuration file")
	logs := addLogFlags(fs)
	started := time.Now()
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "orderly serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	s, ok := openServer(*configPath, logs, started, stdout, stderr)
	if !ok {
		return 2
	}
	defer s.close()
	if err := s.run(ctx); err != nil {
		fmt.Fprintln(stderr, "serve:", err)
		s.saveState()
		return 1
	}
	s.drain()
	return 0
}
