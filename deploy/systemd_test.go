package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

const unitFile = "systemd/orderly.service"

// installedBinary is where the unit runs orderly from (README,
// "Deployment").
const installedBinary = "/usr/local/bin/orderly"

// maxExposure is the highest overall exposure `systemd-analyze security`
// may give the unit, in tenths (0 is fully sandboxed, 100 not at all): 2.0,
// inside its "OK" band.
const maxExposure = "20"

// unit is a systemd unit file: section, then key, then every value given,
// in order.
type unit map[string]map[string][]string

func parseUnit(text string) unit {
	u := unit{}
	var sec string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			sec = line[1 : len(line)-1]
			if u[sec] == nil {
				u[sec] = map[string][]string{}
			}
		default:
			k, v, ok := strings.Cut(line, "=")
			if ok && sec != "" {
				u[sec][strings.TrimSpace(k)] = append(u[sec][strings.TrimSpace(k)], strings.TrimSpace(v))
			}
		}
	}
	return u
}

// last returns the value in force for a key: the last one given.
func (u unit) last(sec, key string) string {
	vs := u[sec][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

func readUnit(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runnableUnit writes the unit to a temporary directory with ExecStart
// pointing at the binary the Dockerfile's build makes, so that verify
// checks a program that exists, and returns its path.
func runnableUnit(t *testing.T, text string) string {
	t.Helper()
	bin := orderlyBinary(t)
	re := regexp.MustCompile(`(?m)^ExecStart=` + regexp.QuoteMeta(installedBinary) + ` `)
	if !re.MatchString(text) {
		t.Fatalf("%s: ExecStart does not run %s", unitFile, installedBinary)
	}
	path := filepath.Join(t.TempDir(), "orderly.service")
	if err := os.WriteFile(path, []byte(re.ReplaceAllString(text, "ExecStart="+bin+" ")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// verify runs systemd-analyze verify, which prints nothing for a good
// unit and a line for each unknown key, bad value or missing program
// (some of them with exit status 0, hence the check on the output).
func verify(t *testing.T, tool, path string) (string, bool) {
	t.Helper()
	out, err := exec.Command(tool, "verify", path).CombinedOutput()
	return string(out), err == nil && len(bytes.TrimSpace(out)) == 0
}

// TestSystemdUnitVerify: systemd-analyze verify accepts the unit, and
// rejects a copy with a misspelt key (so the check can fail).
func TestSystemdUnitVerify(t *testing.T) {
	tool := apachetest.RequireTool(t, "systemd-analyze", "systemd")
	text := readUnit(t)
	if out, ok := verify(t, tool, runnableUnit(t, text)); !ok {
		t.Errorf("systemd-analyze verify %s:\n%s", unitFile, out)
	}
	bad := strings.Replace(text, "\nProtectSystem=", "\nProtectSystm=", 1)
	if out, ok := verify(t, tool, runnableUnit(t, bad)); ok {
		t.Errorf("systemd-analyze verify accepts a misspelt key: the check proves nothing\n%s", out)
	}
}

// TestSystemdUnitSecurity: systemd-analyze security rates the sandbox at
// most maxExposure, and rates a unit without it above.
func TestSystemdUnitSecurity(t *testing.T) {
	tool := apachetest.RequireTool(t, "systemd-analyze", "systemd")
	text := readUnit(t)
	check := func(path string) (string, bool) {
		out, err := exec.Command(tool, "security", "--offline=yes", "--no-pager", "--threshold="+maxExposure, path).CombinedOutput()
		return string(out), err == nil
	}
	out, ok := check(runnableUnit(t, text))
	if m := regexp.MustCompile(`Overall exposure level for .*`).FindString(out); m != "" {
		t.Log(m)
	}
	if !ok {
		t.Errorf("systemd-analyze security --threshold=%s %s fails:\n%s", maxExposure, unitFile, out)
	}
	// The control: the same service with no sandboxing.
	u := parseUnit(text)
	bare := "[Service]\nExecStart=" + u.last("Service", "ExecStart") + "\n"
	if out, ok := check(runnableUnit(t, bare)); ok {
		t.Errorf("an unsandboxed unit passes --threshold=%s: the check proves nothing\n%s", maxExposure, out)
	}
}

// TestSystemdUnitSettings: the settings the deployment relies on, each
// for a reason orderly's behaviour gives.
func TestSystemdUnitSettings(t *testing.T) {
	u := parseUnit(readUnit(t))
	s := "Service"
	want := map[string]string{
		"ExecStart":   installedBinary + " serve -config /etc/orderly/orderly.hcl",
		"ExecReload":  "/bin/kill -HUP $MAINPID", // SIGHUP reloads (README, "Reload")
		"KillSignal":  "SIGTERM",                 // graceful: drain, save state_file
		"DynamicUser": "yes",
		// state_file and log files: the only places orderly writes.
		"StateDirectory":           "orderly",
		"LogsDirectory":            "orderly",
		"ProtectSystem":            "strict",
		"ProtectHome":              "yes",
		"PrivateTmp":               "yes",
		"NoNewPrivileges":          "yes",
		"CapabilityBoundingSet":    "CAP_NET_BIND_SERVICE",
		"AmbientCapabilities":      "CAP_NET_BIND_SERVICE", // :80, :443 without root
		"RestartPreventExitStatus": "2",                    // bad input: a restart will not fix it
	}
	for k, v := range want {
		if got := u.last(s, k); got != v {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
	if fs := u[s]["SystemCallFilter"]; !slices.Contains(fs, "@system-service") {
		t.Errorf("SystemCallFilter %q: want @system-service", fs)
	}
	fams := strings.Fields(u.last(s, "RestrictAddressFamilies"))
	if !slices.Contains(fams, "AF_INET") || !slices.Contains(fams, "AF_INET6") || slices.Contains(fams, "AF_PACKET") || slices.Contains(fams, "AF_NETLINK") {
		t.Errorf("RestrictAddressFamilies %q: want AF_INET and AF_INET6, nothing exotic", fams)
	}
	// serve drains for up to 10 s, then writes state_file.
	d, err := time.ParseDuration(u.last(s, "TimeoutStopSec"))
	if err != nil || d < 15*time.Second {
		t.Errorf("TimeoutStopSec=%s: want a duration of at least 15s (10 s drain, then state_file)", u.last(s, "TimeoutStopSec"))
	}
	if u.last("Install", "WantedBy") != "multi-user.target" {
		t.Errorf("WantedBy=%s", u.last("Install", "WantedBy"))
	}
}
