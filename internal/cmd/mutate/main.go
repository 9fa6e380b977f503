// Command mutate is orderly's mutation test (make mutate): for each package
// named, it plants every mutant of the scope its mutants.txt declares, runs
// the package's own tests against each, and fails unless every survivor is
// reviewed in mutants.txt and the tests kill at least 90% of the viable,
// non-equivalent mutants.
//
//	go run ./internal/cmd/mutate [-changed] [-stamp] [-workers N] [-v] ./policy ./translate/walk ...
//
// -changed tests only the packages whose stamp (a hash of their code, tests
// and testdata) differs from the one mutants.txt records, which is how CI
// runs it: on what a change touched. -stamp records the stamp after a
// passing run.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orderly-proxy/orderly/internal/mutate"
)

func main() {
	changed := flag.Bool("changed", false, "test only the packages whose stamp differs from their mutants.txt")
	stamp := flag.Bool("stamp", false, "record the stamp in mutants.txt after a passing run")
	workers := flag.Int("workers", runtime.NumCPU(), "mutants tested at once")
	timeout := flag.Duration("timeout", 0, "one mutant's go test (default: ten times the unmutated run, plus 30s)")
	verbose := flag.Bool("v", false, "print every mutant's status, not only survivors")
	dry := flag.Bool("dry-run", false, "list the mutants without testing them")
	budget := flag.Duration("budget", 0, "test, for each package, a random sample of its mutants for about this long (the seed is drawn from the package's stamp); the verdict then holds the sample to the kill rate and every survivor in it to review, and no stamp is recorded")
	saveDir := flag.String("results", "", "write each package's results (with the stamp of the sources they were run on) to DIR/PKG.json")
	rejudge := flag.Bool("rejudge", false, "judge the results -results saved against mutants.txt as it is now, without running mutants: for reviewing survivors after a long run; refused when the sources changed since")
	retest := flag.Bool("retest", false, "with -results: test again only the mutants that lived in the saved run, against the tests as they are now, and keep the rest of its results; refused unless the package's code (all but its tests and their testdata) is the code that run mutated. It trusts the saved kills: remove no test in between")
	only := flag.String("only", "", "test only the mutants whose entry (file:line:col MUTATOR (func) code) matches this regexp; the verdict then checks no kill rate and no stale entry")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mutate [flags] ./pkg ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	root, err := os.Getwd()
	if err != nil {
		fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	failed := false
	for _, rel := range flag.Args() {
		p, err := mutate.Load(root, rel)
		if err != nil {
			fatal(err)
		}
		sum, err := mutate.Stamp(p.Dir())
		if err != nil {
			fatal(err)
		}
		code, err := mutate.CodeStamp(p.Dir())
		if err != nil {
			fatal(err)
		}
		if *changed && sum == p.List.Stamp {
			fmt.Printf("== mutate ./%s: unchanged since its last passing run (stamp %.12s)\n", p.Rel, sum)
			continue
		}
		if *only != "" {
			re, err := regexp.Compile(*only)
			if err != nil {
				fatal(err)
			}
			p.Mutants = slices.DeleteFunc(p.Mutants, func(m mutate.Mutant) bool { return !re.MatchString(mutate.Entry(m)) })
		}
		fmt.Printf("== mutate ./%s: %d mutants in %s\n", p.Rel, len(p.Mutants), scopeText(p.List.Scopes))
		var deadline time.Time
		if *budget > 0 {
			seed, _ := strconv.ParseUint(sum[:16], 16, 64)
			mutate.Sample(p.Mutants, seed)
			deadline = time.Now().Add(*budget)
			fmt.Printf("a sample for %s, drawn with seed %#x (the stamp's)\n", *budget, seed)
		}
		if *dry {
			for _, m := range p.Mutants {
				fmt.Println(mutate.Entry(m))
			}
			continue
		}
		var results []mutate.Result
		start := time.Now()
		saved := filepath.Join(*saveDir, strings.ReplaceAll(p.Rel, "/", "_")+".json")
		switch {
		case *rejudge || *retest:
			if *saveDir == "" || *only != "" || *budget > 0 || *rejudge && *retest {
				fatal(fmt.Errorf("-rejudge and -retest read the results of a full run: give -results DIR, and neither -only nor -budget"))
			}
			if *rejudge {
				results, err = load(saved, sum, "")
				break
			}
			results, err = retestLived(ctx, p, saved, code, *workers, *timeout, *verbose)
			if err == nil {
				err = save(saved, sum, code, results)
			}
		default:
			results, err = run(ctx, p, *workers, *timeout, *verbose, deadline)
			if err == nil && *saveDir != "" && *only == "" && *budget == 0 {
				err = save(saved, sum, code, results)
			}
		}
		if err != nil {
			fatal(err)
		}
		partial := *only != "" || len(results) < len(p.Mutants)
		if partial && *budget > 0 {
			fmt.Printf("sampled %d of the %d mutants\n", len(results), len(p.Mutants))
		}
		ok := judge(p, results, *only != "", partial && *only == "", time.Since(start))
		if !ok {
			failed = true
			continue
		}
		if *stamp && !partial && sum != p.List.Stamp {
			data, err := os.ReadFile(p.List.Path)
			if err != nil {
				fatal(err)
			}
			if err := os.WriteFile(p.List.Path, mutate.WithStamp(data, sum), 0o644); err != nil {
				fatal(err)
			}
			fmt.Printf("stamp %.12s recorded in %s\n", sum, p.List.Path)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func run(ctx context.Context, p *mutate.Package, workers int, timeout time.Duration, verbose bool, deadline time.Time) ([]mutate.Result, error) {
	done := 0
	r := &mutate.Runner{Workers: workers, Deadline: deadline, Report: func(res mutate.Result) {
		done++
		if verbose || res.Status == mutate.Lived {
			fmt.Printf("%4d/%d %-10s %s\n", done, len(p.Mutants), res.Status, mutate.Entry(res.Mutant))
		}
	}}
	base, err := r.Baseline(ctx, p)
	if err != nil {
		return nil, err
	}
	r.Timeout = timeout
	if r.Timeout == 0 {
		r.Timeout = 10*base + 30*time.Second
	}
	fmt.Printf("go test ./%s unmutated: %.1fs; a mutant's timeout: %s\n", p.Rel, base.Seconds(), r.Timeout)
	return r.Run(ctx, p)
}

type savedRun struct {
	Stamp     string // of the code and tests run
	CodeStamp string // of the code mutated
	Results   []mutate.Result
}

func save(path, stamp, code string, results []mutate.Result) error {
	data, err := json.MarshalIndent(savedRun{stamp, code, results}, "", "\t")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// load reads saved results, refused unless they were run on the sources
// of stamp, or, when stamp is "", on the code of code.
func load(path, stamp, code string) ([]mutate.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sr savedRun
	if err := json.Unmarshal(data, &sr); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if stamp != "" && sr.Stamp != stamp {
		return nil, fmt.Errorf("%s: the package's sources changed since these results (stamp %.12s, now %.12s): run the mutants again, or only those that lived with -retest", path, sr.Stamp, stamp)
	}
	if stamp == "" && sr.CodeStamp != code {
		return nil, fmt.Errorf("%s: the package's code (not only its tests) changed since these results (code stamp %.12s, now %.12s): run the mutants again", path, sr.CodeStamp, code)
	}
	return sr.Results, nil
}

// retestLived runs again the mutants that lived in the saved results of
// the same code (and any the saved run did not reach), and returns all
// the results in p.Mutants' order: the saved ones for the rest.
func retestLived(ctx context.Context, p *mutate.Package, path, code string, workers int, timeout time.Duration, verbose bool) ([]mutate.Result, error) {
	prev, err := load(path, "", code)
	if err != nil {
		return nil, err
	}
	byEntry := make(map[string]mutate.Result, len(prev))
	for _, r := range prev {
		byEntry[mutate.Entry(r.Mutant)] = r
	}
	all := p.Mutants
	var again []mutate.Mutant
	for _, m := range all {
		if r, ok := byEntry[mutate.Entry(m)]; !ok || r.Status == mutate.Lived {
			again = append(again, m)
		}
	}
	fmt.Printf("retesting the %d of %d mutants that lived (or were not run) in %s\n", len(again), len(all), path)
	p.Mutants = again
	res, err := run(ctx, p, workers, timeout, verbose, time.Time{})
	p.Mutants = all
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		byEntry[mutate.Entry(r.Mutant)] = r
	}
	out := make([]mutate.Result, 0, len(all))
	for _, m := range all {
		out = append(out, byEntry[mutate.Entry(m)])
	}
	return out, nil
}

// judge prints the verdict on results and reports whether the package
// passes. A run of some of the mutants (-only) checks only that every
// survivor is reviewed; a sample (-budget) is held to the kill rate too;
// neither can tell a stale entry.
func judge(p *mutate.Package, results []mutate.Result, only, sampled bool, took time.Duration) bool {
	v := mutate.Judge(p.List, results)
	if only || sampled {
		v.Stale = nil
	}
	fmt.Printf("./%s: %d killed, %d timed out, %d lived (%d equivalent), %d not viable: %.1f%% of %d viable non-equivalent mutants killed (at least %.0f%% needed), in %s\n",
		p.Rel, v.Killed, v.TimedOut, v.Lived, v.Equivalent, v.NotViable,
		100*v.Efficacy(), v.Killed+v.TimedOut+v.Lived-v.Equivalent, 100*mutate.MinEfficacy,
		took.Round(time.Second))
	if len(v.Unlisted) > 0 && p.List.Floor > 0 {
		fmt.Printf("\n%d survivors are not reviewed: ./%s is under way to %.0f%% (floor %.0f%% in %s):\n", len(v.Unlisted), p.Rel, 100*mutate.MinEfficacy, 100*p.List.Floor, p.List.Path)
		for _, m := range v.Unlisted {
			fmt.Println(mutate.Entry(m))
		}
	} else if len(v.Unlisted) > 0 {
		fmt.Printf("\n%d survivors are not reviewed: kill each with a test, or add it to %s with the reason it may live:\n", len(v.Unlisted), p.List.Path)
		for _, m := range v.Unlisted {
			fmt.Printf("%s\n\topen: \n", mutate.Entry(m))
		}
	}
	if len(v.Stale) > 0 {
		fmt.Printf("\n%d entries of %s match no survivor (the mutant is killed now, or its code changed): remove or update them:\n", len(v.Stale), p.List.Path)
		for _, s := range v.Stale {
			fmt.Printf("%s:%d: %s %s (%s) %s\n", p.List.Path, s.Line, s.Where, s.Kind, s.Func, s.Code)
		}
	}
	if only && len(v.Unlisted) == 0 {
		fmt.Printf("ok ./%s (partial run: -only)\n", p.Rel)
		return true
	}
	if !v.OK(p.List) {
		fmt.Printf("FAIL ./%s\n", p.Rel)
		return false
	}
	if p.List.Floor > 0 {
		fmt.Printf("ok ./%s: above its floor of %.0f%%, below the %.0f%% target\n", p.Rel, 100*p.List.Floor, 100*mutate.MinEfficacy)
		return true
	}
	fmt.Printf("ok ./%s\n", p.Rel)
	return true
}

func scopeText(scopes []mutate.Scope) string {
	var parts []string
	for _, s := range scopes {
		if len(s.Funcs) == 0 {
			parts = append(parts, s.File)
		} else {
			parts = append(parts, s.File+" ("+strings.Join(s.Funcs, " ")+")")
		}
	}
	return strings.Join(parts, ", ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}
