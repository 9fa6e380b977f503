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

var (
	seedFlag     = flag.Int64("seed", 0, "seed of TestRandomDifferential (default: $ORDERLY_SEED, else the time)")
	randomConfig = flag.Int("random-config", -1, "run only this configuration of the seed (TestRandomDifferential)")
	triageDir    = flag.String("random-triage", filepath.Join(os.TempDir(), "orderly-random-triage"), "where TestRandomDifferential writes configurations that disagree at start")
	foundDir     = flag.String("random-found", filepath.Join(os.TempDir(), "orderly-random-found"), "where TestRandomDifferential writes the configurations whose requests disagree, as corpus cases (never into testdata/ during a run)")
)

// randomWide is the share of the configurations that internal/gen draws
// from the whole directive space (gen.Options.Wide); ORDERLY_RANDOM_WIDE
// sets another.
const randomWide = 1.0 / 3

// knownConstructs, knownDirectives and knownModules are what the generator leaves out
// of the run because they make orderly disagree with Apache in ways
// found, reported and not yet fixed; each says why. Set
// ORDERLY_RANDOM_KNOWN_BUGS=1 to draw them anyway (the run then fails
// until they are fixed).
var (
	knownConstructs = map[gen.Construct]string{
		gen.BadValues: "a value a directive's own code refuses, beyond what orderly checks as Apache does (the " +
			"count of arguments, a FLAG's On or Off, translate/values.go: keywords such as AllowEncodedSlashes " +
			"Maybe, FileETag, ForceLanguagePriority, RewriteOptions, Dav, LogLevel, AddOutputFilterByType's " +
			"providers): IndexOptions, Header, RequestReadTimeout, ExtFilterDefine with a word they do not know " +
			"(gen); Apache refuses to start (or answers 500 for an .htaccess file), orderly serves",
		gen.QuietLogLevel: "error log only: under LogLevel crit Apache logs no AH01797 or AH00037, orderly does",
		gen.ErrorDocumentLocal: "error log only: ErrorDocument 403 /index.html where /index.html is refused too: " +
			"Apache logs AH01797 for the request and for the internal redirect, orderly once",
	}
	knownDirectives = map[string]string{}
	knownModules    = map[string]string{
		"allowmethods": "mod_allowmethods loaded (no AllowMethods): Apache answers 403 to a POST, OPTIONS or unknown " +
			"method on a directory whose index sub-request a <Limit GET> refuses; orderly forwards it",
		"log_debug": "error log only: mod_log_debug loaded, Apache runs the access checks of mod_dir's index " +
			"sub-request again and logs AH01797 twice where orderly logs it once",
	}
)

// randomOptions are the generator's options for the run, and their
// description for replaying a seed.
func randomOptions(t *testing.T) (gen.Options, string) {
	wide := randomWide
	if v := os.Getenv("ORDERLY_RANDOM_WIDE"); v != "" {
		w, err := strconv.ParseFloat(v, 64)
		if err != nil || w < 0 || w > 1 {
			t.Fatalf("ORDERLY_RANDOM_WIDE=%q: want a share from 0 to 1", v)
		}
		wide = w
	}
	opt := gen.Options{Wide: wide}
	if os.Getenv("ORDERLY_RANDOM_KNOWN_BUGS") == "1" {
		return opt, fmt.Sprintf("wide %.2f, ORDERLY_RANDOM_KNOWN_BUGS=1", wide)
	}
	opt.Avoid = map[gen.Construct]bool{}
	for c := range knownConstructs {
		opt.Avoid[c] = true
	}
	opt.AvoidDirectives = map[string]bool{}
	for d := range knownDirectives {
		opt.AvoidDirectives[strings.ToLower(d)] = true
	}
	opt.AvoidModules = map[string]bool{}
	for m := range knownModules {
		opt.AvoidModules[m] = true
	}
	var avoid []string
	for c := range opt.Avoid {
		avoid = append(avoid, string(c))
	}
	for d := range opt.AvoidDirectives {
		avoid = append(avoid, d)
	}
	for m := range opt.AvoidModules {
		avoid = append(avoid, "mod_"+m)
	}
	sort.Strings(avoid)
	desc := fmt.Sprintf("wide %.2f", wide)
	if len(avoid) > 0 {
		desc += ", avoiding known bugs: " + strings.Join(avoid, " ")
	}
	return opt, desc
}

// randomSeed returns the seed: -seed if given, else ORDERLY_SEED, else
// the time.
// A randomRun is one seed's configurations.
type randomRun struct {
	seed  int64
	count int
}

// fixedSeeds are the seeds every run replays, so that what they found
// stays found; a run adds one new seed (the time) for what they miss.
var fixedSeeds = []int64{1, 2, 3}

