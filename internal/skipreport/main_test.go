package main

import (
	"regexp"
	"strings"
	"testing"
)

const events = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: SKIP: PostgreSQL tests need CORRAL_TEST_POSTGRES\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: SKIP: not root\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: boom\n"}
{"Action":"fail","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
{"Action":"fail","Package":"p"}
`

func TestReportCountsSkipsByReasonAndFailsOnTheUnexpected(t *testing.T) {
	var out strings.Builder
	code := report(strings.NewReader(events), &out, true, []*regexp.Regexp{regexp.MustCompile(`^not root$`)})
	got := out.String()
	for _, want := range []string{"--- FAIL: TestC (p)", "boom", "skipped: 2 tests for 2 reasons", "UNEXPECTED PostgreSQL tests need", "allowed    not root", "unexpected skips: 1; failures: 2", "FAIL\tp"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	out.Reset()
	passing := strings.ReplaceAll(strings.ReplaceAll(events, `"fail"`, `"pass"`), "FAIL\\tp", "ok  \\tp")
	if code := report(strings.NewReader(passing), &out, false, nil); code != 0 {
		t.Errorf("without -strict, skips do not fail: exit %d\n%s", code, out.String())
	}
}
