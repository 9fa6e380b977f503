package apachetest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReadyTimeout bounds how long [Start] and [Server.Reload] wait for Apache
// to answer, and how long [Server.Stop] waits for it to exit.
const ReadyTimeout = 10 * time.Second

// Options describe the configuration that [Start] and [Server.Reload]
// generate.
//
// The generated configuration contains no access rule of its own: no
// Require, no Order, Allow or Deny, no <Directory /> denial. Everything is
// decided by the included fragments.
type Options struct {
	// DocumentRoot is the absolute document root. If empty, an empty
	// directory in the server's directory is used.
	DocumentRoot string
	// Include lists files (typically the legacy fragment) that are included,
	// in order, at the very end of the configuration.
	Include []string
	// Extra holds raw directives placed after the generated base and before
	// the included files.
	Extra string
	// RemoteIP loads mod_remoteip so that the client address is taken from
	// X-Forwarded-For when the connection comes from 127.0.0.1
	// (RemoteIPInternalProxy, which, unlike RemoteIPTrustedProxy, also
	// accepts private addresses in the header).
	RemoteIP bool
	// AccessCompat loads mod_access_compat (Order, Allow, Deny, Satisfy).
	AccessCompat bool
	// ProxyTo, if not empty, makes the server a reverse proxy for everything
	// to that URL (mod_proxy, mod_proxy_http; ProxyPass / URL/ nocanon). The
	// URL must point to a loopback address.
	ProxyTo string
	// Modules are more modules to load, by name ("autoindex" loads
	// autoindex_module from mod_autoindex.so), after the others.
	Modules []string
	// TLS, when set, adds a TLS listener (Server.TLSAddr; tls.go), with
	// mod_ssl and mod_socache_shmcb loaded.
	TLS *TLSOptions
}

// LoadedModules lists the modules the configuration for o loads, by
// identifier ("authz_core_module"), in LoadModule order: what an orderly
// in front of the same configuration must be told is loaded.
func (o Options) LoadedModules() []string {
	var ids []string
	for _, m := range o.modules() {
		ids = append(ids, m+"_module")
	}
	return ids
}

