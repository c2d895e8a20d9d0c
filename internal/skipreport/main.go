// Command skipreport reads `go test -json` on its standard input and
// prints what a person needs of it: each package's summary line, the
// whole output of every test that failed, and a summary of the tests that
// were skipped, counted by reason (the test's "SKIP: …" message), and the
// slowest top-level tests, where a suite's time goes. It exits
// 1 when a test or a package failed, and, with -strict, when a test was
// skipped for a reason that no line of the -allowed file matches (a
// regular expression per line; # starts a comment): CI has every tool a
// test needs, so such a skip hides a test that should have run.
//
//	go test -race -count=1 -json ./... | go run ./internal/skipreport -strict -allowed .ci/allowed-skips
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

// event is one line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on a test's pass or fail
}

// timed is a top-level test and how long it took.
type timed struct {
	name    string
	seconds float64
}

// slowest is how many of the slowest top-level tests the report lists.
const slowest = 12

type key struct{ pkg, test string }

func main() {
	strict := flag.Bool("strict", false, "fail on a skip whose reason -allowed does not list")
	allowed := flag.String("allowed", "", "`FILE` of regular expressions, one per line, of the skip reasons allowed")
	flag.Parse()
	var allow []*regexp.Regexp
	if *allowed != "" {
		var err error
		if allow, err = readPatterns(*allowed); err != nil {
			fmt.Fprintln(os.Stderr, "skipreport:", err)
			os.Exit(2)
		}
	}
	os.Exit(report(os.Stdin, os.Stdout, *strict, allow))
}

func readPatterns(path string) ([]*regexp.Regexp, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*regexp.Regexp
	for i, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		re, err := regexp.Compile(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// report reads the events of in, writes the report to w and returns the
// exit status.
func report(in io.Reader, w io.Writer, strict bool, allow []*regexp.Regexp) int {
	output := map[key]*strings.Builder{}
	skipped := map[string][]string{} // reason → tests
	failed := 0
	var took []timed
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(w, sc.Text()) // a build error, not an event
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			if e.Test == "" {
				if isSummary(e.Output) {
					fmt.Fprint(w, e.Output)
				} else if strings.HasPrefix(e.Output, "FAIL") || strings.Contains(e.Output, "panic:") || strings.Contains(e.Output, "[build failed]") {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			if output[k] == nil {
				output[k] = &strings.Builder{}
			}
			if output[k].Len() < 1<<20 {
				output[k].WriteString(e.Output)
			}
		case "fail", "pass":
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				took = append(took, timed{e.Package + " " + e.Test, e.Elapsed})
			}
		}
		switch e.Action {
		case "fail":
			if e.Test != "" {
				failed++
				fmt.Fprintf(w, "--- FAIL: %s (%s)\n%s", e.Test, e.Package, text(output[k]))
			} else {
				failed++
			}
			delete(output, k)
		case "skip":
			if e.Test != "" {
				reason := skipReason(text(output[k]))
				skipped[reason] = append(skipped[reason], e.Package+" "+e.Test)
			}
			delete(output, k)
		case "pass":
			delete(output, k)
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed++
		}
	}
	sort.Slice(took, func(i, j int) bool { return took[i].seconds > took[j].seconds })
	if len(took) > 0 {
		fmt.Fprintf(w, "\nslowest tests:\n")
		for _, t := range took[:min(slowest, len(took))] {
			fmt.Fprintf(w, "  %7.1f s  %s\n", t.seconds, t.name)
		}
	}
	return summarize(w, skipped, failed, strict, allow)
}

func text(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}

// isSummary reports whether a package's line is its summary ("ok …",
// "FAIL …", "? … [no test files]").
func isSummary(l string) bool {
	return strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   \t")
}

// skipReason reads the reason a skipped test gave: its SKIP: line, or its
// last line of output.
func skipReason(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	reason := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "--- SKIP") {
			continue // go test's own line, not the test's reason
		}
		if i := strings.Index(l, "SKIP:"); i >= 0 {
			reason = strings.TrimSpace(l[i+len("SKIP:"):])
		}
	}
	if reason == "" {
		reason = "(no SKIP: reason given)"
	}
	return reason
}

func summarize(w io.Writer, skipped map[string][]string, failed int, strict bool, allow []*regexp.Regexp) int {
	reasons := make([]string, 0, len(skipped))
	total := 0
	for r, tests := range skipped {
		reasons = append(reasons, r)
		total += len(tests)
	}
	sort.Strings(reasons)
	unexpected := 0
	fmt.Fprintf(w, "\nskipped: %d tests for %d reasons\n", total, len(reasons))
	for _, r := range reasons {
		ok := !strict
		for _, re := range allow {
			ok = ok || re.MatchString(r)
		}
		mark := "allowed"
		if !ok {
			mark, unexpected = "UNEXPECTED", unexpected+len(skipped[r])
		}
		fmt.Fprintf(w, "  %4d  %-10s %s\n", len(skipped[r]), mark, r)
		if !ok {
			for _, t := range skipped[r] {
				fmt.Fprintf(w, "          %s\n", t)
			}
		}
	}
	fmt.Fprintf(w, "unexpected skips: %d; failures: %d\n", unexpected, failed)
	if failed > 0 || unexpected > 0 {
		return 1
	}
	return 0
}
