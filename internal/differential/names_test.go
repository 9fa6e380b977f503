package differential

// Host names (testdata/corpus/README.md, "Host names"). The test binary
// re-executes itself under
//
//	unshare --mount --net --propagation private
//
// and, inside, bind-mounts a private /etc/hosts, /etc/resolv.conf
// (nameserver 127.0.0.1) and /etc/nsswitch.conf (hosts: files dns), brings
// up lo, the only interface, and answers DNS on 127.0.0.1:53 from the
// case's dns file (apachetest.Namespace). Apache and orderly, children of
// the test, resolve through that and nothing else: no lookup can leave the
// machine. Every test of the package runs inside, so no case, with or
// without host rules, reaches the real name service.
//
// When the namespace cannot be made (not root, no unshare), the tests run
// outside and the cases that look up names are skipped; under CI=true that
// is an error.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

const (
	// namespaceEnv holds, in the re-executed test binary, the directory of
	// the namespace's private files.
	namespaceEnv = "ORDERLY_TEST_NAMESPACE"
	// binaryEnv passes the orderly binary built by the parent.
	binaryEnv = "ORDERLY_TEST_BINARY"
)

// names is the private name service, nil outside the namespace.
var names *apachetest.Namespace

var unshareArgs = []string{"--mount", "--net", "--propagation", "private"}

// reexecInNamespace runs the tests in a re-executed copy of the test
// binary inside new mount and network namespaces and returns its exit code.
// If the namespaces cannot be made, it runs the tests here, without host
// names, unless CI=true.
func reexecInNamespace(m *testing.M) int {
	dir, err := os.MkdirTemp("", "orderly-names-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := apachetest.PrepareNamespace(dir); err != nil {
		fmt.Fprintln(os.Stderr, "differential: preparing the private name service:", err)
		return 1
	}
	unshare, err := exec.LookPath("unshare")
	if err == nil {
		var out []byte
		if out, err = exec.Command(unshare, append(unshareArgs, "true")...).CombinedOutput(); err != nil {
			err = fmt.Errorf("%s %v true: %v %s", unshare, unshareArgs, err, out)
		}
	}
	if err != nil {
		msg := fmt.Sprintf("differential: cannot make a private mount and network namespace (%v)", err)
		if apachetest.CI() {
			fmt.Fprintln(os.Stderr, msg+"; CI=true, so this is an error (run as root, with unshare from util-linux)")
			return 1
		}
		fmt.Println(msg + "; cases that look up host names are skipped (set CI=true to make this an error)")
		return m.Run()
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	args := append(append(append([]string{}, unshareArgs...), "--", exe), os.Args[1:]...)
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), namespaceEnv+"="+dir, binaryEnv+"="+binary)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// unshare execs the test binary in place: if this process dies, so
	// does it (and its Apache servers, through their own Pdeathsig).
	// The signal follows the death of the forking thread, so keep it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	err = cmd.Run()
	runtime.UnlockOSThread()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "differential: running the tests in the namespace:", err)
		return 1
	}
}

// runInNamespace is TestMain in the re-executed test binary.
func runInNamespace(m *testing.M, dir string) int {
	binary = os.Getenv(binaryEnv)
	if binary == "" {
		fmt.Fprintln(os.Stderr, "differential:", binaryEnv, "is not set")
		return 1
	}
	ns, err := apachetest.EnterNamespace(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "differential: setting up the private name service:", err)
		return 1
	}
	defer ns.Close()
	names = ns
	return m.Run()
}

// useNames installs the case's names (its hosts file and dns records, or
// the defaults) as those Apache and orderly see. Outside the namespace it
// returns false, refusing a case that looks up host names.
func useNames(t *testing.T, c *apachetest.Case) bool {
	t.Helper()
	if names == nil {
		if c.UsesNames() {
			t.Logf("%s: skipped: it looks up host names, which the tests do only inside a private name service", c.Path)
			return false
		}
		return true
	}
	if err := names.Install(c); err != nil {
		t.Fatalf("%s: %v", c.Path, err)
	}
	return true
}

// TestNamespaceSealed checks, inside the namespace, that nothing can leave
// the machine: loopback is the only interface, so even a datagram to an
// outside name server is refused by the kernel.
func TestNamespaceSealed(t *testing.T) {
	if names == nil {
		if apachetest.CI() {
			t.Fatal("not in a private name service under CI=true")
		}
		t.Skip("not in a private name service")
	}
	if err := names.Sealed(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp", "198.51.100.53:53")
	if err == nil {
		_, err = c.Write([]byte("x"))
		c.Close()
	}
	if !errors.Is(err, syscall.ENETUNREACH) {
		t.Errorf("sending to 198.51.100.53:53: %v, want %v", err, syscall.ENETUNREACH)
	}
	// The case's names are what glibc and Go see.
	c1 := &apachetest.Case{Path: "sealed", HasHosts: true, Hosts: []byte("192.0.2.77 sealed.example.test\n")}
	if err := names.Install(c1); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("getent", "hosts", "192.0.2.77").CombinedOutput()
	if err != nil || string(out) != "192.0.2.77      sealed.example.test\n" {
		t.Errorf("getent hosts 192.0.2.77: %q %v", out, err)
	}
	r := &net.Resolver{PreferGo: true}
	if got, err := r.LookupAddr(t.Context(), "192.0.2.77"); err != nil || len(got) != 1 || got[0] != "sealed.example.test." {
		t.Errorf("LookupAddr(192.0.2.77) = %q, %v", got, err)
	}
	if err := names.Install(&apachetest.Case{Path: "default"}); err != nil {
		t.Fatal(err)
	}
}