// modules are the names of the modules o loads, in order.
func (o Options) modules() []string {
	mods := []string{"mpm_event", "authz_core", "authz_host", "authn_core", "authn_file", "auth_basic", "authz_user", "authz_groupfile"}
	if o.AccessCompat {
		mods = append(mods, "access_compat")
	}
	mods = append(mods, "setenvif", "env", "alias", "dir", "mime")
	if o.RemoteIP {
		mods = append(mods, "remoteip")
	}
	if o.ProxyTo != "" {
		mods = append(mods, "proxy", "proxy_http")
	}
	if o.TLS != nil {
		mods = append(mods, "socache_shmcb", "ssl")
	}
	for _, m := range o.Modules {
		if !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	return mods
}

// A Server is an Apache httpd instance running as a child process of the
// test, listening on a free port of 127.0.0.1. Its methods must not be
// called concurrently.
type Server struct {
	// Addr is the address the server listens on, as 127.0.0.1:PORT.
	Addr string
	// TLSAddr is its TLS listener's, with Options.TLS ("" otherwise).
	TLSAddr string
	// Dir is the server's own directory: the configuration (httpd.conf),
	// logs (error.log, access.log, stderr.log), pid file and runtime files.
	Dir string

	paths   Paths
	port    int
	tlsPort int
	proc    *process
}

// process is one run of the Apache parent process.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // the result of Wait, valid after done is closed
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start generates a configuration from opt in a fresh world-readable
// directory, starts Apache (apache2 -DFOREGROUND) as a child process on a
// free port of 127.0.0.1 and waits until it answers. The server is stopped
// when the test ends. Start skips or fails the test as [Require] does when
// Apache is not installed, and fails it when Apache does not start.
func Start(t testing.TB, opt Options) *Server {
	t.Helper()
	s := &Server{paths: Require(t), Dir: TempDir(t)}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	if err := s.start(opt); err != nil {
		t.Fatal(err)
	}
	return s
}

// Reload rewrites the configuration from opt and restarts the server
// gracefully (SIGUSR1 to the parent process), which takes a few
// milliseconds, several times less than stopping and starting it. Reload
// returns once every child process of the old generation has exited and a
// child of the new one runs, so that every later request, even on a
// connection kept alive from before, sees the new configuration. The
// address does not change.
//
// A request in progress on an old child delays Reload until it ends; so
// does, by up to 2 seconds (Apache's lingering close), a client that keeps
// an idle connection open without noticing that Apache closed it. Go's
// http.Transport notices at once.
//
// If the new configuration is invalid, Apache exits and Reload fails the
// test with its logs; a later Reload then starts the server afresh, as it
// does after [Server.Stop].
func (s *Server) Reload(t testing.TB, opt Options) {
	t.Helper()
	if err := s.reload(opt); err != nil {
		t.Fatal(err)
	}
}

// Stop stops the server: SIGTERM to the parent process that Start launched,
// then, if it has not exited within [ReadyTimeout], SIGKILL. Stopping a
// stopped server does nothing. Start registers Stop as a test cleanup.
func (s *Server) Stop() error {
	p := s.proc
	if p == nil || p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("apachetest: stopping Apache (pid %d): %v", p.cmd.Process.Pid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(ReadyTimeout):
	}
	p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("apachetest: Apache (pid %d) did not exit within %v of SIGTERM; killed it", p.cmd.Process.Pid, ReadyTimeout)
}

// ErrorLog returns the contents of the server's error log. It is written at
// LogLevel info, so that access denials (AH01797 from mod_access_compat,
// AH01630 from mod_authz_core) and authentication failures (AH01617 and
// others from mod_auth_basic) appear in it.
func (s *Server) ErrorLog() string {
	return readFile(filepath.Join(s.Dir, "error.log"))
}

// AccessLog returns the contents of the server's access log; each line is
// the client address as Apache sees it (%a), the request line and the
// status. Apache writes a request's line after it has sent the response, so
// a line may appear a moment after [Do] has returned.
func (s *Server) AccessLog() string {
	return readFile(filepath.Join(s.Dir, "access.log"))
}

func readFile(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	return string(b)
}

// logTail returns what was appended to a log since the offset.
func logTail(name string, off int64) string {
	b, err := os.ReadFile(name)
	if err != nil || off > int64(len(b)) {
		return ""
	}
	return string(b[off:])
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (s *Server) confPath() string   { return filepath.Join(s.Dir, "httpd.conf") }
func (s *Server) errPath() string    { return filepath.Join(s.Dir, "error.log") }
func (s *Server) stderrPath() string { return filepath.Join(s.Dir, "stderr.log") }

// logsSince formats the Apache output written since the offsets, for error
// messages.
func (s *Server) logsSince(errOff, stderrOff int64) string {
	var b strings.Builder
	if out := strings.TrimSpace(logTail(s.stderrPath(), stderrOff)); out != "" {
		fmt.Fprintf(&b, "\n--- apache2 stderr ---\n%s", out)
	}
	if out := strings.TrimSpace(logTail(s.errPath(), errOff)); out != "" {
		fmt.Fprintf(&b, "\n--- %s ---\n%s", s.errPath(), out)
	}
	if b.Len() == 0 {
		return "\n(Apache wrote nothing to its logs)"
	}
	return b.String()
}

// start launches a fresh Apache parent process. It first tries the port
// used before, if any, and picks another port when the chosen one turns out
// to be taken.
func (s *Server) start(opt Options) error {
	const attempts = 5
	var err error
	for i := 0; i < attempts; i++ {
		if s.port == 0 || i > 0 {
			if s.port, err = freePort(); err != nil {
				return err
			}
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		if err = s.pickTLSPort(opt, i > 0); err != nil {
			return err
		}
		conf, cerr := s.config(opt)
		if cerr != nil {
			return cerr
		}
		if err = writeFileAtomic(s.confPath(), []byte(conf)); err != nil {
			return err
		}
		var inUse bool
		if inUse, err = s.launch(); err == nil || !inUse {
			return err
		}
	}
	return err
}

// launch starts apache2 with the current configuration and waits until it
// answers. inUse reports that it failed because its port was taken.
func (s *Server) launch() (inUse bool, err error) {
	errOff, stderrOff := fileSize(s.errPath()), fileSize(s.stderrPath())
	out, err := os.OpenFile(s.stderrPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	defer out.Close()
	cmd := exec.Command(s.paths.Apache, "-DFOREGROUND", "-f", s.confPath())
	cmd.Dir = s.Dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A process group of its own: Apache may signal its whole process
		// group (the prefork MPM sends SIGUSR1 to it on a graceful restart
		// and SIGTERM on stop), which must not reach the test binary.
		Setpgid: true,
		// If the test binary dies (a panic, a -timeout), take Apache along.
		Pdeathsig: syscall.SIGTERM,
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("apachetest: starting %s: %v", s.paths.Apache, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	s.proc = p
	if err := s.waitReady(nil, start); err != nil {
		s.Stop()
		logs := s.logsSince(errOff, stderrOff)
		inUse = strings.Contains(logs, "Address already in use")
		return inUse, fmt.Errorf("apachetest: Apache on %s (config %s): %v%s", s.Addr, s.confPath(), err, logs)
	}
	return false, nil
}

func (s *Server) reload(opt Options) error {
	p := s.proc
	if p == nil || p.exited() {
		return s.start(opt)
	}
	if err := s.pickTLSPort(opt, false); err != nil {
		return err
	}
	conf, err := s.config(opt)
	if err != nil {
		return err
	}
	start := time.Now()
	// Wait for the current generation to have its children, so that a
	// child appearing later is known to be of the new generation.
	var old map[procID]bool
	for {
		if old, err = children(p.cmd.Process.Pid); err != nil {
			return err
		}
		if len(old) > 0 {
			break
		}
		if p.exited() {
			return s.start(opt)
		}
		if time.Since(start) > ReadyTimeout {
			return fmt.Errorf("apachetest: Apache (pid %d) has no child processes%s", p.cmd.Process.Pid, s.logsSince(0, 0))
		}
		time.Sleep(time.Millisecond)
	}
	if err := writeFileAtomic(s.confPath(), []byte(conf)); err != nil {
		return err
	}
	errOff, stderrOff := fileSize(s.errPath()), fileSize(s.stderrPath())
	// A signal interrupts the parent's sleep between its rounds of
	// maintenance only if it arrives during it, so wait a little for the
	// parent to be asleep (waitReady handles a signal that came too early).
	for i := 0; i < 100; i++ {
		if st, ok := readStat(p.cmd.Process.Pid); !ok || st.state == 'S' {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return fmt.Errorf("apachetest: signalling Apache (pid %d): %v", p.cmd.Process.Pid, err)
	}
	// A child that the parent forked just before the signal is of the old
	// generation too: the parent needs milliseconds to read the new
	// configuration before it forks any child of the new one.
	if more, err := children(p.cmd.Process.Pid); err == nil {
		for id := range more {
			old[id] = true
		}
	}
	if err := s.waitReady(old, start); err != nil {
		s.Stop()
		return fmt.Errorf("apachetest: graceful restart of Apache on %s (config %s): %v%s", s.Addr, s.confPath(), err, s.logsSince(errOff, stderrOff))
	}
	if err := s.waitConfigured(errOff); err != nil {
		s.Stop()
		return fmt.Errorf("apachetest: graceful restart of Apache on %s (config %s): %v%s", s.Addr, s.confPath(), err, s.logsSince(errOff, stderrOff))
	}
	return nil
}

// waitConfigured waits for the parent to log that it read the new
// configuration (AH00489, a notice Apache logs whatever the LogLevel):
// under load the old generation can replace its children before the
// parent handles the signal, which waitReady would take for the new
// generation. A parent that exits instead refused the configuration. A
// configuration that logs elsewhere (its own ErrorLog) is given two
// seconds.
func (s *Server) waitConfigured(errOff int64) error {
	p := s.proc
	deadline := time.Now().Add(2 * time.Second)
	for {
		if strings.Contains(logTail(s.errPath(), errOff), "AH00489") {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("apache2 exited: %v", p.err)
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

// waitReady polls until the parent process has at least one child, none of
// them in old, and the port accepts connections. The children of a
// generation are only started once the parent has read its configuration,
// and a child of the old generation, even one about to exit, could still
// accept a connection: so once all of them are gone, every connection is
// served by the new configuration.
//
// After a graceful restart (old != nil), waitReady wakes up the parent when
// it sleeps while the restart is not done. Between its rounds of
// maintenance, the parent sleeps for a second, and a signal interrupts that
// sleep only if it arrives during it: one that arrives just before is
// handled, but the sleep that follows is not cut short. Likewise, the
// parent replaces the children of the old generation one for one as it
// reaps them, but if none has exited by the time it has read the new
// configuration, it sleeps for that second before it starts any child. So
// when the parent has been asleep for a while, waitReady sends SIGUSR1
// again, which wakes it up: either the restart still pending proceeds, or
// the parent restarts once more, reaps the exited children at once and
// replaces them. The wait before each such kick doubles, so that children
// that take long to exit (finishing a request) do not cause a stream of
// restarts.
func (s *Server) waitReady(old map[procID]bool, start time.Time) error {
	p := s.proc
	pid := p.cmd.Process.Pid
	delay := 250 * time.Microsecond
	kickAfter := 5 * time.Millisecond
	var asleep time.Time // since when the parent has been seen asleep
	for {
		if p.exited() {
			return fmt.Errorf("apache2 exited: %v", p.err)
		}
		kids, err := children(pid)
		if err != nil {
			return err
		}
		st, ok := readStat(pid)
		switch {
		case len(kids) > 0 && !overlaps(kids, old):
			c, err := net.DialTimeout("tcp", s.Addr, time.Second)
			if err == nil {
				c.Close()
				return nil
			}
		case old == nil || !ok || st.state != 'S':
			asleep = time.Time{}
		case asleep.IsZero():
			asleep = time.Now()
		case time.Since(asleep) > kickAfter:
			if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil && !errors.Is(err, os.ErrProcessDone) {
				return err
			}
			asleep = time.Time{}
			kickAfter = min(2*kickAfter, 250*time.Millisecond)
		}
		if time.Since(start) > ReadyTimeout {
			return fmt.Errorf("not ready within %v", ReadyTimeout)
		}
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Millisecond)
	}
}

func overlaps(a, b map[procID]bool) bool {
	for id := range a {
		if b[id] {
			return true
		}
	}
	return false
}

// A procID identifies a process even if its pid is reused.
type procID struct {
	pid   int
	start uint64 // start time in clock ticks since boot
}

// children returns the live (not zombie) child processes of ppid.
func children(ppid int) (map[procID]bool, error) {
	var pids []int
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", ppid, ppid)); err == nil {
		// The parent forks its children from its main thread.
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	} else {
		// Kernels without CONFIG_PROC_CHILDREN: scan all processes.
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return nil, fmt.Errorf("apachetest: listing processes: %v", err)
		}
		for _, e := range ents {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	kids := make(map[procID]bool)
	for _, pid := range pids {
		st, ok := readStat(pid)
		if ok && st.ppid == ppid && st.state != 'Z' && st.state != 'X' {
			kids[procID{pid, st.start}] = true
		}
	}
	return kids, nil
}

type procStat struct {
	state byte
	ppid  int
	start uint64
}

// readStat parses /proc/PID/stat; ok is false if the process is gone.
func readStat(pid int) (st procStat, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, false
	}
	// The command name, field 2, is in parentheses and may contain
	// anything; the fields after it are space-separated.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22
	// (starttime).
	if len(f) < 20 || len(f[0]) != 1 {
		return st, false
	}
	st.state = f[0][0]
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return st, false
	}
	if st.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return st, false
	}
	return st, true
}

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("apachetest: finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func writeFileAtomic(name string, data []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// quote returns s as a double-quoted configuration argument.
func quote(s string) (string, error) {
	if strings.ContainsAny(s, "\"\\\n\r") {
		return "", fmt.Errorf("apachetest: cannot quote %q in an Apache configuration", s)
	}
	return `"` + s + `"`, nil
}

// config generates the main configuration for opt.
func (s *Server) config(opt Options) (string, error) {
	var b strings.Builder
	var err error
	// q quotes a path, remembering the first error.
	q := func(path string) string {
		v, qerr := quote(path)
		if qerr != nil && err == nil {
			err = qerr
		}
		return v
	}

	docroot := opt.DocumentRoot
	if docroot == "" {
		docroot = filepath.Join(s.Dir, "htdocs")
		if err := os.MkdirAll(docroot, 0o755); err != nil {
			return "", err
		}
	}
	if !filepath.IsAbs(docroot) {
		return "", fmt.Errorf("apachetest: DocumentRoot %q is not absolute", docroot)
	}
	if os.Geteuid() == 0 {
		// The children read the document root as the unprivileged user.
		if err := checkSearchable(docroot); err != nil {
			return "", fmt.Errorf("apachetest: DocumentRoot: %v", err)
		}
	}
	run := filepath.Join(s.Dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		return "", err
	}

	fmt.Fprintf(&b, "# Generated by apachetest. It holds no access rule: the included files decide.\n")
	fmt.Fprintf(&b, "ServerRoot %s\n", q(s.Dir))
	fmt.Fprintf(&b, "ServerName 127.0.0.1\n")
	fmt.Fprintf(&b, "Listen 127.0.0.1:%d\n", s.port)
	if opt.TLS != nil {
		fmt.Fprintf(&b, "Listen 127.0.0.1:%d https\n", s.tlsPort)
	}
	fmt.Fprintf(&b, "PidFile %s\n", q(filepath.Join(s.Dir, "httpd.pid")))
	fmt.Fprintf(&b, "DefaultRuntimeDir %s\n", q(run))
	fmt.Fprintf(&b, "Mutex %s default\n", q("file:"+run))
	fmt.Fprintf(&b, "ErrorLog %s\n", q(s.errPath()))
	fmt.Fprintf(&b, "LogLevel info\n")
	fmt.Fprintf(&b, "LogFormat \"%%a \\\"%%r\\\" %%>s\" apachetest\n")
	fmt.Fprintf(&b, "CustomLog %s apachetest\n", q(filepath.Join(s.Dir, "access.log")))
	if os.Geteuid() == 0 {
		// Apache refuses to serve as root; mod_unixd switches the children
		// to this user, which must be able to read every served file.
		u, g := "www-data", "www-data"
		if _, lerr := user.Lookup(u); lerr != nil {
			u, g = "nobody", "nogroup"
		}
		fmt.Fprintf(&b, "User %s\nGroup %s\n", u, g)
	}
	b.WriteString("\n")

	for _, m := range opt.modules() {
		if strings.ContainsAny(m, "/. \t\"") || m == "" {
			return "", fmt.Errorf("apachetest: bad module name %q: want a name such as autoindex", m)
		}
		fmt.Fprintf(&b, "LoadModule %s_module %s\n", m, q(filepath.Join(s.paths.ModulesDir, "mod_"+m+".so")))
	}
	b.WriteString("\n")

	// Few processes and threads: quick to start and to restart.
	// The event MPM, Debian's default: it closes idle keep-alive
	// connections on a graceful restart, where prefork would keep a child
	// of the old generation busy until KeepAliveTimeout. One child with few
	// threads starts and restarts in a few milliseconds.
	b.WriteString(`StartServers 1
ServerLimit 4
ThreadLimit 8
ThreadsPerChild 8
MinSpareThreads 1
MaxSpareThreads 16
MaxRequestWorkers 32
MaxConnectionsPerChild 0
KeepAlive On

`)
	fmt.Fprintf(&b, "DocumentRoot %s\n", q(docroot))
	b.WriteString("DirectoryIndex index.html\n")
	b.WriteString("TypesConfig /etc/mime.types\n")
	if opt.RemoteIP {
		b.WriteString("RemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 127.0.0.1\n")
	}
	if opt.ProxyTo != "" {
		target, perr := proxyTarget(opt.ProxyTo)
		if perr != nil {
			return "", perr
		}
		fmt.Fprintf(&b, "ProxyRequests Off\nProxyPreserveHost On\nProxyPass \"/\" %s nocanon\nProxyPassReverse \"/\" %s\n", q(target), q(target))
	}
	if opt.TLS != nil {
		// The TLS listener: a host of its own, which inherits the rest
		// (SSLVerifyClient, SSLCACertificateFile, ...) from the main
		// server, where the cases put it.
		fmt.Fprintf(&b, "SSLSessionCache none\n<VirtualHost 127.0.0.1:%d>\n    SSLEngine on\n    SSLCertificateFile %s\n    SSLCertificateKeyFile %s\n</VirtualHost>\n",
			s.tlsPort, q(opt.TLS.CertFile), q(opt.TLS.KeyFile))
	}
	if opt.Extra != "" {
		b.WriteString("\n# Extra\n")
		b.WriteString(opt.Extra)
		if !strings.HasSuffix(opt.Extra, "\n") {
			b.WriteString("\n")
		}
	}
	for _, inc := range opt.Include {
		abs, aerr := filepath.Abs(inc)
		if aerr != nil {
			return "", aerr
		}
		fmt.Fprintf(&b, "\nInclude %s\n", q(abs))
	}
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// proxyTarget checks that raw is an http URL of a loopback host and returns
// it with a trailing slash, as ProxyPass "/" expects.
func proxyTarget(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("apachetest: ProxyTo: %v", err)
	}
	if u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("apachetest: ProxyTo %q: want http://HOST:PORT/...", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return "", fmt.Errorf("apachetest: ProxyTo %q: only loopback addresses are allowed", raw)
	}
	if !strings.HasSuffix(raw, "/") {
		raw += "/"
	}
	return raw, nil
}
