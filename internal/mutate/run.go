package mutate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// A Package is one mutated package: its directory, the pattern go test is
// given for it, and its reviewed list.
type Package struct {
	Root    string // the module's root directory
	Rel     string // the package's directory under Root, slash-separated
	List    *List
	Mutants []Mutant
	Sources map[string][]byte // the scoped files, by base name
}

// Dir is the package's directory.
func (p *Package) Dir() string { return filepath.Join(p.Root, filepath.FromSlash(p.Rel)) }

// Load reads the package's mutants.txt and lists the mutants of its scope.
func Load(root, rel string) (*Package, error) {
	p := &Package{Root: root, Rel: strings.TrimPrefix(filepath.ToSlash(rel), "./"), Sources: map[string][]byte{}}
	l, err := ReadList(filepath.Join(p.Dir(), ListName))
	if err != nil {
		return nil, err
	}
	p.List = l
	for _, s := range l.Scopes {
		if strings.HasSuffix(s.File, "_test.go") || strings.ContainsAny(s.File, `/\`) {
			return nil, fmt.Errorf("%s: scope %s: name a source file of the package", l.Path, s.File)
		}
		src, err := os.ReadFile(filepath.Join(p.Dir(), s.File))
		if err != nil {
			return nil, fmt.Errorf("%s: scope: %w", l.Path, err)
		}
		// A file this platform's build leaves out (inode_other.go on
		// Linux) has no mutant its tests could kill.
		if ok, err := build.Default.MatchFile(p.Dir(), s.File); err != nil || !ok {
			continue
		}
		if missing := missingFuncs(src, s.Funcs); len(missing) > 0 {
			return nil, fmt.Errorf("%s: scope %s: no function %s", l.Path, s.File, strings.Join(missing, ", "))
		}
		ms, err := Find(s.File, src, s)
		if err != nil {
			return nil, err
		}
		p.Sources[s.File] = src
		p.Mutants = append(p.Mutants, ms...)
	}
	return p, nil
}

func missingFuncs(src []byte, funcs []string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil // Find reports it
	}
	have := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			have[funcName(fd)] = true
		}
	}
	var missing []string
	for _, fn := range funcs {
		if !have[fn] {
			missing = append(missing, fn)
		}
	}
	return missing
}

// Stamp hashes what the package's kill rate depends on inside its own
// directory: every file of it (code, tests) but mutants.txt, and its
// testdata. A change to any of them puts the package up for mutation again.
func Stamp(dir string) (string, error) {
	return hashDir(dir, func(rel string) bool { return true })
}

// CodeStamp hashes what the package's mutants are made of: its files but
// the tests, their testdata and mutants.txt. Two runs with the same code
// stamp test the same mutants, whatever their tests.
func CodeStamp(dir string) (string, error) {
	return hashDir(dir, func(rel string) bool {
		return !strings.HasSuffix(rel, "_test.go") && !strings.HasPrefix(rel, "testdata/")
	})
}

// hashDir hashes the regular files of dir and of its testdata, but
// mutants.txt, that keep says to.
func hashDir(dir string, keep func(rel string) bool) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && rel != "testdata" && !strings.HasPrefix(rel, "testdata/") {
				return fs.SkipDir
			}
			return nil
		}
		if rel == ListName || !d.Type().IsRegular() || !keep(rel) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Status is what a mutant's test run said.
type Status int

const (
	Killed    Status = iota // a test failed
	Lived                   // every test passed
	TimedOut                // the tests ran past the timeout: counted as killed
	NotViable               // the mutant does not compile
)

func (s Status) String() string {
	return [...]string{"KILLED", "LIVED", "TIMED OUT", "NOT VIABLE"}[s]
}

// A Result is one mutant's status.
type Result struct {
	Mutant
	Status  Status
	Elapsed time.Duration
}

// A Runner runs go test against mutants.
type Runner struct {
	Go      string        // the go command; "go" when empty
	Workers int           // mutants tested at once
	Timeout time.Duration // for one mutant's go test
	Report  func(Result)  // called as each mutant ends, serialised
	// Deadline, when set, stops handing out mutants once it has passed:
	// Run then returns the results of those it tested, a sample when the
	// mutants were shuffled (Sample).
	Deadline time.Time
}

// Baseline runs the package's tests unmutated: they must pass, and their
// time sets the default timeout.
func (r *Runner) Baseline(ctx context.Context, p *Package) (time.Duration, error) {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "orderly-mutate-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	overlay, err := p.overlay(tmp, nil)
	if err != nil {
		return 0, err
	}
	out, err := r.goTest(ctx, p, overlay)
	if err != nil {
		return 0, fmt.Errorf("go test ./%s fails without mutants: %v\n%s", p.Rel, err, tail(out, 40))
	}
	return time.Since(start), nil
}

// Run tests every mutant of p and returns the results in p.Mutants' order.
func (r *Runner) Run(ctx context.Context, p *Package) ([]Result, error) {
	tmp, err := os.MkdirTemp("", "orderly-mutate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	workers := max(r.Workers, 1)
	results := make([]Result, len(p.Mutants))
	ran := make([]bool, len(p.Mutants))
	jobs := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := filepath.Join(tmp, fmt.Sprint(w))
			for i := range jobs {
				res, err := r.one(ctx, p, p.Mutants[i], dir)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				results[i], ran[i] = res, err == nil
				if err == nil && r.Report != nil {
					r.Report(res)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range p.Mutants {
		if ctx.Err() != nil || !r.Deadline.IsZero() && time.Now().After(r.Deadline) {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	out := results[:0]
	for i, res := range results {
		if ran[i] {
			out = append(out, res)
		}
	}
	return out, firstErr
}

// Sample puts the mutants in an order drawn from seed, so that a run cut
// short by a deadline tests a fair sample of them, the same for the same
// seed.
func Sample(ms []Mutant, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x6d757461))
	r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
}

func (r *Runner) one(ctx context.Context, p *Package, m Mutant, dir string) (Result, error) {
	res := Result{Mutant: m}
	src, err := Apply(p.Sources[m.File], m)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	file := filepath.Join(dir, m.File)
	if err := os.WriteFile(file, src, 0o644); err != nil {
		return res, err
	}
	overlay, err := p.overlay(dir, map[string]string{m.File: file})
	if err != nil {
		return res, err
	}
	tctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	start := time.Now()
	out, err := r.goTest(tctx, p, overlay)
	res.Elapsed = time.Since(start)
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case tctx.Err() != nil:
		res.Status = TimedOut
	case err == nil:
		res.Status = Lived
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		res.Status = NotViable
	default:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return res, err
		}
		res.Status = Killed
	}
	return res, nil
}

// overlay writes, in dir, the overlay that replaces the package's files
// named in replace and leaves out its "without" test files.
func (p *Package) overlay(dir string, replace map[string]string) (string, error) {
	m := map[string]string{}
	for _, f := range p.List.Without {
		m[filepath.Join(p.Dir(), f)] = ""
	}
	for f, with := range replace {
		m[filepath.Join(p.Dir(), f)] = with
	}
	data, err := json.Marshal(map[string]map[string]string{"Replace": m})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, data, 0o644)
}

// memLimitKB caps the virtual memory of one mutant's go test, in KiB.
const memLimitKB = 6 << 20

func (r *Runner) goTest(ctx context.Context, p *Package, overlay string) ([]byte, error) {
	gocmd := r.Go
	if gocmd == "" {
		gocmd = "go"
	}
	args := []string{"test", "-count=1", "-failfast", "-vet=off"}
	args = append(args, "-overlay="+overlay, "./"+p.Rel)
	// A mutant can turn a loop into one that appends without end: the
	// address space of go test and what it runs is capped (ulimit -v), so
	// that such a mutant dies of it, killed, instead of taking the machine.
	args = append([]string{"-c", `ulimit -v "$0" && exec "$@"`, fmt.Sprint(memLimitKB), gocmd}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", args...)
	cmd.Dir = p.Root
	cmd.WaitDelay = 5 * time.Second
	killGroup(cmd)
	return cmd.CombinedOutput()
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// A Verdict judges a package's results against its reviewed list.
type Verdict struct {
	Killed, Lived, TimedOut, NotViable int
	Equivalent                         int // survivors the list excuses as equivalent
	Unlisted                           []Mutant
	Stale                              []Survivor // listed, but no surviving mutant has their code
}

// MinEfficacy is the share of the viable, non-equivalent mutants that the
// package's tests must kill.
const MinEfficacy = 0.90

// Efficacy is killed over viable non-equivalent mutants, timeouts counted
// as killed.
func (v Verdict) Efficacy() float64 {
	den := v.Killed + v.TimedOut + v.Lived - v.Equivalent
	if den <= 0 {
		return 1
	}
	return float64(v.Killed+v.TimedOut) / float64(den)
}

// OK reports whether the package passes: every survivor reviewed, no stale
// entry, and the kill rate at least MinEfficacy; or, for a package with a
// floor (one whose tests are still being written), the kill rate at least
// the floor.
func (v Verdict) OK(l *List) bool {
	if l.Floor > 0 {
		return len(v.Stale) == 0 && v.Efficacy() >= l.Floor
	}
	return len(v.Unlisted) == 0 && len(v.Stale) == 0 && v.Efficacy() >= MinEfficacy
}

// Judge matches the survivors of results with the list's entries, each
// entry excusing one mutant with its key.
func Judge(l *List, results []Result) Verdict {
	var v Verdict
	entries := map[string][]Survivor{}
	for _, s := range l.Survivors {
		entries[s.Key()] = append(entries[s.Key()], s)
	}
	for _, r := range results {
		switch r.Status {
		case Killed:
			v.Killed++
		case TimedOut:
			v.TimedOut++
		case NotViable:
			v.NotViable++
		case Lived:
			v.Lived++
			k := r.Key()
			if es := entries[k]; len(es) > 0 {
				if es[0].Equivalent() {
					v.Equivalent++
				}
				entries[k] = es[1:]
			} else {
				v.Unlisted = append(v.Unlisted, r.Mutant)
			}
		}
	}
	for _, es := range entries {
		v.Stale = append(v.Stale, es...)
	}
	sort.Slice(v.Stale, func(i, j int) bool { return v.Stale[i].Line < v.Stale[j].Line })
	return v
}
