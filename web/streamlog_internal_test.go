package web

import (
	"strings"
	"testing"
	"time"
)

// The service logs a stream line once per event it yields, cut at its line
// bound: the page reads such a log as the turn read the stream.
func TestStreamLogReadsRepeatedAndCutLinesAsTheStreamSaidThem(t *testing.T) {
	l := newStreamLog(nil)
	twoCalls := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"make"}},{"type":"tool_use","id":"b","name":"mcp__db__query","input":{"sql":"select 1"}}]},"error":"rate_limit"}`
	for range 3 { // one record per event: an error and two calls
		l.add(t0, twoCalls)
	}
	huge := `{"type":"user","message":{"content":[{"tool_use_id":"a","type":"tool_result","content":"` + strings.Repeat("x", 70000) + `","is_error":false}]}}`
	l.add(t0.Add(2*time.Second), huge[:64<<10])
	calls := l.tl.Tools(t0.Add(time.Minute))
	if len(calls) != 2 || calls[0].Open || calls[0].Duration() != 2*time.Second || !calls[1].Open || calls[1].StallLimit() != 30*time.Minute {
		t.Fatalf("calls %+v", calls)
	}
	if errs := l.tl.Errors(); len(errs) != 1 || errs[0] != "rate_limit" {
		t.Fatalf("errors %q: a repeated record is read once", errs)
	}
}
