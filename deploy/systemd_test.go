package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

const unitFile = "systemd/orderly.service"

// installedBinary is where the unit runs orderly from (docs/deployment.md,
// "systemd").
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
		"ExecReload":  "/bin/kill -HUP $MAINPID", // SIGHUP reloads (docs/configuration.md, "Life cycle and reload")
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
	if u.last("Install", "WantedBy") != "multi-user.target" {
		t.Errorf("WantedBy=%s", u.last("Install", "WantedBy"))
	}
}

// exampleConfig is the configuration the unit's install commands copy to
// /etc/orderly/orderly.hcl.
const exampleConfig = "orderly.hcl.example"

// shutdownGrace reads shutdown_grace from an orderly.hcl, which must set
// it (orderly's default, 30s, would be checked nowhere), parsed as
// cmd/orderly's durationAttr parses it.
func shutdownGrace(t *testing.T, file string) time.Duration {
	t.Helper()
	v, ok := hclStrings(t, file)["shutdown_grace"]
	if !ok {
		t.Fatalf("%s does not set shutdown_grace: set it, so that the stop timeout is checked against it", file)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s: shutdown_grace %q: want a positive duration", file, v)
	}
	return d
}

// TestSystemdStopTimeout: systemd waits longer after SIGTERM than the
// example configuration's shutdown_grace, so that orderly drains and then
// saves state_file before the SIGKILL.
func TestSystemdStopTimeout(t *testing.T) {
	u := parseUnit(readUnit(t))
	grace := shutdownGrace(t, exampleConfig)
	v := u.last("Service", "TimeoutStopSec")
	if v == "" {
		t.Fatal("no TimeoutStopSec: systemd's default (90s, DefaultTimeoutStopSec=) would be checked nowhere")
	}
	stop, err := parseTimeSpan(v)
	if err != nil {
		t.Fatalf("TimeoutStopSec=%s: %v", v, err)
	}
	t.Logf("%s shutdown_grace %s; TimeoutStopSec %s", exampleConfig, grace, stop)
	if stop <= grace {
		t.Errorf("TimeoutStopSec=%s is not above %s's shutdown_grace %s: systemd kills orderly mid-drain, before it saves state_file", v, exampleConfig, grace)
	}
}

// timeSpanUnits are systemd's time span units (systemd.time(7)).
var timeSpanUnits = map[string]time.Duration{
	"usec": time.Microsecond, "us": time.Microsecond, "µs": time.Microsecond,
	"msec": time.Millisecond, "ms": time.Millisecond,
	"seconds": time.Second, "second": time.Second, "sec": time.Second, "s": time.Second, "": time.Second,
	"minutes": time.Minute, "minute": time.Minute, "min": time.Minute, "m": time.Minute,
	"hours": time.Hour, "hour": time.Hour, "hr": time.Hour, "h": time.Hour,
	"days": 24 * time.Hour, "day": 24 * time.Hour, "d": 24 * time.Hour,
	"weeks": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "w": 7 * 24 * time.Hour,
}

var timeSpanPart = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?)\s*([a-zµ]*)`)

// parseTimeSpan parses a systemd time span such as "40s", "1min 30s" or
// "90" (seconds, where the setting's unit is seconds, as TimeoutStopSec's
// is). "infinity" is an error: the stop would never time out.
func parseTimeSpan(s string) (time.Duration, error) {
	rest := strings.TrimSpace(s)
	if rest == "" || rest == "infinity" {
		return 0, fmt.Errorf("%q: want a finite time span", s)
	}
	var d time.Duration
	for rest != "" {
		m := timeSpanPart.FindStringSubmatch(rest)
		if m == nil {
			return 0, fmt.Errorf("%q: not a time span", s)
		}
		unit, ok := timeSpanUnits[m[2]]
		if !ok {
			return 0, fmt.Errorf("%q: unknown unit %q", s, m[2])
		}
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %v", s, err)
		}
		d += time.Duration(n * float64(unit))
		rest = strings.TrimSpace(rest[len(m[0]):])
	}
	return d, nil
}

func TestParseTimeSpan(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"40s": 40 * time.Second, "40": 40 * time.Second, "1min 30s": 90 * time.Second, "1m30s": 90 * time.Second,
		"2min": 2 * time.Minute, "500ms": 500 * time.Millisecond, "1.5s": 1500 * time.Millisecond, " 1h ": time.Hour,
	} {
		if got, err := parseTimeSpan(in); err != nil || got != want {
			t.Errorf("parseTimeSpan(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "infinity", "40x", "s", "-1s"} {
		if got, err := parseTimeSpan(in); err == nil {
			t.Errorf("parseTimeSpan(%q) = %v, want an error", in, got)
		}
	}
}
