//go:build unix

package mutate

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in a process group of its own and, when its context
// ends, kills the whole group: go test runs the package's test binary as
// a child, which killing go test alone would leave running (a mutant
// that loops for ever would keep a core busy until the test binary's own
// ten-minute timeout).
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