// randomRuns returns the seeds to run: -seed or ORDERLY_SEED alone with
// ORDERLY_RANDOM_CONFIGS configurations; otherwise the fixed seeds, 100
// configurations each, then a new seed for the rest of
// ORDERLY_RANDOM_CONFIGS (default 500), at least 200.
func randomRuns(t *testing.T) []randomRun {
	return seedRuns(t, envCount(t, "ORDERLY_RANDOM_CONFIGS", 500), 100, 200)
}

// seedRuns returns the seeds to run: -seed or ORDERLY_SEED alone with
// count configurations; otherwise the fixed seeds, perFixed
// configurations each, then a new seed (the time) for the rest of count,
// at least atLeast.
func seedRuns(t *testing.T, count, perFixed, atLeast int) []randomRun {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "seed" })
	if set || os.Getenv("ORDERLY_SEED") != "" {
		return []randomRun{{randomSeed(t), count}}
	}
	var runs []randomRun
	for _, s := range fixedSeeds {
		runs = append(runs, randomRun{s, perFixed})
	}
	return append(runs, randomRun{time.Now().UnixNano(), max(count-perFixed*len(fixedSeeds), atLeast)})
}

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

// envCount returns the number the environment variable name gives, a
// positive one, or def when it is not set.
func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
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
// so that one configuration is regenerated without the others
// (-random-config n), and the constructs it holds.
func randomCase(seed int64, n int, opt gen.Options) (*apachetest.Case, []gen.Construct) {
	c, cs := gen.GenerateWith(rand.New(rand.NewPCG(uint64(seed), uint64(n))), opt)
	c.Name = fmt.Sprintf("random-%d-%d", seed, n)
	c.Path = fmt.Sprintf("random seed %d config %d", seed, n)
	return c, cs
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

// TestRandomDifferential replays generated configurations (internal/gen,
// a third of them drawn from the whole directive space) on Apache and
// through orderly, with one oracle and one backend that are reloaded for
// each. Starting is compared first (runRandomCase): a configuration both
// refuse agrees; one orderly refuses fail-closed and Apache serves is
// over-strict, counted and listed, no failure; one Apache refuses and
// orderly serves, or one orderly refuses for a reason of Apache's that
// Apache does not share, fails the test and is written to -random-triage.
// Where both serve, a disagreement on a request is saved as a corpus case,
// 9xx-random-SEED-N.txtar with the oracle's answers as want= values,
// under -random-found (a temporary directory: a run never writes into
// testdata/), and fails the test. The seeds are fixedSeeds and one new
// seed per run (randomRuns), each printed.
func TestRandomDifferential(t *testing.T) {
	apachetest.Require(t)
	runs, saveLimit := randomRuns(t), randomSaveLimit(t)
	opt, optDesc := randomOptions(t)
	var desc []string
	for _, r := range runs {
		desc = append(desc, fmt.Sprintf("seed %d: %d configurations", r.seed, r.count))
	}
	fmt.Printf("random differential: %s (%s)\n", strings.Join(desc, ", "), optDesc)
	t.Logf("random differential: %s", strings.Join(desc, ", "))

	var (
		tl      tally
		lt      loadTally
		s       servers
		fr      = &tolerantOrderly{}
		current *apachetest.Case
		saved   []string
		unsaved []int    // configurations that disagreed beyond the save limit
		bypass  []string // disagreements where Apache refuses and orderly forwards
		other   []string // every other disagreement
		atStart []string // disagreements at start
	)
	defer func() {
		if t.Failed() && current != nil {
			t.Logf("the run stopped in %s:\n%s", current.Path, gen.Archive(current))
		}
	}()
	start := time.Now()
	tmp := apachetest.TempDir(t)
	for _, run := range runs {
		seed := run.seed
		for n := range run.count {
			if *randomConfig >= 0 && n != *randomConfig {
				continue
			}
			c, constructs := randomCase(seed, n, opt)
			current = c
			dir := filepath.Join(tmp, fmt.Sprint(n%4))
			os.RemoveAll(dir)
			outs, load := s.runRandomCase(t, fr, c, dir, &tl)
			current = nil
			lt.add(n, constructs, load)
			switch load.kind {
			case apacheOnly, orderlyWrong:
				what := "Apache refuses to start (" + load.apache + "), orderly serves it"
				if load.kind == orderlyWrong {
					what = "Apache serves it, orderly refuses it, not fail-closed: " + strings.Join(load.orderly, "; ")
				}
				name, err := saveTriage(*triageDir, c, seed, n, load, optDesc)
				if err != nil {
					what += fmt.Sprintf(" (saving it: %v)", err)
				} else {
					what += " (" + name + ")"
				}
				atStart = append(atStart, fmt.Sprintf("%s: %s", c.Path, what))
				continue
			}
			var found []string
			for _, o := range outs {
				switch {
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
			if len(found) > 0 && len(saved) >= saveLimit {
				unsaved = append(unsaved, n)
			} else if len(found) > 0 {
				name, err := saveRandomCase(c, seed, n, outs, found, optDesc)
				if err != nil {
					t.Errorf("%s: saving the case: %v", c.Path, err)
				} else {
					saved = append(saved, name)
				}
			}
		}
	}
	tl.elapsed = time.Since(start)
	fmt.Printf("random differential: %d configs, %d requests, %d agree, %d bypasses, %s, %.1f seconds\n",
		tl.cases, tl.requests, tl.agree, tl.bypasses, strings.Join(desc, ", "), tl.elapsed.Seconds())
	lt.print()
	tl.printExact("random differential")
	fmt.Printf("random differential: time in Apache reloads %.1fs, orderly start/stop %.1fs, requests %.1fs; error-log codes compared on %d requests, %d differ [%s]\n",
		tl.reloading.Seconds(), tl.starting.Seconds(), tl.requesting.Seconds(), tl.logged, len(tl.logMismatches), runtime.Version())
	if len(tl.tolerated) > 0 {
		fmt.Printf("random differential: %d requests orderly answered 500 for an .htaccess file it refuses fail-closed, where Apache did not (over-strict, not a bypass):\n", len(tl.tolerated))
		for _, m := range tl.tolerated {
			fmt.Printf("  over-strict: %s\n", m)
		}
	}
	for _, m := range atStart {
		t.Errorf("disagreement at start: %s", m)
	}
	for _, m := range bypass {
		t.Errorf("BYPASS (Apache refuses, orderly forwards): %s", m)
	}
	for _, m := range other {
		t.Errorf("disagreement: %s", m)
	}
	if len(saved) > 0 {
		t.Errorf("saved %d new cases in %s (review them, and move them into testdata/corpus with the fix): %s", len(saved), *foundDir, strings.Join(saved, ", "))
	}
	if len(unsaved) > 0 {
		t.Errorf("%d more configurations disagreed and were not saved (ORDERLY_RANDOM_SAVE=%d): %v", len(unsaved), saveLimit, unsaved)
	}
}

var numbered = regexp.MustCompile(`^9(\d\d)-`)

// saveRandomCase writes c, numbered as the next free 9xx-random-SEED-N.txtar
// of the corpus, into -random-found, with the oracle's statuses as want=
// values and a comment naming the seed and the disagreements.
func saveRandomCase(c *apachetest.Case, seed int64, n int, outs []outcome, found []string, opt string) (string, error) {
	next, err := nextFoundNumber(0)
	if err != nil {
		return "", err
	}
	rqs := make([]apachetest.Request, len(outs))
	wants := make([]apachetest.Response, len(outs))
	for i, o := range outs {
		rqs[i], wants[i] = o.rq, o.want
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found by TestRandomDifferential (internal/differential): seed %d,\n", seed)
	fmt.Fprintf(&b, "configuration %d (ORDERLY_SEED=%d -random-config %d; the case is\n", n, seed, n)
	fmt.Fprintf(&b, "gen.GenerateWith(rand.New(rand.NewPCG(%d, %d)), options: %s)).\n", uint64(seed), n, opt)
	b.WriteString("The want= values are\n")
	b.WriteString("the oracle's (Apache 2.4) answers. Disagreements when it was found:\n")
	sort.Strings(found)
	for _, f := range found {
		_, rest, _ := strings.Cut(f, ": ")
		fmt.Fprintf(&b, "  %s\n", rest)
	}
	name := fmt.Sprintf("%03d-random-%d-%d.txtar", next, seed, n)
	return name, writeFoundCase(*foundDir, name, c, rqs, wants, b.String())
}

// writeFoundCase writes c as the corpus case name in dir (created if
// needed), with rqs for its requests, each with its oracle's status in
// wants as its want= value, and comment, once it parses back.
func writeFoundCase(dir, name string, c *apachetest.Case, rqs []apachetest.Request, wants []apachetest.Response, comment string) error {
	out := *c
	out.Requests = nil
	for i, rq := range rqs {
		rq.Text = ""
		rq.Want = strconv.Itoa(wants[i].Status)
		out.Requests = append(out.Requests, rq)
	}
	out.Comment = comment
	data := gen.Archive(&out)
	if _, err := apachetest.ParseCase(name, data); err != nil {
		return fmt.Errorf("the case does not parse back: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// nextFoundNumber returns the next 9xx number free in the corpus, and
// above after (the last a run took, 0 for none).
func nextFoundNumber(after int) (int, error) {
	names, err := filepath.Glob(filepath.Join(*corpusDir, "9*.txtar"))
	if err != nil {
		return 0, err
	}
	next := max(900, after+1)
	for _, name := range names {
		if m := numbered.FindStringSubmatch(filepath.Base(name)); m != nil {
			k, _ := strconv.Atoi(m[1])
			next = max(next, 900+k+1)
		}
	}
	if next > 999 {
		return 0, fmt.Errorf("no free 9xx number left in %s", *corpusDir)
	}
	return next, nil
}
