//go:build unix

package mutate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestGoTestKillsTestBinary: when a mutant's time is up, the test binary
// go test started dies with it, not only go test (a mutant that loops for
// ever would otherwise keep a core busy for the binary's own timeout).
func TestGoTestKillsTestBinary(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to run mutants: ", err)
	}
	root := t.TempDir()
	pidFile := filepath.Join(root, "pid")
	files := map[string]string{
		"go.mod":       "module example.com/loop\n\ngo 1.22\n",
		"loop_test.go": "package loop\n\nimport (\n\t\"os\"\n\t\"strconv\"\n\t\"testing\"\n)\n\nfunc TestLoop(t *testing.T) {\n\tos.WriteFile(" + strconv.Quote(pidFile) + ", []byte(strconv.Itoa(os.Getpid())), 0o644)\n\tfor {\n\t}\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	overlay := filepath.Join(root, "overlay.json")
	if err := os.WriteFile(overlay, []byte(`{"Replace":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	r := &Runner{Go: goCmd}
	go func() {
		_, err := r.goTest(ctx, &Package{Root: root, Rel: "."}, overlay)
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(2 * time.Minute); pid == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the test binary did not start")
		}
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			pid, _ = strconv.Atoi(string(b))
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("go test still running 30 s after its context ended")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the test binary (pid %d) outlived go test", pid)
		}
	}
}
