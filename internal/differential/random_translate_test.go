package differential

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/internal/gen"
)

var rtransFound = flag.String("rtrans-found", filepath.Join(os.TempDir(), "orderly-rtrans-found"), "where TestRandomTranslate writes the configurations whose translation disagrees, as corpus cases (never into testdata/ during a run)")

// rtransKnown are the configurations of the fixed seeds, "SEED/N",
// whose translation TestRandomTranslate finds wrong and translate does
// not fix yet, each with its diagnosis (their cases: the report of
// issue 17's proof). They are a ratchet: one that passes fails the test
// until it is removed here (a fix, or a change to internal/gen, which
// gives a seed other configurations), and any other failure of a fixed
// seed fails it as a find.
var rtransKnown = map[string]string{}

// rtransNewCeiling is the share of a new seed's configurations (replayed)
// whose translation may fail, each printed and saved, without failing
// the test: above the rate translate's open bugs give (issue 17: 0.7% of
// 438 after this session's fixes, from 5.3% to 7.5% before them), with
// room for chance. Above it, a change made more translations wrong.
// Bring it down as they are fixed.
const rtransNewCeiling = 0.04

// The configurations TestRandomTranslate draws by default, and how many
// of each fixed seed: 1,000 took 50 to 100 seconds on two shared cores,
// so 600 stay well under 3 minutes in make test.
const (
	rtransConfigs  = 600
	rtransPerFixed = 40
)

// TestRandomTranslate is the random proof of orderly translate (issue
// 17): configurations from internal/gen (fixedSeeds, rtransPerFixed
// each, and one new seed per run for the rest of ORDERLY_RTRANS_CONFIGS,
// default rtransConfigs; -seed or ORDERLY_SEED alone, -random-config n
// one of them) are translated as TestTranslatedCorpus translates the
// corpus (translateCase), both run on real Apache 2.4, and:
//
//   - a translation without sections left for review answers every
//     request as the legacy configuration does, status for status and a
//     redirect's Location;
//   - one with a section left for review fails closed: where the legacy
//     refused (400, 401, 403, 500) it refuses; elsewhere it answers alike
//     or refuses;
//   - every section translate reports stands in the output as reported,
//     with "Require all denied" if left for review and a Require line if
//     translated (translationChecks: never fewer access lines in force).
//
// Configurations Apache refuses to start on, or translate refuses to
// read, are counted and skipped. A failure is saved under -rtrans-found
// as a corpus case, 9xx-rtrans-SEED-N.txtar with the legacy's answers as
// want= values, beside its translation (.translated.conf; at most
// ORDERLY_RANDOM_SAVE of them, default 10). A fixed seed's failure fails
// the test unless rtransKnown lists it; the new seed's are printed, and
// fail it above rtransNewCeiling of its configurations.
func TestRandomTranslate(t *testing.T) {
	apachetest.Require(t)
	runs := seedRuns(t, envCount(t, "ORDERLY_RTRANS_CONFIGS", rtransConfigs), rtransPerFixed, rtransPerFixed)
	opt, optDesc := randomOptions(t)
	var desc []string
	for _, r := range runs {
		desc = append(desc, fmt.Sprintf("seed %d: %d configurations", r.seed, r.count))
	}
	fmt.Printf("random translate: %s (%s)\n", strings.Join(desc, ", "), optDesc)
	r := randomTranslate(t, runs, opt, nil)
	r.print("random translate")
	defaults := os.Getenv("ORDERLY_RANDOM_WIDE") == "" && os.Getenv("ORDERLY_RANDOM_KNOWN_BUGS") != "1"
	var saved, unsaved, newFinds []string
	fixed := map[int64]bool{}
	for _, s := range fixedSeeds {
		fixed[s] = true
	}
	last, saveLimit := 0, randomSaveLimit(t)
	newReplayed := 0
	for _, run := range runs {
		if !fixed[run.seed] {
			newReplayed += r.replayedBy[run.seed]
		}
	}
	classes := map[string]int{}
	for _, f := range r.failed {
		classes[rtransClass(f)]++
		why, known := rtransKnown[f.key]
		switch {
		case known && defaults:
			fmt.Printf("random translate: known: %s: %s\n", f.key, why)
			continue
		case !fixed[f.seed]:
			// A new seed's: printed and saved, failing the test above
			// rtransNewCeiling.
			newFinds = append(newFinds, f.key)
			for _, m := range f.found {
				fmt.Printf("random translate: find: %s\n", strings.SplitN(m, "\n", 2)[0])
			}
		default:
			for _, m := range f.found {
				t.Error(m)
			}
		}
		if len(saved) >= saveLimit {
			unsaved = append(unsaved, f.key)
			continue
		}
		name, n, err := saveTranslateCase(f, last, optDesc)
		if err != nil {
			t.Errorf("%s: saving the case: %v", f.c.Path, err)
			continue
		}
		last = n
		saved = append(saved, name)
	}
	var cs []string
	for c, n := range classes {
		cs = append(cs, fmt.Sprintf("%d %s", n, c))
	}
	sort.Strings(cs)
	fmt.Printf("random translate: failures by kind: %s\n", strings.Join(cs, "; "))
	if len(newFinds) > 0 {
		fmt.Printf("random translate: %d of the new seed's %d configurations replayed fail (ceiling %.0f%%): %s\n",
			len(newFinds), newReplayed, rtransNewCeiling*100, strings.Join(newFinds, " "))
		if float64(len(newFinds)) > rtransNewCeiling*float64(newReplayed) {
			t.Errorf("random translate: %d of the new seed's %d configurations fail, more than the ceiling of %.0f%%: a change made translations wrong that were not", len(newFinds), newReplayed, rtransNewCeiling*100)
		}
	}
	if defaults {
		failed := map[string]bool{}
		for _, f := range r.failed {
			failed[f.key] = true
		}
		for key, why := range rtransKnown {
			if r.ran[key] && !failed[key] {
				t.Errorf("random translate: %s now passes: remove it from rtransKnown (%s)", key, why)
			}
		}
	}
	if len(saved) > 0 {
		fmt.Printf("random translate: saved %d cases in %s (review them, and move them into testdata/corpus with the fix): %s\n", len(saved), *rtransFound, strings.Join(saved, ", "))
	}
	if len(unsaved) > 0 {
		fmt.Printf("random translate: %d more configurations failed and were not saved (ORDERLY_RANDOM_SAVE=%d): %s\n", len(unsaved), saveLimit, strings.Join(unsaved, " "))
	}
	if r.requests == 0 {
		t.Fatal("random translate: no request was replayed")
	}
}

