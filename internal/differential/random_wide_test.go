package differential

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/internal/gen"
)

// The random differential's runner for configurations that either server
// may refuse to start (internal/gen's wide configurations). Starting is
// an answer of its own: Apache refusing a configuration and orderly
// refusing it agree ("both refused"); orderly refusing one Apache serves
// is over-strict and no bypass, when its refusal is a fail-closed one (a
// directive orderly does not evaluate); Apache refusing one orderly
// serves is the worst disagreement there is, since orderly would enforce
// rules the real server never ran with.

// loadKind is what became of a configuration at start.
type loadKind int

const (
	bothServe       loadKind = iota
	bothRefused              // Apache and orderly refuse it
	orderlyStricter          // orderly refuses it fail-closed, Apache serves it
	orderlyWrong             // orderly refuses it, not fail-closed, Apache serves it
	apacheOnly               // Apache refuses it, orderly serves it
)

// loadOutcome is a configuration's start on both servers.
type loadOutcome struct {
	kind    loadKind
	apache  string   // why Apache refused, one line
	orderly []string // orderly's errors, file:line: message, the path shortened
}

var (
	randomApacheSyntax = regexp.MustCompile(`(?m)^AH00526: Syntax error on line (\d+) of ([^:\n]+):\n(.*)$`)
	apacheAH           = regexp.MustCompile(`(?m)^(?:\[[^\]]*\] )*(AH\d{5}: .*)$`)
	orderlyLine        = regexp.MustCompile(`(?m)^(/[^:\n]*):(\d+): (.*)$`)
)

// apacheReason says in one line why Apache did not start.
func apacheReason(err error) string {
	s := err.Error()
	if m := randomApacheSyntax.FindStringSubmatch(s); m != nil {
		return filepath.Base(m[2]) + ":" + m[1] + ": " + m[3]
	}
	for _, m := range apacheAH.FindAllStringSubmatch(s, -1) {
		if !strings.Contains(m[1], "AH00493") && !strings.Contains(m[1], "AH00558") {
			return m[1]
		}
	}
	return strings.SplitN(s, "\n", 2)[0]
}

// orderlyErrors returns orderly's load errors from its output, with the
// case's directory taken off their paths.
func orderlyErrors(err error, dir string) []string {
	var out []string
	for _, m := range orderlyLine.FindAllStringSubmatch(err.Error(), -1) {
		p := strings.TrimPrefix(strings.TrimPrefix(m[1], dir), "/")
		out = append(out, p+":"+m[2]+": "+m[3])
	}
	if len(out) == 0 {
		out = append(out, strings.TrimSpace(err.Error()))
	}
	return out
}

