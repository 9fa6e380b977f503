package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// newFlagSet returns the flag set of one command. Its usage, printed for
// -h, -help and a bad flag, is the synopsis followed by every flag with
// its default.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), strings.TrimRight(synopsis, "\n")+"\n\nflags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs. When the command is to stop, it
// returns false and the exit code: 0 after -h or -help (the usage is
// printed), 2 for a bad flag.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	}
	return 2, false
}

// logFlags are serve's flags for orderly's own structured logs (not the
// Apache-format logs the configuration names).
type logFlags struct {
	level  slog.Level
	format string
}

// Log formats for -log.format.
const (
	logJSON   = "json"
	logLogfmt = "logfmt"
)

// addLogFlags defines -log.level and -log.format on fs.
func addLogFlags(fs *flag.FlagSet) *logFlags {
	l := &logFlags{format: logJSON}
	fs.Func("log.level", "the least severe `level` of orderly's own logs written: debug, info, warn or error (default info)", l.setLevel)
	fs.Func("log.format", "the `format` of orderly's own logs (on standard error): json or logfmt (default json)", l.setFormat)
	return l
}

func (l *logFlags) setLevel(s string) error {
	switch s {
	case "debug":
		l.level = slog.LevelDebug
	case "info":
		l.level = slog.LevelInfo
	case "warn":
		l.level = slog.LevelWarn
	case "error":
		l.level = slog.LevelError
	default:
		return fmt.Errorf("want debug, info, warn or error")
	}
	return nil
}

func (l *logFlags) setFormat(s string) error {
	if s != logJSON && s != logLogfmt {
		return fmt.Errorf("want json or logfmt")
	}
	l.format = s
	return nil
}

// logger returns the logger of these settings writing to w.
func (l *logFlags) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: l.level}
	if l.format == logLogfmt {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
