// Command testreport reads the output of go test (-json, or -v text with
// -text) on its standard input, passes it on, and ends the run with the
// count of tests that passed, failed and were skipped. It exits 1 when a
// test or package failed, when nothing ran, or when a test was skipped
// that the allow-list does not name: a skip is never silent (issue 14).
//
// The allow-list (-allow FILE) has one skip per line, "TestName: reason",
// where TestName is the name go test gives (a subtest as
// TestParent/sub); blank lines and lines starting with # are comments.
//
// Usage:
//
//	go test -json ./... | go run ./internal/cmd/testreport -allow testdata/skips.txt
//	go test -v ./internal/differential/ | go run ./internal/cmd/testreport -text -allow testdata/skips.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// report is what a run came to.
type report struct {
	passed, failed int
	skipped        map[string]bool // test name -> skipped
	pkgFailed      []string
	// output holds each running test's output (JSON mode), printed when
	// it fails.
	output map[string]*strings.Builder
}

func main() {
	text := flag.Bool("text", false, "the input is go test -v text, passed on as it is")
	verbose := flag.Bool("v", false, "JSON input: pass every test's output on, not only the failed ones'")
	allowFile := flag.String("allow", "", "the allow-list of skips")
	flag.Parse()
	allow, err := readAllow(*allowFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	r := &report{skipped: map[string]bool{}, output: map[string]*strings.Builder{}}
	if *text {
		r.readText(os.Stdin, os.Stdout)
	} else {
		r.readJSON(os.Stdin, os.Stdout, *verbose)
	}
	os.Exit(r.finish(os.Stdout, allow))
}

// readAllow reads the allow-list: test name -> reason.
func readAllow(name string) (map[string]string, error) {
	allow := map[string]string{}
	if name == "" {
		return allow, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		test, reason, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: want \"TestName: reason\"", name, n+1)
		}
		allow[strings.TrimSpace(test)] = strings.TrimSpace(reason)
	}
	return allow, nil
}

func (r *report) readJSON(in io.Reader, out io.Writer, verbose bool) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // a build error, say
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if verbose {
				io.WriteString(out, e.Output)
				continue
			}
			if e.Test == "" {
				// The package's own lines: ok, FAIL, build errors.
				if !strings.HasPrefix(e.Output, "PASS") && !strings.HasPrefix(e.Output, "FAIL\n") {
					io.WriteString(out, e.Output)
				}
				continue
			}
			b := r.output[key]
			if b == nil {
				b = new(strings.Builder)
				r.output[key] = b
			}
			b.WriteString(e.Output)
		case "pass":
			if e.Test != "" {
				r.passed++
			}
			delete(r.output, key)
		case "skip":
			if e.Test != "" {
				r.skipped[e.Test] = true
				if b := r.output[key]; b != nil && !verbose {
					io.WriteString(out, b.String())
				}
			}
			delete(r.output, key)
		case "fail":
			if e.Test == "" {
				r.pkgFailed = append(r.pkgFailed, e.Package)
				continue
			}
			r.failed++
			if b := r.output[key]; b != nil && !verbose {
				io.WriteString(out, b.String())
			}
			delete(r.output, key)
		}
	}
}

var (
	resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)
	pkgFail    = regexp.MustCompile(`^FAIL\s+(\S+)`)
)

func (r *report) readText(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(out, line)
		if m := resultLine.FindStringSubmatch(line); m != nil {
			switch m[1] {
			case "PASS":
				r.passed++
			case "FAIL":
				r.failed++
			case "SKIP":
				r.skipped[m[2]] = true
			}
		} else if m := pkgFail.FindStringSubmatch(line); m != nil {
			r.pkgFailed = append(r.pkgFailed, m[1])
		}
	}
}

// finish prints the counts and the skips, and returns the exit status.
func (r *report) finish(out io.Writer, allow map[string]string) int {
	var skips []string
	for t := range r.skipped {
		skips = append(skips, t)
	}
	sort.Strings(skips)
	status := 0
	fmt.Fprintf(out, "tests: %d passed, %d failed, %d skipped\n", r.passed, r.failed, len(skips))
	for _, t := range skips {
		if why, ok := allowed(allow, t); ok {
			fmt.Fprintf(out, "  skipped (allowed: %s): %s\n", why, t)
		} else {
			fmt.Fprintf(out, "  SKIPPED, not on the allow-list: %s\n", t)
			status = 1
		}
	}
	if r.failed > 0 || len(r.pkgFailed) > 0 {
		if len(r.pkgFailed) > 0 {
			fmt.Fprintf(out, "failed packages: %s\n", strings.Join(r.pkgFailed, " "))
		}
		status = 1
	}
	if r.passed == 0 && r.failed == 0 {
		fmt.Fprintln(out, "no test ran")
		status = 1
	}
	return status
}

// allowed reports whether the allow-list names test or the top-level test
// it is a subtest of.
func allowed(allow map[string]string, test string) (string, bool) {
	for t := test; ; {
		if why, ok := allow[t]; ok {
			return why, true
		}
		i := strings.LastIndexByte(t, '/')
		if i < 0 {
			return "", false
		}
		t = t[:i]
	}
}
