package apachetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Default locations of the Debian apache2 and apache2-utils packages.
const (
	DefaultApache     = "/usr/sbin/apache2"
	DefaultModulesDir = "/usr/lib/apache2/modules"
	DefaultHtpasswd   = "/usr/bin/htpasswd"
)

// requiredModules returns the shared modules that a generated configuration
// may load. Debian builds core, mod_so, mod_watchdog, http_core,
// mod_log_config, mod_logio, mod_version and mod_unixd statically.
func requiredModules() []string {
	return []string{
		"mod_mpm_event.so",
		"mod_authz_core.so",
		"mod_authz_host.so",
		"mod_authn_core.so",
		"mod_authn_file.so",
		"mod_auth_basic.so",
		"mod_authz_user.so",
		"mod_authz_groupfile.so",
		"mod_access_compat.so",
		"mod_setenvif.so",
		"mod_env.so",
		"mod_alias.so",
		"mod_dir.so",
		"mod_mime.so",
		"mod_remoteip.so",
		"mod_proxy.so",
		"mod_proxy_http.so",
	}
}

// Paths locates an Apache httpd installation.
type Paths struct {
	Apache     string // the httpd binary, /usr/sbin/apache2 on Debian
	ModulesDir string // the directory of the shared modules (mod_*.so)
	Htpasswd   string // the htpasswd binary of apache2-utils
}

// Find locates the Debian Apache installation and reports what is missing.
func Find() (Paths, error) {
	p := Paths{Apache: DefaultApache, ModulesDir: DefaultModulesDir, Htpasswd: DefaultHtpasswd}
	var missing []string
	if !isExecutable(p.Apache) {
		missing = append(missing, p.Apache+" (package apache2)")
	}
	for _, m := range requiredModules() {
		if _, err := os.Stat(filepath.Join(p.ModulesDir, m)); err != nil {
			missing = append(missing, filepath.Join(p.ModulesDir, m)+" (package apache2)")
		}
	}
	if !isExecutable(p.Htpasswd) {
		if lp, err := exec.LookPath("htpasswd"); err == nil {
			p.Htpasswd = lp
		} else {
			missing = append(missing, "htpasswd (package apache2-utils)")
		}
	}
	if _, err := os.Stat("/etc/mime.types"); err != nil {
		missing = append(missing, "/etc/mime.types (package media-types)")
	}
	if len(missing) > 0 {
		return p, fmt.Errorf("Apache httpd 2.4 is not installed: missing %s", strings.Join(missing, ", "))
	}
	return p, nil
}

// Require returns the paths of the Debian Apache installation. When it is
// missing, Require fails the test if the environment variable CI is "true"
// (a CI machine must have it: the Makefile installs it) and skips the test
// otherwise.
func Require(t testing.TB) Paths {
	t.Helper()
	p, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI=true, so this is an error (install with: apt-get install apache2 apache2-utils)", err)
		}
		t.Skipf("%v; skipping (set CI=true to make this an error)", err)
	}
	return p
}

// RequireTool returns the path of the program name, from the Debian
// package pkg: when it is missing, the test fails under CI=true and is
// skipped otherwise, as with [Require].
func RequireTool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if CI() {
			t.Fatalf("%s (Debian package %s) is required under CI=true", name, pkg)
		}
		t.Skipf("%s not installed (Debian package %s); skipping (set CI=true to make this an error)", name, pkg)
	}
	return p
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// TempDir returns a new directory under [os.TempDir] that is removed when the
// test ends. Unlike [testing.T.TempDir], whose directories have mode 0700, the
// directory has mode 0755, so that Apache's children can read it after they
// have switched to the unprivileged user (www-data) of mod_unixd. TempDir
// fails the test if a parent directory cannot be searched by other users
// while the test runs as root.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := tempDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	return dir
}

func tempDir() (string, error) {
	dir, err := os.MkdirTemp("", "apachetest-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if os.Geteuid() == 0 {
		if err := checkSearchable(filepath.Dir(dir)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// checkSearchable reports an error if some directory on the way to dir
// cannot be searched by other users.
func checkSearchable(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s (mode %v) cannot be searched by other users, so Apache's children (user www-data) could not read files under %s; set TMPDIR to a directory such as /tmp", d, fi.Mode().Perm(), dir)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// AddUser adds user with password to the password file (bcrypt, as
// `htpasswd -bB`), creating the file if it does not exist yet.
func (p Paths) AddUser(t testing.TB, file, user, password string) {
	t.Helper()
	args := []string{"-bB"}
	if _, err := os.Stat(file); os.IsNotExist(err) {
		args = []string{"-cbB"}
	}
	args = append(args, file, user, password)
	out, err := exec.Command(p.Htpasswd, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("htpasswd %s: %v\n%s", strings.Join(args[:len(args)-1], " "), err, out)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
}

// CI reports whether the tests run under CI (CI=true), where a missing
// real part is an error, never a skip.
func CI() bool { return os.Getenv("CI") == "true" }
