package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Request is one model request as the server read it.
type Request struct {
	API    API
	Path   string
	Header http.Header
	Time   time.Time
	// Body is the request body as sent.
	Body []byte
	// Model is the model asked for.
	Model string
	// Stream reports that a streamed answer was asked for. Claude Code
	// retries a failed stream without streaming.
	Stream bool
	// Tools are the names of the tools the agent offered the model, in the
	// order given (Codex's namespaced tools as "NAMESPACE.NAME").
	Tools []string
	// Step counts the model turns the conversation already holds: 0 for
	// the first request of a conversation, 1 after the model's first
	// answer came back with its tool results, and so on. A retried request
	// has the same Step and a higher Attempt.
	Step int
	// Attempt counts the earlier requests of the same conversation at the
	// same Step: 0 the first time, 1 for the first retry.
	Attempt int
	// UserTexts are the texts of the user side of the conversation, in
	// order: the prompt, tool results, notifications.
	UserTexts []string
	// ToolResults are the results of the model's last tool calls, as the
	// model is given them.
	ToolResults []ToolResult

	// opening is what the user side said before the model's first turn:
	// the conversation's key.
	opening string
}

// Opening reports whether what the user side said before the model's
// first turn (the prompt, with the context the agent adds) contains s:
// how a scenario tells a sub-agent's conversation from its parent's.
func (r *Request) Opening(s string) bool { return strings.Contains(r.opening, s) }

func (r *Request) addUser(text string) {
	r.UserTexts = append(r.UserTexts, text)
	if r.Step == 0 {
		r.opening += text + "\n"
	}
}

// ToolResult is the result of one tool call as the model sees it.
type ToolResult struct {
	// CallID is the id of the call it answers.
	CallID string
	// Text is the result's text: a string, or the texts of its content
	// blocks joined by newlines.
	Text string
	// IsError is Anthropic's is_error.
	IsError bool
	// Raw is the result as sent (the tool_result block, or the
	// function_call_output item).
	Raw json.RawMessage
}

// Mentions reports whether a text of the user side contains s.
func (r *Request) Mentions(s string) bool {
	for _, t := range r.UserTexts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// Offers reports whether the agent offered the model the named tool.
func (r *Request) Offers(name string) bool {
	for _, t := range r.Tools {
		if t == name || strings.HasSuffix(t, "."+name) {
			return true
		}
	}
	return false
}

// LastResult returns the text of the last tool result, or "".
func (r *Request) LastResult() string {
	if len(r.ToolResults) == 0 {
		return ""
	}
	return r.ToolResults[len(r.ToolResults)-1].Text
}

func parseRequest(api API, body []byte) (*Request, error) {
	r := &Request{API: api, Body: body}
	var err error
	if api == Anthropic {
		err = r.parseAnthropic()
	} else {
		err = r.parseOpenAI()
	}
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	return r, nil
}

// blockText reads content that is a string or a list of blocks with text.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (r *Request) parseAnthropic() error {
	var m struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return err
	}
	r.Model, r.Stream = m.Model, m.Stream
	for _, t := range m.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	model := false // the previous message was the model's
	for _, msg := range m.Messages {
		switch msg.Role {
		case "assistant":
			if !model {
				r.Step++
				r.ToolResults = nil
			}
			model = true
			continue
		case "user":
		default:
			continue
		}
		model = false
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			ID      string          `json:"tool_use_id"`
			Content json.RawMessage `json:"content"`
			IsError bool            `json:"is_error"`
		}
		if json.Unmarshal(msg.Content, &blocks) != nil {
			r.addUser(blockText(msg.Content))
			continue
		}
		var raws []json.RawMessage
		json.Unmarshal(msg.Content, &raws)
		for i, b := range blocks {
			switch b.Type {
			case "text":
				r.addUser(b.Text)
			case "tool_result":
				tr := ToolResult{CallID: b.ID, Text: blockText(b.Content), IsError: b.IsError}
				if i < len(raws) {
					tr.Raw = raws[i]
				}
				r.ToolResults = append(r.ToolResults, tr)
				r.addUser(tr.Text)
			}
		}
	}
	return nil
}

func (r *Request) parseOpenAI() error {
	var m struct {
		Model  string            `json:"model"`
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
		Input  []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return err
	}
	r.Model, r.Stream = m.Model, m.Stream
	r.Tools = toolNames(m.Tools, "")
	model := false
	for _, raw := range m.Input {
		var it struct {
			Type    string            `json:"type"`
			Role    string            `json:"role"`
			Content json.RawMessage   `json:"content"`
			CallID  string            `json:"call_id"`
			Output  json.RawMessage   `json:"output"`
			Tools   []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch {
		case it.Type == "additional_tools":
			r.Tools = append(r.Tools, toolNames(it.Tools, "")...)
		case it.Type == "function_call" || it.Type == "custom_tool_call" || it.Type == "reasoning" ||
			(it.Type == "message" && it.Role == "assistant"):
			if !model {
				r.Step++
				r.ToolResults = nil
			}
			model = true
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			model = false
			tr := ToolResult{CallID: it.CallID, Text: blockText(it.Output), Raw: raw}
			r.ToolResults = append(r.ToolResults, tr)
			r.addUser(tr.Text)
		case it.Type == "message" && it.Role == "user":
			model = false
			r.addUser(blockText(it.Content))
		}
	}
	return nil
}

// toolNames lists the names of Responses API tools, namespaces flattened
// as "NAMESPACE.NAME".
func toolNames(tools []json.RawMessage, prefix string) []string {
	var out []string
	for _, raw := range tools {
		var t struct {
			Type  string            `json:"type"`
			Name  string            `json:"name"`
			Tools []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		switch {
		case t.Type == "namespace":
			out = append(out, toolNames(t.Tools, prefix+t.Name+".")...)
		case t.Name != "":
			out = append(out, prefix+t.Name)
		default:
			out = append(out, prefix+t.Type)
		}
	}
	return out
}

// ToolDescription returns the description of the tool the agent offered
// the model under that name (for a tool in a Responses API namespace, its
// name within it), and whether it offered one.
func (r *Request) ToolDescription(name string) (string, bool) {
	var m struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(r.Body, &m) != nil {
		return "", false
	}
	return findTool(m.Tools, name)
}

func findTool(tools []json.RawMessage, name string) (string, bool) {
	for _, raw := range tools {
		var t struct {
			Name        string            `json:"name"`
			Description string            `json:"description"`
			Tools       []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		if t.Name == name {
			return t.Description, true
		}
		if d, ok := findTool(t.Tools, name); ok {
			return d, true
		}
	}
	return "", false
}
