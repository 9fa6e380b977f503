package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/orderly-proxy/orderly/proxy"
)

// The backend guard (issue #7 item 8): `orderly translate -backend-guard`
// writes the backend's configuration that answers only orderly, and
// `orderly serve` probes the backend at start-up (proxy/guard.go).

// readGuardToken reads backend.guard_token_file.
func readGuardToken(path string, r hcl.Range) (string, hcl.Diagnostics) {
	tok, err := loadGuardToken(path)
	if err != nil {
		return "", hcl.Diagnostics{diag("Invalid guard token file", err.Error(), r)}
	}
	return tok, nil
}

// loadGuardToken reads a token file: the token, surrounding white space
// removed, checked by proxy.ValidGuardToken.
func loadGuardToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if err := proxy.ValidGuardToken(tok); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	return tok, nil
}

// guardProbeFor bounds how long serve retries a probe the backend does not
// answer (it may still be starting).
const guardProbeFor = time.Minute

// probeGuard runs the start-up probe of the backend guard once orderly
// serves: it logs each problem found as a warning (or that the guard is
// verified) and sets orderly_backend_guard_ok. While the backend cannot be
// reached it retries every 2 seconds, for guardProbeFor.
func probeGuard(ctx context.Context, rc *runtimeConfig, m *proxy.Metrics, logger *slog.Logger) {
	deadline := time.Now().Add(guardProbeFor)
	for {
		r, err := proxy.ProbeGuard(ctx, rc.Backend, rc.GuardToken, nil)
		if err == nil {
			m.GuardChecked(r)
			attrs := []any{"backend", rc.Backend.String(), "control_status", r.ControlStatus, "forwarded_for_status", r.ForwardedForStatus}
			if r.TokenChecked {
				attrs = append(attrs, "without_token_status", r.BypassStatus)
			}
			if r.OK() {
				logger.Info("backend guard verified: the backend refuses requests that do not come through orderly", attrs...)
				return
			}
			for _, p := range r.Problems() {
				logger.Warn("backend guard check failed", append([]any{"problem", p}, attrs...)...)
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			logger.Warn("backend guard check failed", "problem", "the backend did not answer the guard probe, so orderly cannot tell whether it is locked down", "backend", rc.Backend.String(), "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

// guardFlags are translate's flags for the backend guard.
type guardFlags struct {
	enabled    *bool
	orderly    *string
	tokenFile  *string
	trusted    *string
	modulesDir *string
}

// guardFile is the name of the guard under translate -o DIR.
const guardFile = "orderly-guard.conf"

func addGuardFlags(fs *flag.FlagSet) *guardFlags {
	return &guardFlags{
		enabled:    fs.Bool("backend-guard", false, "also write the backend guard ("+guardFile+"): the 2.4 server then answers only orderly"),
		orderly:    fs.String("orderly-addr", "", "with -backend-guard: orderly's addresses or prefixes as the backend sees them, comma-separated (required)"),
		tokenFile:  fs.String("guard-token-file", "", "with -backend-guard: file holding the token orderly sends (backend.guard_token_file)"),
		trusted:    fs.String("trusted-proxies", "", "with -backend-guard: proxies in front of orderly (client_ip.trusted_proxies), comma-separated: their X-Forwarded-For entries are believed, they cannot connect"),
		modulesDir: fs.String("modules-dir", "/usr/lib/apache2/modules", "with -backend-guard: where mod_remoteip.so is"),
	}
}

// config checks the flags and returns the guard's text; "" without
// -backend-guard.
func (g *guardFlags) config() (string, error) {
	if !*g.enabled {
		if *g.orderly != "" || *g.tokenFile != "" || *g.trusted != "" {
			return "", errors.New("-orderly-addr, -guard-token-file and -trusted-proxies go with -backend-guard")
		}
		return "", nil
	}
	if *g.orderly == "" {
		return "", errors.New("-backend-guard needs -orderly-addr: the addresses orderly connects to the backend from")
	}
	opt := proxy.GuardOptions{ModulesDir: *g.modulesDir}
	var err error
	if opt.Orderly, err = parsePrefixes("-orderly-addr", *g.orderly); err != nil {
		return "", err
	}
	if *g.trusted != "" {
		if opt.TrustedProxies, err = parsePrefixes("-trusted-proxies", *g.trusted); err != nil {
			return "", err
		}
	}
	if *g.tokenFile != "" {
		if opt.Token, err = loadGuardToken(*g.tokenFile); err != nil {
			return "", err
		}
	}
	return proxy.GuardConfig(opt)
}

// write puts the guard in DIR/orderly-guard.conf (readable by its owner
// only when it holds a token), or on stdout when dir is "". header marks
// it as one file among others on stdout.
func (g *guardFlags) write(text, dir string, header bool, stdout io.Writer) error {
	if dir == "" {
		if header {
			fmt.Fprintf(stdout, "# ==== %s\n", guardFile)
		}
		_, err := io.WriteString(stdout, text)
		return err
	}
	mode := os.FileMode(0o644)
	if *g.tokenFile != "" {
		mode = 0o600
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(dir, guardFile)
	if err := os.WriteFile(dst, []byte(text), mode); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

// parsePrefixes reads a comma-separated list of addresses and prefixes.
func parsePrefixes(flagName, s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%s: %q is not an address or CIDR prefix", flagName, f)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no address", flagName)
	}
	return out, nil
}