// failClosed reports whether an error of orderly's is a fail-closed
// refusal: a directive orderly does not evaluate, not a claim that Apache
// would refuse the configuration (translate/build.go notFaithful and the
// builder's refusals of what it cannot evaluate).
func failClosed(msg string) bool {
	for _, s := range []string{"refusing to start", "refusing to load", "orderly cannot", "cannot be evaluated by orderly", "orderly does not evaluate"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// classifyLoad says what the two refusals (nil: started) make.
func classifyLoad(apacheErr, orderlyErr error, dir string) loadOutcome {
	var o loadOutcome
	if apacheErr != nil {
		o.apache = apacheReason(apacheErr)
	}
	if orderlyErr != nil {
		o.orderly = orderlyErrors(orderlyErr, dir)
	}
	switch {
	case apacheErr != nil && orderlyErr != nil:
		o.kind = bothRefused
	case apacheErr != nil:
		o.kind = apacheOnly
	case orderlyErr != nil:
		o.kind = orderlyStricter
		for _, e := range o.orderly {
			if !failClosed(e) {
				o.kind = orderlyWrong
			}
		}
	}
	return o
}

// runRandomCase is runCase for a configuration either server may refuse:
// it lays c out in dir, and a copy without its access rules for the
// backend, reloads the oracle (whose refusal to start is kept, not
// fatal) and the backend, starts fr, and, when both serve, replays every
// request on both and compares the answers as runCase does: a refusal
// by class, which must be orderly's own, any other answer by exact
// status and Location; by the access-control codes each logged; and for
// TRACE by whether one echoed it (200) where the other refused it with
// 405 (TraceEnable Off).
func (s *servers) runRandomCase(t *testing.T, fr *tolerantOrderly, c *apachetest.Case, dir string, tl *tally) ([]outcome, loadOutcome) {
	t.Helper()
	if !useNames(t, c) {
		tl.skipped++
		return nil, loadOutcome{}
	}
	if names != nil {
		defer func() { tl.dnsQuestions += len(names.Asked()) }()
	}
	l, err := c.Materialize(dir)
	if err != nil {
		t.Fatalf("%s: %v", c.Path, err)
	}
	t0 := time.Now()
	// The backend maps the URLs as the oracle does (runCase): its copy of
	// the case is laid out and the backend reloaded while the oracle
	// reloads. When the oracle refuses the configuration there is nothing
	// to compare, and where the backend refuses it too, the backend of
	// before serves orderly's start.
	done := make(chan error, 1)
	go func() {
		bl, err := c.Backend().Materialize(filepath.Join(dir, "backend"))
		if err != nil {
			done <- fmt.Errorf("the backend's copy: %v", err)
			return
		}
		done <- apachetest.TryFatal(t, func(tb testing.TB) {
			if s.backend == nil {
				s.backend = apachetest.Start(tb, mappingBackendOptions(bl))
			} else {
				s.backend.Reload(tb, mappingBackendOptions(bl))
			}
		})
	}()
	var apacheErr error
	if s.oracle == nil {
		apacheErr = apachetest.TryFatal(t, func(tb testing.TB) { s.oracle = apachetest.Start(tb, l.OracleOptions()) })
	} else {
		apacheErr = apachetest.TryFatal(t, func(tb testing.TB) { s.oracle.Reload(tb, l.OracleOptions()) })
	}
	backendErr := <-done
	if apacheErr != nil && !strings.Contains(apacheErr.Error(), "apache2 exited") {
		t.Fatalf("%s: the oracle did not come up, and did not refuse the configuration either: %v", c.Path, apacheErr)
	}
	switch {
	case backendErr != nil && apacheErr == nil:
		t.Fatalf("%s: the oracle serves the configuration, the backend refuses it without its access rules: %v", c.Path, backendErr)
	case backendErr != nil && s.backend == nil:
		s.backend = apachetest.Start(t, backendOptions(l))
	case backendErr != nil:
		s.backend.Reload(t, backendOptions(l))
	}
	t1 := time.Now()
	addr, stop := fr.start(t, l, s.backend.Addr)
	t2 := time.Now()
	tl.reloading += t1.Sub(t0)
	tl.starting += t2.Sub(t1)
	defer func() {
		t3 := time.Now()
		tl.requesting += t3.Sub(t2)
		stop()
		tl.starting += time.Since(t3)
	}()
	tl.cases++
	load := classifyLoad(apacheErr, fr.err, l.Dir)
	if load.kind != bothServe {
		return nil, load
	}
	s.ports = locationPorts(s.oracle.Addr, s.backend.Addr, addr)
	frontLog := fr.errorLog(l)
	oracleLog := filepath.Join(s.oracle.Dir, "error.log")
	var outs []outcome
	for _, rq := range c.Requests {
		s.oracleLog = fileSize(oracleLog)
		frontBefore := len(frontLog())
		want, err := apachetest.Do(s.oracle.Addr, rq)
		if err != nil {
			t.Fatalf("%s:%d: oracle: %v", c.Path, rq.Line, err)
		}
		got, err := apachetest.Do(addr, rq)
		tl.requests++
		o := outcome{rq: rq, want: want, class: "error: " + fmt.Sprint(err)}
		if err == nil {
			o.class = got.Class()
		}
		// TraceEnable: one server echoes the TRACE (200) where the other
		// refuses it (405); a 404 or 400 on one side echoes nothing.
		trace := rq.Method == "TRACE" && err == nil && (want.Status == 405 && got.Status == 200 || want.Status == 200 && got.Status == 405)
		if err == nil && refused(want.Class()) && backendAnswered(fr, got) {
			// A refusal must be orderly's own (runCase).
			o.bypass = true
			tl.bypasses++
			o.mismatch = fmt.Sprintf("%s:%d: %s: apache %d, front %d answered by the backend (Server: %s): orderly let it through", c.Path, rq.Line, rq, want.Status, got.Status, got.Server)
			tl.mismatches = append(tl.mismatches, o.mismatch)
			outs = append(outs, o)
			continue
		}
		if o.class == want.Class() && o.class == "other" && !trace && err == nil {
			// Neither refused: the statuses are compared exactly, and a
			// redirect's Location (runCase).
			w, g, why := s.compareExact(rq, want, got)
			switch {
			case w == g:
				tl.addExact(want.Status)
			case why != "":
				tl.addByClass(why)
			default:
				o.class = g
				o.mismatch = fmt.Sprintf("%s:%d: %s: apache %s, front %s", c.Path, rq.Line, rq, w, g)
				tl.mismatches = append(tl.mismatches, o.mismatch)
				tl.exactMismatches++
				outs = append(outs, o)
				continue
			}
		} else if o.class == want.Class() && !trace && err == nil {
			tl.addExact(want.Status)
		}
		if o.class == want.Class() && !trace {
			tl.agree++
			apache := readFrom(oracleLog, s.oracleLog)
			n := len(accessCodes.FindAllString(apache, -1))
			flog := waitLog(func() string { return frontLog()[frontBefore:] }, func(s string) bool {
				return len(accessCodes.FindAllString(s, -1)) >= n || got.Status == 500 && frontFailClosed(s) != ""
			})
			if got.Status == 500 && frontFailClosed(flog) != "" {
				// Both 500, orderly's for an .htaccess file it refuses
				// fail-closed: Apache's codes are for what orderly did
				// not evaluate.
				outs = append(outs, o)
				continue
			}
			tl.logged++
			wl, gl := logCodes(apache), logCodes(flog)
			if wl != gl {
				o.logMismatch = fmt.Sprintf("%s:%d: %s: apache logged [%s], front logged [%s]", c.Path, rq.Line, rq, wl, gl)
				tl.logMismatches = append(tl.logMismatches, o.logMismatch)
			}
			outs = append(outs, o)
			continue
		}
		// A TRACE orderly answers 405 (TraceEnable Off) is refused: the
		// backend echoes every TRACE.
		frontRefused := refused(o.class) || rq.Method == "TRACE" && err == nil && got.Status == 405
		if refused(want.Class()) && !frontRefused || trace && want.Status == 405 {
			tl.bypasses++
			o.bypass = true
		}
		if err == nil && got.Status == 500 && !o.bypass {
			// orderly's own 500 for an .htaccess file it refuses
			// fail-closed is over-strict, as a refusal at load is.
			flog := waitLog(func() string { return frontLog()[frontBefore:] }, func(s string) bool { return frontFailClosed(s) != "" })
			if line := frontFailClosed(flog); line != "" {
				tl.tolerated = append(tl.tolerated, fmt.Sprintf("%s:%d: %s: apache %d, orderly 500: %s", c.Path, rq.Line, rq, want.Status, line))
				outs = append(outs, o)
				continue
			}
		}
		o.mismatch = fmt.Sprintf("%s:%d: %s: apache %s (%d), front %s (%d)", c.Path, rq.Line, rq, want.Class(), want.Status, o.class, got.Status)
		tl.mismatches = append(tl.mismatches, o.mismatch)
		outs = append(outs, o)
	}
	return outs, load
}

// frontFailClosed returns the line of orderly's error log that says a
// 500 is a fail-closed refusal, "" if none does.
func frontFailClosed(log string) string {
	for _, l := range strings.Split(log, "\n") {
		if failClosed(l) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// loadTally counts the configurations by what became of them at start,
// and by construct.
type loadTally struct {
	kinds       [5]int
	wide        int
	stricter    []string // "config N: file:line: message", one per refused directive
	bothReasons map[string]int
	byConstruct map[gen.Construct]*[5]int
}

func (lt *loadTally) add(n int, constructs []gen.Construct, o loadOutcome) {
	lt.kinds[o.kind]++
	if len(constructs) > 0 {
		lt.wide++
	}
	if lt.byConstruct == nil {
		lt.byConstruct = map[gen.Construct]*[5]int{}
		lt.bothReasons = map[string]int{}
	}
	for _, c := range constructs {
		if lt.byConstruct[c] == nil {
			lt.byConstruct[c] = &[5]int{}
		}
		lt.byConstruct[c][o.kind]++
	}
	switch o.kind {
	case orderlyStricter:
		for _, e := range o.orderly {
			lt.stricter = append(lt.stricter, fmt.Sprintf("config %d: %s", n, e))
		}
	case bothRefused:
		lt.bothReasons[reasonClass(o.apache)]++
	}
}

// reasonClass is the kind of Apache's refusal, for the summary.
func reasonClass(reason string) string {
	_, msg, ok := strings.Cut(reason, ": ")
	if !ok {
		msg = reason
	}
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "legacy.conf") {
		msg = msg[i+2:]
	}
	for _, k := range []string{"Invalid command", "not allowed", "takes one argument", "takes two arguments",
		"must be On or Off", "requires at least", "Either all Options", "TRACE cannot be controlled", "Unknown Authz provider"} {
		if strings.Contains(msg, k) {
			return k
		}
	}
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return msg
}

// print writes the summary of the start outcomes.
func (lt *loadTally) print() {
	fmt.Printf("random differential: at start: %d both serve, %d both refused, %d orderly refuses and Apache serves (fail-closed, over-strict), %d orderly refuses not fail-closed, %d Apache refuses and orderly serves; %d wide configurations\n",
		lt.kinds[bothServe], lt.kinds[bothRefused], lt.kinds[orderlyStricter], lt.kinds[orderlyWrong], lt.kinds[apacheOnly], lt.wide)
	var reasons []string
	for r, n := range lt.bothReasons {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
	}
	sort.Slice(reasons, func(i, j int) bool { return reasons[i] > reasons[j] })
	if len(reasons) > 0 {
		fmt.Printf("random differential: both refused, by Apache's reason: %s\n", strings.Join(reasons, "; "))
	}
	var cs []string
	for _, c := range gen.Constructs {
		if k := lt.byConstruct[c]; k != nil {
			cs = append(cs, fmt.Sprintf("%s %d/%d/%d", c, k[bothServe], k[bothRefused], k[orderlyStricter]+k[orderlyWrong]+k[apacheOnly]))
		}
	}
	if len(cs) > 0 {
		fmt.Printf("random differential: by construct (configurations both serve/both refuse/other): %s\n", strings.Join(cs, ", "))
	}
	byDirective := map[string]int{}
	for _, s := range lt.stricter {
		byDirective[stricterKey(s)]++
	}
	var ds []string
	for d, n := range byDirective {
		ds = append(ds, fmt.Sprintf("%s %d", d, n))
	}
	sort.Strings(ds)
	if len(ds) > 0 {
		fmt.Printf("random differential: orderly refuses, Apache serves (over-strict at load, not a bypass), by directive: %s\n", strings.Join(ds, ", "))
	}
	for _, s := range lt.stricter {
		fmt.Printf("  over-strict: %s\n", s)
	}
}

// stricterKey is the directive an over-strict refusal names.
func stricterKey(s string) string {
	parts := strings.SplitN(s, ": ", 4)
	if len(parts) < 3 {
		return s
	}
	name, _, _ := strings.Cut(parts[2], " ")
	return strings.TrimSuffix(name, ":")
}

// saveTriage writes c, which disagreed at start, to dir as a txtar with a
// comment saying how; corpus cases must start on Apache, so it is not
// saved in the corpus.
func saveTriage(dir string, c *apachetest.Case, seed int64, n int, o loadOutcome, opt string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := *c
	var b strings.Builder
	fmt.Fprintf(&b, "Found by TestRandomDifferential: seed %d, configuration %d (%s).\n", seed, n, opt)
	switch o.kind {
	case apacheOnly:
		fmt.Fprintf(&b, "Apache refuses to start: %s\norderly serves it.\n", o.apache)
	case orderlyWrong:
		fmt.Fprintf(&b, "Apache serves it; orderly refuses it, not fail-closed:\n")
		for _, e := range o.orderly {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	out.Comment = b.String() + c.Comment
	name := filepath.Join(dir, fmt.Sprintf("random-%d-%d.txtar", seed, n))
	return name, os.WriteFile(name, gen.Archive(&out), 0o644)
}

var (
	replayCase = flag.String("random-replay", "", "TestRandomReplay: a case (.txtar) to replay as the random differential does, printing every answer")
	replayLog  = flag.Bool("random-replay-log", false, "TestRandomReplay: print the oracle's error log too")
)

// TestRandomReplay (with -random-replay FILE) replays one case, such as
// one TestRandomDifferential wrote to -random-triage or the corpus, as
// the random differential does (a refusal to start is an answer) and
// prints what became of the configuration and of every request: for
// triage, and to check a reduced case still shows a disagreement.
func TestRandomReplay(t *testing.T) {
	if *replayCase == "" {
		t.Skip("no -random-replay case")
	}
	apachetest.Require(t)
	c, err := apachetest.LoadCase(*replayCase)
	if err != nil {
		t.Fatal(err)
	}
	var (
		s  servers
		tl tally
		fr = &tolerantOrderly{}
	)
	outs, load := s.runRandomCase(t, fr, c, filepath.Join(apachetest.TempDir(t), "case"), &tl)
	kinds := [...]string{"both serve", "both refused", "orderly refuses fail-closed, Apache serves", "orderly refuses, not fail-closed, Apache serves", "Apache refuses, orderly serves"}
	fmt.Printf("start: %s\n", kinds[load.kind])
	if load.apache != "" {
		fmt.Printf("  apache: %s\n", load.apache)
	}
	for _, e := range load.orderly {
		fmt.Printf("  orderly: %s\n", e)
	}
	for _, o := range outs {
		fmt.Printf("%s: apache %d, orderly %s", o.rq, o.want.Status, o.class)
		if o.mismatch != "" {
			fmt.Printf(" DISAGREE: %s", o.mismatch[strings.LastIndex(o.mismatch, ": ")+2:])
		}
		if o.logMismatch != "" {
			fmt.Printf(" LOG: %s", o.logMismatch[strings.LastIndex(o.logMismatch, ": ")+2:])
		}
		fmt.Println()
	}
	for _, m := range tl.tolerated {
		fmt.Printf("over-strict: %s\n", m)
	}
	if *replayLog && s.oracle != nil {
		fmt.Printf("the oracle's error log:\n%s", s.oracle.ErrorLog())
	}
	if load.kind == apacheOnly || load.kind == orderlyWrong || len(tl.mismatches) > 0 || len(tl.logMismatches) > 0 {
		t.Errorf("%s disagrees", c.Path)
	}
}