// TestControlRandomTranslate proves TestRandomTranslate can fail: on the
// first configurations of fixed seed 1, a translation whose every
// "Require all denied" is turned into "Require all granted" must both
// disagree with the legacy answers and break translationChecks.
func TestControlRandomTranslate(t *testing.T) {
	apachetest.Require(t)
	opt, _ := randomOptions(t)
	r := randomTranslate(t, []randomRun{{fixedSeeds[0], 20}}, opt, func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("Require all denied"), []byte("Require all granted"))
	})
	fmt.Printf("control random translate: %d of %d requests disagree, %d sections break the checks (each must be > 0)\n", r.mismatches, r.requests, r.checks)
	if r.mismatches == 0 || r.checks == 0 {
		t.Fatal("control random translate: a wrong translation passed")
	}
}

// rtransFailure is a configuration whose translation failed.
type rtransFailure struct {
	key   string // "SEED/N"
	seed  int64
	n     int
	c     *apachetest.Case
	tc    transCase
	found []string
}

// rtransResult is what randomTranslate found.
type rtransResult struct {
	configs, names, apache, convert, oracle, replayed, reviewed, keptOnly int
	sections, reviewSections, requests, agree, refusedMore                int
	mismatches, checks                                                    int
	failed                                                                []rtransFailure
	ran                                                                   map[string]bool // "SEED/N" of every configuration generated
	replayedBy                                                            map[int64]int   // configurations replayed, by seed
	elapsed                                                               time.Duration
}

// randomTranslate generates the configurations of runs and runs each
// through translateCase, spoiling the translation with spoil if not nil.
func randomTranslate(t *testing.T, runs []randomRun, opt gen.Options, spoil func([]byte) []byte) rtransResult {
	r := rtransResult{ran: map[string]bool{}, replayedBy: map[int64]int{}}
	var s translateServers
	var current *apachetest.Case
	defer func() {
		if t.Failed() && current != nil {
			t.Logf("the run stopped in %s:\n%s", current.Path, gen.Archive(current))
		}
	}()
	start := time.Now()
	tmp := apachetest.TempDir(t)
	for _, run := range runs {
		for n := range max(run.count, *randomConfig+1) {
			if *randomConfig >= 0 && n != *randomConfig {
				continue
			}
			c, _ := randomCase(run.seed, n, opt)
			key := fmt.Sprintf("%d/%d", run.seed, n)
			r.ran[key] = true
			r.configs++
			dir := filepath.Join(tmp, strconv.Itoa(n%4))
			os.RemoveAll(dir)
			current = c
			tc := s.translateCase(t, c, dir, translateOptions{spoil: spoil, tolerant: true})
			current = nil
			switch tc.skipped {
			case "":
			case skipNames:
				r.names++
				continue
			case skipApache:
				r.apache++
				continue
			case skipConvert:
				r.convert++
				continue
			case skipOracle:
				r.oracle++
				continue
			default:
				t.Fatalf("%s: %s", c.Path, tc.skipped)
			}
			r.replayed++
			r.replayedBy[run.seed]++
			if tc.failClosed {
				r.reviewed++
			} else if len(tc.conv.Reviews) > 0 {
				r.keptOnly++
			}
			for _, st := range tc.conv.Sections {
				r.sections++
				if st.Review != "" {
					r.reviewSections++
				}
			}
			if tc.started {
				r.requests += len(tc.outs)
			}
			r.agree += tc.agree
			r.refusedMore += tc.refusedMore
			r.mismatches += len(tc.mismatches)
			r.checks += len(tc.checks)
			if found := append(tc.mismatches, tc.checks...); len(found) > 0 {
				r.failed = append(r.failed, rtransFailure{key: key, seed: run.seed, n: n, c: c, tc: tc, found: found})
			}
		}
	}
	r.elapsed = time.Since(start)
	return r
}

