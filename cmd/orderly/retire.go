package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/retire"
)

const retireUsage = `usage: orderly retire [-config orderly.hcl] [-metrics FILE|URL] [-prometheus URL [-window 30d]] [-format table|json]

Lists the legacy rules that can go, and why: those that can never decide,
and, from a scrape of /metrics or a Prometheus server, those that did not
fire. A metrics source that cannot be read is an error: nothing is listed.

Exit status: 0 listed (with or without findings), 2 bad usage, a
configuration or a metrics source that cannot be read.
`

// cmdRetire lists the legacy rules that can go:
// orderly retire -config orderly.hcl [-metrics FILE|URL] [-prometheus URL -window 30d] [-format table|json]
func cmdRetire(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("retire", retireUsage, stderr)
	configPath := fs.String("config", "orderly.hcl", "configuration file")
	metrics := fs.String("metrics", "", "a scrape of orderly's /metrics: a file, or the http:// URL to scrape")
	prom := fs.String("prometheus", "", "a Prometheus server's URL: the fleet's counters over -window")
	window := fs.String("window", "30d", "with -prometheus: how far back (a Prometheus duration)")
	format := fs.String("format", "table", `"table" or "json"`)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "retire: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *format != "table" && *format != "json" {
		fmt.Fprintf(stderr, "retire: -format %q: want \"table\" or \"json\"\n", *format)
		return 2
	}
	rc, _, diags := loadConfig(*configPath)
	if diags.HasErrors() {
		printDiags(stderr, diags)
		return 2
	}
	cfg, err := translate.Load(rc.LegacyFiles, rc.Legacy)
	if err != nil {
		printErrs(stderr, err)
		return 2
	}
	findings := retire.Static(cfg)
	// The demoted rules' disagreements (against="demoted"), where traffic
	// was read: nil says none was.
	var against map[string]float64
	when := ""
	if *metrics != "" {
		in, err := openMetrics(*metrics)
		if err != nil {
			fmt.Fprintf(stderr, "retire: -metrics %s: %v\n", *metrics, err)
			return 2
		}
		scrape, err := io.ReadAll(in)
		in.Close()
		if err != nil {
			fmt.Fprintf(stderr, "retire: -metrics %s: %v\n", *metrics, err)
			return 2
		}
		more, err := retire.FromMetrics(cfg.Rules, retire.IndexOf(cfg), bytes.NewReader(scrape))
		if err == nil {
			against, err = retire.DemotedDisagreements(bytes.NewReader(scrape))
		}
		if err == nil {
			when, err = retire.Since(bytes.NewReader(scrape))
		}
		if err != nil {
			fmt.Fprintf(stderr, "retire: -metrics %s: %v\n", *metrics, err)
			return 2
		}
		findings = append(findings, more...)
	}
	if *prom != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		base := strings.TrimSuffix(*prom, "/")
		more, err := retire.FromPrometheus(ctx, base, *window, cfg.Rules, retire.IndexOf(cfg))
		if err == nil {
			against, err = retire.DemotedFromPrometheus(ctx, base, *window)
		}
		cancel()
		if err != nil {
			fmt.Fprintf(stderr, "retire: -prometheus %s: %v\n", *prom, err)
			return 2
		}
		findings = append(findings, more...)
		when = "in the last " + *window
	}
	findings = retire.MarkDemoted(findings, cfg.Rules, rc.Demote, against, when)
	if *format == "json" {
		if findings == nil {
			findings = []retire.Finding{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(findings)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERDICT\tSEVERITY\tKIND\tWHERE\tRULE\tDIRECTIVE\tWHY")
	for _, f := range findings {
		v := f.Verdict
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s:%d\t%s\t%s\t%s\n", v, f.Severity, f.Kind, f.File, f.Line, f.RuleID, f.Text, f.Why)
	}
	tw.Flush()
	fmt.Fprintf(stderr, "retire: %d findings\n", len(findings))
	if len(findings) > 0 {
		fmt.Fprintln(stderr, `retire: to try a deletion first, demote the rules to shadow-only (legacy { demote = ["<rule>", ...] }) and reload: they stay counted, and orderly_shadow_disagreements_total{against="demoted"} counts what deleting them would let through`)
	}
	return 0
}

// openMetrics opens a metrics file, or scrapes a URL.
func openMetrics(src string) (io.ReadCloser, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		return os.Open(src)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(src)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s", resp.Status)
	}
	return resp.Body, nil
}
