package headless

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchStream is a realistic Claude Code stream: answers, tool calls with
// inputs, tool results of a few KiB, task and housekeeping lines.
var benchStream = func() []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5","permissionMode":"bypassPermissions","tools":["Bash","Read","Edit"],"mcp_servers":[]}` + "\n")
	code := strings.Repeat("func handle(w http.ResponseWriter, r *http.Request) {\n\tif err := r.ParseForm(); err != nil {\n\t\thttp.Error(w, err.Error(), 400)\n\t}\n}\n", 24)
	prose := strings.Repeat("I will read the handler, check how errors are reported, and then fix the \"bad request\" path. ", 8)
	for i := 0; b.Len() < 8<<20; i++ {
		fmt.Fprintf(&b, `{"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%q}],"stop_reason":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":24000,"output_tokens":210}},"parent_tool_use_id":null,"session_id":"s","uuid":"u%d"}`+"\n", i, prose, i)
		fmt.Fprintf(&b, `{"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_%d","name":"Edit","input":{"file_path":"/src/server/handler.go","old_string":%q,"new_string":%q}}],"usage":{"input_tokens":3,"output_tokens":90}},"parent_tool_use_id":null,"session_id":"s"}`+"\n", i, i, code[:600], code[:640])
		fmt.Fprintf(&b, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":%q,"is_error":false}]},"parent_tool_use_id":null,"session_id":"s","tool_use_result":{"stdout":%q}}`+"\n", i, code, code[:800])
		if i%10 == 0 {
			fmt.Fprintf(&b, `{"type":"system","subtype":"task_progress","task_id":"t%d","summary":"working","session_id":"s"}`+"\n", i)
		}
	}
	b.WriteString(`{"type":"result","subtype":"success","is_error":false,"num_turns":40,"result":"done","session_id":"s","total_cost_usd":1.5,"usage":{"input_tokens":1,"output_tokens":2}}` + "\n")
	return b.Bytes()
}()

// BenchmarkParseStream measures the whole reading path of a turn: line
// splitting, parsing, the turn's state and event publication (to one
// OnEvent callback), in 64 KiB chunks as the core delivers them.
func BenchmarkParseStream(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		l := ledger(&Spec{})
		l.spec.OnEvent = func(Event) {}
		l.feed(benchStream, 64<<10)
		if l.st.end != FinalizedByResult {
			b.Fatal("stream not finalized")
		}
	}
}

// BenchmarkParserTimeline measures a reader of a logged stream, as the web
// UI reads an execution's log: the same lines one at a time through a
// Parser and a Timeline.
func BenchmarkParserTimeline(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	at := time.Now()
	for b.Loop() {
		var p Parser
		var tl Timeline
		data := benchStream
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				i = len(data)
			}
			evs := p.Parse(data[:i], at)
			for j := range evs {
				tl.Add(&evs[j])
			}
			data = data[min(i+1, len(data)):]
		}
		if tl.Answer() != "done" || len(tl.Tools(at)) != DefaultMaxTools {
			b.Fatal("stream not read")
		}
	}
}

// peerLine is what an executor that decodes every line with encoding/json
// reads: the same fields this package keeps.
type peerLine struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message struct {
		Model   string `json:"model"`
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Input     json.RawMessage `json:"input"`
			Content   json.RawMessage `json:"content"`
		} `json:"content"`
		Usage map[string]int64 `json:"usage"`
	} `json:"message"`
	Result       string  `json:"result"`
	SessionID    string  `json:"session_id"`
	TotalCostUSD float64 `json:"total_cost_usd"`
}

// BenchmarkParseStreamPeerEncodingJSON is the peer: bufio-style line
// splitting and json.Unmarshal of every line into a typed struct.
func BenchmarkParseStreamPeerEncodingJSON(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		data := benchStream
		results := 0
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				i = len(data)
			}
			var l peerLine
			if json.Unmarshal(data[:i], &l) == nil && l.Type == "result" {
				results++
			}
			data = data[min(i+1, len(data)):]
		}
		if results != 1 {
			b.Fatal("no result")
		}
	}
}