func (r rtransResult) print(name string) {
	fmt.Printf("%s: %d configs: %d replayed (%d with sections left for review, failing closed; %d with files left as they are only), skipped: %d Apache refuses, %d translate refuses, %d the oracle fails a request of, %d host names\n",
		name, r.configs, r.replayed, r.reviewed, r.keptOnly, r.apache, r.convert, r.oracle, r.names)
	fmt.Printf("%s: %d requests, %d agree, %d refused by a section left for review where the legacy did not, %d disagree; %d sections checked (%d left for review), %d break the checks; %d configurations failed, %.1f seconds\n",
		name, r.requests, r.agree, r.refusedMore, r.mismatches, r.sections, r.reviewSections, r.checks, len(r.failed), r.elapsed.Seconds())
}

// saveTranslateCase writes f's configuration into -rtrans-found as the
// corpus case 9xx-rtrans-SEED-N.txtar, numbered after the corpus and
// after last (the number the run took before), with the legacy's answers
// as want= values and a comment naming the seed and what failed, and its
// translation beside it. It returns the name and the number.
func saveTranslateCase(f rtransFailure, last int, opt string) (string, int, error) {
	next, err := nextFoundNumber(last)
	if err != nil {
		return "", 0, err
	}
	rqs := make([]apachetest.Request, len(f.tc.outs))
	wants := make([]apachetest.Response, len(f.tc.outs))
	for i, o := range f.tc.outs {
		rqs[i], wants[i] = o.rq, o.want
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found by TestRandomTranslate (internal/differential): seed %d,\n", f.seed)
	fmt.Fprintf(&b, "configuration %d (ORDERLY_SEED=%d go test -run TestRandomTranslate ./internal/differential\n-args -random-config=%d;\n", f.n, f.seed, f.n)
	fmt.Fprintf(&b, "the case is gen.GenerateWith(rand.New(rand.NewPCG(%d, %d)), options: %s)).\n", uint64(f.seed), f.n, opt)
	b.WriteString("The want= values are the legacy configuration's answers (Apache 2.4 with\n")
	b.WriteString("mod_access_compat); convert.Convert (2.4-compat) wrote the translation\n")
	b.WriteString("saved beside this file when it was found. What failed:\n")
	found := append([]string(nil), f.found...)
	sort.Strings(found)
	for _, m := range found {
		_, rest, _ := strings.Cut(m, ": ")
		fmt.Fprintf(&b, "  %s\n", strings.SplitN(rest, "\n", 2)[0])
	}
	for _, d := range f.tc.conv.Reviews {
		fmt.Fprintf(&b, "Left for review: %s:%d: %s\n", filepath.Base(d.Pos.File), d.Pos.Line, strings.ReplaceAll(d.Text, "\n", "; "))
	}
	name := fmt.Sprintf("%03d-rtrans-%d-%d.txtar", next, f.seed, f.n)
	if err := writeFoundCase(*rtransFound, name, f.c, rqs, wants, b.String()); err != nil {
		return "", 0, err
	}
	var conf bytes.Buffer
	files := make([]string, 0, len(f.tc.conv.Files))
	for p := range f.tc.conv.Files {
		files = append(files, p)
	}
	sort.Strings(files)
	for _, p := range files {
		fmt.Fprintf(&conf, "# ---- %s\n%s\n", p, f.tc.conv.Files[p])
	}
	if err := os.WriteFile(filepath.Join(*rtransFound, strings.TrimSuffix(name, ".txtar")+".translated.conf"), conf.Bytes(), 0o644); err != nil {
		return "", 0, err
	}
	return name, next, nil
}

// rtransClass names the kind of a failure, for the run's summary.
func rtransClass(f rtransFailure) string {
	for _, m := range f.found {
		if strings.Contains(m, "refuses the translation") {
			if m, _, _ := strings.Cut(m, "\n"); strings.Contains(m, "Invalid command 'Order'") || strings.Contains(m, "Invalid command 'Allow'") ||
				strings.Contains(m, "Invalid command 'Deny'") || strings.Contains(m, "Invalid command 'Satisfy'") || strings.Contains(m, "Invalid command 'ORDER'") {
				return "translation refused by Apache: access lines left untranslated"
			}
			return "translation refused by Apache: other"
		}
	}
	switch {
	case len(f.tc.checks) > 0:
		return "sections break the checks"
	case f.tc.failClosed:
		return "granted where the legacy refused, with a section left for review"
	case len(f.tc.conv.Reviews) > 0:
		return "answers otherwise, with files left as they are only"
	}
	return "answers otherwise, nothing left for review"
}
