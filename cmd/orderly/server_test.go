package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/policy"
)

// restoreState gives the saved counters to the rules with their IDs and
// says when counting started; a state file it cannot read is refused
// with the configuration's name, by serve and explain alike (exit 2).
func TestRestoreState(t *testing.T) {
	files := serveFiles("state_file = \"state.json\"\n")
	dir := writeFiles(t, files)
	path := filepath.Join(dir, "orderly.hcl")
	rc, pols, ok := setup(path, os.Stderr)
	if !ok {
		t.Fatal("setup failed")
	}
	if since, err := restoreState(path, rc, pols); err != nil || !since.IsZero() {
		t.Fatalf("no state file yet: %v %v, want nothing restored", since, err)
	}
	rules := pols.Legacy.Config().Rules
	if len(rules) == 0 {
		t.Fatal("no legacy rules")
	}
	saved := &policy.Rule{ID: rules[0].ID}
	last := time.Unix(1764000100, 0)
	saved.Restore(4, 1, time.Unix(1764000000, 0), last)
	started := time.Unix(1763000000, 0)
	if err := saveState(rc.StateFile, []*policy.Rule{saved}, started); err != nil {
		t.Fatal(err)
	}
	since, err := restoreState(path, rc, pols)
	if err != nil || !since.Equal(started) {
		t.Fatalf("restoreState: %v %v, want %v", since, err, started)
	}
	if m, d, l := rules[0].Stats(); m != 4 || d != 1 || !l.Equal(last) {
		t.Errorf("rule %s after restore: %d matches, %d decisive, last %v", rules[0].ID, m, d, l)
	}

	os.WriteFile(rc.StateFile, []byte("{"), 0o644)
	if _, err := restoreState(path, rc, pols); err == nil || !strings.HasPrefix(err.Error(), path+": state_file: ") {
		t.Errorf("bad state file: %v, want %s: state_file: ...", err, path)
	}
	for _, args := range [][]string{{"serve", "-config", path}, {"explain", "-config", path, "-ip", "127.0.0.1", "/"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), path+": state_file: ") {
			t.Errorf("%s with a bad state file: exit %d, want 2:\n%s", args[0], code, errb.String())
		}
	}
}

// drain saves the state file: the counters and when counting started.
func TestServeDrainSavesState(t *testing.T) {
	dir := writeFiles(t, serveFiles("state_file = \"state.json\"\n"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve starts, logs, and drains at once
	var out, errb syncBuffer
	before := time.Now()
	if code := serve(ctx, []string{"-config", filepath.Join(dir, "orderly.hcl")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d:\n%s", code, errb.String())
	}
	_, since, err := loadState(filepath.Join(dir, "state.json"))
	if err != nil || since.Before(before.Add(-time.Second)) || since.After(time.Now()) {
		t.Errorf("state file after drain: since %v, %v", since, err)
	}
}

// A listener open cannot bind stops serve before anything serves (exit
// 2, the configuration's name and the listener's), and the listeners
// bound before it are released.
func TestServeOpenFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := free.Addr().String()
	free.Close()
	dir := writeFiles(t, serveFiles("metrics {\n  listen = \""+metrics+"\"\n}\nadmin {\n  listen = \""+taken.Addr().String()+"\"\n}\n"))
	path := filepath.Join(dir, "orderly.hcl")
	var out, errb syncBuffer
	if code := serve(context.Background(), []string{"-config", path}, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, errb.String())
	}
	if got := errb.String(); !strings.Contains(got, path+": admin listen: ") || strings.Contains(got, "orderly serving") {
		t.Errorf("standard error:\n%s", got)
	}
	ln, err := net.Listen("tcp", metrics)
	if err != nil {
		t.Fatalf("the metrics listener bound before the failure is still held: %v", err)
	}
	ln.Close()
}
