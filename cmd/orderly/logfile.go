package main

import (
	"io"
	"os"
	"sync"
)

// logFile is a log opened for appending that SIGUSR1 reopens, so that
// logrotate can move it away and orderly goes on in a new file at the
// configured path.
type logFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func openLog(path string) (*logFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	return &logFile{path: path, f: f}, nil
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

// Reopen opens the path again and closes the old file; on error the old
// file stays in use.
func (l *logFile) Reopen() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.mu.Unlock()
	return old.Close()
}

func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// openOutput opens a log named in the configuration: none for "", the
// process's stdout or stderr for those words, else a file that SIGUSR1
// reopens (added to reopen).
func openOutput(name string, stdout, stderr io.Writer, reopen *[]*logFile) (io.Writer, error) {
	switch name {
	case "":
		return nil, nil
	case "stdout":
		return stdout, nil
	case "stderr":
		return stderr, nil
	}
	f, err := openLog(name)
	if err != nil {
		return nil, err
	}
	*reopen = append(*reopen, f)
	return f, nil
}
