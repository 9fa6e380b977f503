package regex

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// pcre2 is libpcre2-8, the library Apache 2.4 links, run by
// testdata/pcre2oracle.c: the patterns' reference answers. It is built
// with cc when libpcre2-dev is installed (make test installs it) and
// the tests that need it are skipped otherwise, or fail under CI=true.
type pcre2 struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

var (
	oracleOnce sync.Once
	oracle     *pcre2
	oracleErr  error
)

// startOracle builds the C program src with cc and the flags given
// (pkg-config's, or a library) and starts it.
func startOracle(src, name string, ldflags ...string) (io.WriteCloser, *bufio.Reader, error) {
	dir, err := os.MkdirTemp("", name)
	if err != nil {
		return nil, nil, err
	}
	bin := filepath.Join(dir, name)
	args := append([]string{"-O2", "-o", bin, src}, ldflags...)
	out, err := exec.Command("cc", args...).CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("building %s: %v: %s", src, err, out)
	}
	cmd := exec.Command(bin)
	in, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return in, bufio.NewReader(stdout), nil
}

// skipOrFail skips a test whose oracle is missing, or fails it under
// CI=true, where make test installs what it needs.
func skipOrFail(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: %v", what, err)
	}
	t.Skipf("%s: %v", what, err)
}

func pcre2Oracle(t testing.TB) *pcre2 {
	t.Helper()
	oracleOnce.Do(func() {
		in, out, err := startOracle("testdata/pcre2oracle.c", "pcre2oracle", "-lpcre2-8")
		if err != nil {
			oracleErr = fmt.Errorf("%v (needs cc and libpcre2-dev)", err)
			return
		}
		oracle = &pcre2{in: in, out: out}
	})
	if oracleErr != nil {
		skipOrFail(t, "PCRE2 oracle", oracleErr)
	}
	return oracle
}

// PCRE2 compile options (pcre2.h).
const (
	pcre2Caseless      = 0x8
	pcre2DollarEndOnly = 0x10
	pcre2DotAll        = 0x20
	pcre2DupNames      = 0x40
	pcre2Multiline     = 0x400
)

func pcre2Flags(o Options) int {
	f := 0
	if o.ICase {
		f |= pcre2Caseless
	}
	if o.DollarEndOnly {
		f |= pcre2DollarEndOnly
	}
	if o.DotAll {
		f |= pcre2DotAll
	}
	if o.DupNames {
		f |= pcre2DupNames
	}
	if o.Newline {
		f |= pcre2Multiline
	}
	return f
}

// answer is what PCRE2 said: compiled, matched, the ovector; failed for
// a match error (its match limit).
type answer struct {
	compiled, matched, failed bool
	m                         []int
}

func (o *pcre2) run(pattern, subject string, opt Options) answer {
	o.mu.Lock()
	defer o.mu.Unlock()
	hx := func(s string) string {
		if s == "" {
			return "-"
		}
		return hex.EncodeToString([]byte(s))
	}
	fmt.Fprintf(o.in, "%d %s %s\n", pcre2Flags(opt), hx(pattern), hx(subject))
	line, err := o.out.ReadString('\n')
	if err != nil {
		panic(err)
	}
	f := strings.Fields(line)
	switch f[0] {
	case "ERR":
		return answer{}
	case "NOMATCH":
		return answer{compiled: true}
	case "FAIL":
		return answer{compiled: true, failed: true}
	}
	a := answer{compiled: true, matched: true}
	for _, x := range f[1:] {
		v, _ := strconv.Atoi(x)
		a.m = append(a.m, v)
	}
	return a
}
