package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, name string, o Options) *Server {
	t.Helper()
	sc, err := Named(name, o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads a Server-Sent Events body into its event names and data.
func events(t *testing.T, r io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var v map[string]any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				t.Fatalf("data %q: %v", d, err)
			}
			data = append(data, v)
		}
	}
	return names, data
}

const oneTurn = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

func TestAnthropicStreamsAMessage(t *testing.T) {
	s := start(t, "tool", Options{})
	resp := post(t, s.URL+"/v1/messages", oneTurn)
	names, data := events(t, resp.Body)
	want := "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != want {
		t.Fatalf("events %v", names)
	}
	block := data[2]["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["name"] != "Bash" || data[5]["delta"].(map[string]any)["stop_reason"] != "tool_use" {
		t.Errorf("tool call %v %v", block, data[5])
	}
	u := data[0]["message"].(map[string]any)["usage"].(map[string]any)
	if u["cache_creation_input_tokens"] != float64(DefaultUsage.CacheWrite) {
		t.Errorf("usage %v", u)
	}

	// The tool's result comes back: step 1, and the answer quotes it.
	resp = post(t, s.URL+"/v1/messages", `{"model":"m","stream":false,"messages":[{"role":"user","content":"hi"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_fake_00_0","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_fake_00_0","content":[{"type":"text","text":"it ran"}]}]}]}`)
	var msg struct {
		Content []struct{ Text string } `json:"content"`
	}
	json.NewDecoder(resp.Body).Decode(&msg)
	if len(msg.Content) != 1 || msg.Content[0].Text != FinalPrefix+"it ran" {
		t.Errorf("answer %+v", msg)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[1].Step != 1 || len(reqs[1].ToolResults) != 1 || reqs[1].LastResult() != "it ran" || reqs[1].Stream {
		t.Errorf("recorded %+v", reqs[1])
	}
}

func TestOpenAIStreamsAResponse(t *testing.T) {
	s := start(t, "text", Options{})
	resp := post(t, s.URL+"/v1/responses", `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
		"tools":[{"type":"function","name":"exec_command","description":"run"},{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent","description":"spawn"}]}]}`)
	names, data := events(t, resp.Body)
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Fatalf("events %v", names)
	}
	done := data[len(data)-1]["response"].(map[string]any)
	if done["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] != Pong {
		t.Errorf("output %v", done["output"])
	}
	details := done["usage"].(map[string]any)["input_tokens_details"].(map[string]any)
	if details["cache_write_tokens"] != float64(DefaultUsage.CacheWrite) {
		t.Errorf("usage %v", done["usage"])
	}
	r := s.Requests()[0]
	if !r.Offers("spawn_agent") || !r.Offers("exec_command") {
		t.Errorf("tools %v", r.Tools)
	}
	if d, ok := r.ToolDescription("spawn_agent"); !ok || d != "spawn" {
		t.Errorf("description %q %v", d, ok)
	}
}

func TestFailuresAreAnsweredInEachAPIsWords(t *testing.T) {
	s := start(t, "auth", Options{})
	resp := post(t, s.URL+"/v1/messages", oneTurn)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 401 || !strings.Contains(string(b), `"type":"authentication_error"`) {
		t.Errorf("anthropic 401: %d %s", resp.StatusCode, b)
	}
	resp = post(t, s.URL+"/v1/responses", `{"model":"m","input":[]}`)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 401 || !strings.Contains(string(b), `"code":"invalid_api_key"`) {
		t.Errorf("openai 401: %d %s", resp.StatusCode, b)
	}

	s = start(t, "rate_limit_1", Options{RetryAfter: 2 * time.Second})
	resp = post(t, s.URL+"/v1/messages", oneTurn)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("first try: %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp = post(t, s.URL+"/v1/messages", oneTurn)
	if resp.StatusCode != 200 {
		t.Errorf("retry: %d", resp.StatusCode)
	}
	if reqs := s.Requests(); reqs[0].Attempt != 0 || reqs[1].Attempt != 1 || reqs[1].Step != 0 {
		t.Errorf("attempts %d %d", reqs[0].Attempt, reqs[1].Attempt)
	}

	s = start(t, "quota", Options{})
	resp = post(t, s.URL+"/v1/responses", `{"model":"m","input":[]}`)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || !strings.Contains(string(b), "insufficient_quota") {
		t.Errorf("openai quota: %d %s", resp.StatusCode, b)
	}
}

// TestCloseEndsAHungStream: a hung stream holds its client until the
// server closes, and Close does not wait for the client.
func TestCloseEndsAHungStream(t *testing.T) {
	sc, _ := Named("hang", Options{})
	s, err := Start(sc)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(oneTurn))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	read := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); read <- err }()
	select {
	case <-read:
		t.Fatal("the hung stream ended by itself")
	case <-time.After(200 * time.Millisecond):
	}
	began := time.Now()
	s.Close()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end when the server closed")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
}
