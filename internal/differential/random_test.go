package differential

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/internal/gen"
)

var seedFlag = flag.Int64("seed", 0, "seed of TestRandomDifferential (default: $ORDERLY_SEED, else the time)")

// randomSeed returns the seed: -seed if given, else ORDERLY_SEED, else
// the time.
func randomSeed(t *testing.T) int64 {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "seed" })
	if set {
		return *seedFlag
	}
	if v := os.Getenv("ORDERLY_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("ORDERLY_SEED=%q: %v", v, err)
		}
		return n
	}
	return time.Now().UnixNano()
}

// randomConfigs returns the number of configurations to try:
// ORDERLY_RANDOM_CONFIGS, default 500.
func randomConfigs(t *testing.T) int {
	v := os.Getenv("ORDERLY_RANDOM_CONFIGS")
	if v == "" {
		return 500
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("ORDERLY_RANDOM_CONFIGS=%q: want a positive number", v)
	}
	return n
}

// randomSaveLimit returns how many new cases one run may write to the
// corpus: ORDERLY_RANDOM_SAVE, default 10. While a bug is open every run
// finds it again; the cap keeps a run from filling the 9xx numbers.
func randomSaveLimit(t *testing.T) int {
	v := os.Getenv("ORDERLY_RANDOM_SAVE")
	if v == "" {
		return 10
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("ORDERLY_RANDOM_SAVE=%q: want a number", v)
	}
	return n
}

// randomCase returns configuration n of a run: its own generator stream,
// so that one configuration is regenerated without the others.
func randomCase(seed int64, n int) *apachetest.Case {
	c := gen.Generate(rand.New(rand.NewPCG(uint64(seed), uint64(n))))
	c.Name = fmt.Sprintf("random-%d-%d", seed, n)
	c.Path = fmt.Sprintf("random seed %d config %d", seed, n)
	return c
}

// tolerantOrderly is orderly as the front, except that a refusal to start
// does not stop the run: the requests then fail to connect, and count as
// disagreements, with the reason kept in err.
type tolerantOrderly struct {
	orderlyFront
	err error
}

func (f *tolerantOrderly) start(t *testing.T, l apachetest.Layout, backend string) (string, func()) {
	addr, stop, err := f.launch(l, backend)
	f.err = err
	if err != nil {
		return "127.0.0.1:1", func() {}
	}
	return addr, stop
}

// TestRandomDifferential replays generated configurations (internal/gen)
// on Apache and through orderly, with one oracle and one backend that are
// reloaded for each. A configuration Apache refuses is a generator bug and
// fails the test with its text. A disagreement is saved as a new fixed
// case, testdata/corpus/9xx-random-SEED-N.txtar, with the oracle's answers
// as want= values, and fails the test.
func TestRandomDifferential(t *testing.T) {
	apachetest.Require(t)
	seed, count, saveLimit := randomSeed(t), randomConfigs(t), randomSaveLimit(t)
	fmt.Printf("random differential: seed %d\n", seed)
	t.Logf("random differential: seed %d, %d configurations", seed, count)

	var (
		tl      tally
		s       servers
		fr      = &tolerantOrderly{}
		current *apachetest.Case
		saved   []string
		unsaved []int    // configurations that disagreed beyond the save limit
		bypass  []string // disagreements where Apache refuses and orderly forwards
		other   []string // every other disagreement
	)
	// A failure inside the harness, above all Apache refusing a generated
	// configuration (a generator bug, which Reload reports with Apache's
	// logs), shows the configuration too.
	defer func() {
		if t.Failed() && current != nil {
			t.Logf("the run stopped in %s; if Apache refused it, internal/gen generated an invalid configuration:\n%s", current.Path, gen.Archive(current))
		}
	}()
	start := time.Now()
	tmp := apachetest.TempDir(t)
	for n := range count {
		c := randomCase(seed, n)
		current = c
		dir := filepath.Join(tmp, fmt.Sprint(n%4))
		os.RemoveAll(dir)
		outs := s.runCase(t, fr, c, dir, &tl)
		current = nil
		var found []string
		for _, o := range outs {
			switch {
			case o.mismatch != "" && fr.err != nil:
				found = append(found, o.mismatch+" [orderly refused the configuration]")
				other = append(other, o.mismatch)
			case o.bypass:
				found = append(found, o.mismatch)
				bypass = append(bypass, o.mismatch)
			case o.mismatch != "":
				found = append(found, o.mismatch)
				other = append(other, o.mismatch)
			case o.logMismatch != "":
				found = append(found, o.logMismatch)
				other = append(other, o.logMismatch)
			}
		}
		if fr.err != nil {
			t.Errorf("%s: orderly refused a configuration Apache accepts: %v", c.Path, fr.err)
		}
		if len(found) > 0 && len(saved) >= saveLimit {
			unsaved = append(unsaved, n)
		} else if len(found) > 0 {
			name, err := saveRandomCase(c, seed, n, outs, found)
			if err != nil {
				t.Errorf("%s: saving the case: %v", c.Path, err)
			} else {
				saved = append(saved, name)
			}
		}
	}
	tl.elapsed = time.Since(start)
	fmt.Printf("random differential: %d configs, %d requests, %d agree, %d bypasses, seed %d, %.1f seconds\n",
		tl.cases, tl.requests, tl.agree, tl.bypasses, seed, tl.elapsed.Seconds())
	fmt.Printf("random differential: time in Apache reloads %.1fs, orderly start/stop %.1fs, requests %.1fs; error-log codes compared on %d requests, %d differ [%s]\n",
		tl.reloading.Seconds(), tl.starting.Seconds(), tl.requesting.Seconds(), tl.logged, len(tl.logMismatches), runtime.Version())
	for _, m := range bypass {
		t.Errorf("BYPASS (Apache refuses, orderly forwards): %s", m)
	}
	for _, m := range other {
		t.Errorf("disagreement: %s", m)
	}
	if len(saved) > 0 {
		t.Errorf("saved %d new cases in %s: %s", len(saved), *corpusDir, strings.Join(saved, ", "))
	}
	if len(unsaved) > 0 {
		t.Errorf("%d more configurations disagreed and were not saved (ORDERLY_RANDOM_SAVE=%d): %v", len(unsaved), saveLimit, unsaved)
	}
}

var numbered = regexp.MustCompile(`^9(\d\d)-`)

// saveRandomCase writes c as the next free 9xx-random-SEED-N.txtar of the
// corpus, with the oracle's statuses as want= values and a comment naming
// the seed and the disagreements.
func saveRandomCase(c *apachetest.Case, seed int64, n int, outs []outcome, found []string) (string, error) {
	names, err := filepath.Glob(filepath.Join(*corpusDir, "9*.txtar"))
	if err != nil {
		return "", err
	}
	next := 900
	for _, name := range names {
		if m := numbered.FindStringSubmatch(filepath.Base(name)); m != nil {
			k, _ := strconv.Atoi(m[1])
			next = max(next, 900+k+1)
		}
	}
	if next > 999 {
		return "", fmt.Errorf("no free 9xx number left in %s", *corpusDir)
	}
	out := *c
	out.Requests = nil
	for _, o := range outs {
		rq := o.rq
		rq.Text = ""
		rq.Want = strconv.Itoa(o.want.Status)
		out.Requests = append(out.Requests, rq)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found by TestRandomDifferential (internal/differential): seed %d,\n", seed)
	fmt.Fprintf(&b, "configuration %d (ORDERLY_SEED=%d; the case is\n", n, seed)
	fmt.Fprintf(&b, "gen.Generate(rand.New(rand.NewPCG(%d, %d)))). The want= values are\n", uint64(seed), n)
	b.WriteString("the oracle's (Apache 2.4) answers. Disagreements when it was found:\n")
	sort.Strings(found)
	for _, f := range found {
		_, rest, _ := strings.Cut(f, ": ")
		fmt.Fprintf(&b, "  %s\n", rest)
	}
	out.Comment = b.String()
	name := fmt.Sprintf("%03d-random-%d-%d.txtar", next, seed, n)
	data := gen.Archive(&out)
	if _, err := apachetest.ParseCase(name, data); err != nil {
		return "", fmt.Errorf("the case does not parse back: %v", err)
	}
	return name, os.WriteFile(filepath.Join(*corpusDir, name), data, 0o644)
}
