// Package timeline reads the tool calls of a headless agent turn out of the
// stream lines its execution logged (Claude Code stream-json or Codex
// exec --json), for the execution page of the web UI.
//
// It is a reader for display: it keeps what a person needs to see (which
// tool, for how long, with what outcome, what the agent said and what it
// did not finish) and tolerates what the stream formats allow: unknown
// types and fields, non-JSON lines, lines cut short, results without a
// call. Memory is bounded by MaxCalls and the cut of each text field.
package timeline

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxCalls bounds the calls kept; later calls are counted in Dropped.
const MaxCalls = 2000

// maxText bounds each text kept (details, error texts, the answer).
const maxText = 400

// Call is one tool call of the turn.
type Call struct {
	ID string
	// Name is the tool's name as the agent gave it ("Bash",
	// "mcp__github__create_issue"; for Codex "command_execution",
	// "file_change", "web_search" or "mcp__SERVER__TOOL").
	Name string
	// Detail is a short account of the call's input: the command, the
	// path, the query, or the input JSON, cut.
	Detail string
	// ParentID is the call of the subagent that made this one.
	ParentID string
	// Start is when the call was logged; End when its result was, zero
	// while no result came.
	Start, End time.Time
	// Error reports that the result was an error; ErrorText says what it
	// said, cut.
	Error     bool
	ErrorText string
}

// Open reports that no result came back for the call.
func (c *Call) Open() bool { return c.End.IsZero() }

// Duration is how long the call was open: until its result, or until now
// for an open call.
func (c *Call) Duration(now time.Time) time.Duration {
	if c.Open() {
		return max(now.Sub(c.Start), 0)
	}
	return max(c.End.Sub(c.Start), 0)
}

// Timeline is what a turn's stream said.
type Timeline struct {
	// Calls are in the order they were opened.
	Calls []*Call
	// Dropped counts calls past MaxCalls.
	Dropped int
	// SessionID and Model come from the first line that names them
	// (Claude's init, Codex's thread.started).
	SessionID, Model string
	// Answer is the last text the agent said (the final answer when the
	// turn ended normally), cut.
	Answer string
	// Lines counts the stream lines read; Invalid those that were not
	// JSON objects.
	Lines, Invalid int
	// Errors holds the error messages the agent reported, cut, at most 20.
	Errors []string
}

// Builder builds a Timeline from stream lines in order. The zero value is
// ready to use. It is not safe for concurrent use.
type Builder struct {
	tl   Timeline
	byID map[string]*Call
}

// Add reads one stream line logged at t.
func (b *Builder) Add(t time.Time, line []byte) {
	b.tl.Lines++
	var l streamLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		b.tl.Invalid++
		return
	}
	if b.byID == nil {
		b.byID = map[string]*Call{}
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			b.session(l.SessionID, l.Model)
		}
	case "assistant":
		b.session(l.SessionID, "")
		if l.Message == nil {
			break
		}
		if l.Error != "" {
			b.err(l.Error)
		}
		for _, c := range l.Message.Content {
			switch c.Type {
			case "text":
				if s := strings.TrimSpace(c.Text); s != "" {
					b.tl.Answer = cut(s)
				}
			case "tool_use":
				b.open(t, c.ID, c.Name, inputDetail(c.Input), l.ParentToolUseID)
			}
		}
	case "user":
		if l.Message == nil {
			break
		}
		for _, c := range l.Message.Content {
			if c.Type == "tool_result" {
				b.close(t, c.ToolUseID, c.IsError, contentText(c.Content))
			}
		}
	case "result":
		b.session(l.SessionID, "")
		if s := strings.TrimSpace(l.Result); s != "" {
			b.tl.Answer = cut(s)
		}
		for _, e := range l.Errors {
			b.err(e)
		}
	case "thread.started":
		b.session(l.ThreadID, "")
	case "item.started", "item.updated", "item.completed":
		b.codexItem(t, l.Type, l.Item)
	case "turn.failed":
		if l.ErrorObj != nil {
			b.err(l.ErrorObj.Message)
		}
	case "error":
		b.err(l.MessageText)
	}
}

func (b *Builder) codexItem(t time.Time, typ string, it *codexItem) {
	if it == nil {
		return
	}
	name, detail := it.Type, ""
	switch it.Type {
	case "command_execution":
		detail = it.Command
	case "mcp_tool_call":
		name = "mcp__" + it.Server + "__" + it.Tool
		detail = inputDetail(it.Arguments)
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Kind+" "+c.Path)
		}
		detail = strings.Join(paths, ", ")
	case "web_search":
		detail = it.Query
	case "agent_message":
		if typ == "item.completed" && strings.TrimSpace(it.Text) != "" {
			b.tl.Answer = cut(strings.TrimSpace(it.Text))
		}
		return
	case "error":
		b.err(it.Message)
		return
	default:
		return
	}
	if it.ID == "" {
		return
	}
	if _, seen := b.byID[it.ID]; !seen {
		b.open(t, it.ID, name, detail, "")
	}
	if typ != "item.completed" {
		return
	}
	failed := it.Status == "failed" || it.Status == "declined" ||
		(it.ExitCode != nil && *it.ExitCode != 0) || (len(it.Err) > 0 && string(it.Err) != "null")
	text := ""
	if failed {
		text = errText(it.Err)
		if text == "" && it.AggregatedOutput != "" {
			text = it.AggregatedOutput
		}
	}
	b.close(t, it.ID, failed, text)
}

func (b *Builder) session(id, model string) {
	if b.tl.SessionID == "" {
		b.tl.SessionID = id
	}
	if b.tl.Model == "" {
		b.tl.Model = model
	}
}

func (b *Builder) err(msg string) {
	if msg = strings.TrimSpace(msg); msg != "" && len(b.tl.Errors) < 20 {
		b.tl.Errors = append(b.tl.Errors, cut(msg))
	}
}

func (b *Builder) open(t time.Time, id, name, detail, parent string) {
	if id == "" {
		return
	}
	if _, dup := b.byID[id]; dup {
		return
	}
	if len(b.tl.Calls) >= MaxCalls {
		b.tl.Dropped++
		return
	}
	c := &Call{ID: id, Name: name, Detail: cut(detail), ParentID: parent, Start: t}
	b.byID[id] = c
	b.tl.Calls = append(b.tl.Calls, c)
}

func (b *Builder) close(t time.Time, id string, isErr bool, text string) {
	c := b.byID[id]
	if c == nil || !c.End.IsZero() {
		return
	}
	c.End = t
	c.Error = isErr
	if isErr {
		c.ErrorText = cut(strings.TrimSpace(text))
	}
}

// Timeline returns what was read so far. The Builder must not be used
// after.
func (b *Builder) Timeline() *Timeline { return &b.tl }

// streamLine holds the fields of both formats that the timeline uses.
type streamLine struct {
	Type            string   `json:"type"`
	Subtype         string   `json:"subtype"`
	SessionID       string   `json:"session_id"`
	Model           string   `json:"model"`
	ParentToolUseID string   `json:"parent_tool_use_id"`
	Error           string   `json:"error"`
	Message         *message `json:"message"`
	Result          string   `json:"result"`
	Errors          []string `json:"errors"`
	// Codex.
	ThreadID string     `json:"thread_id"`
	Item     *codexItem `json:"item"`
	ErrorObj *struct {
		Message string `json:"message"`
	} `json:"-"`
	MessageText string `json:"-"`
}

// UnmarshalJSON reads "message" as Claude's message object or Codex's
// error text, and "error" as Claude's error code or Codex's error object.
func (l *streamLine) UnmarshalJSON(b []byte) error {
	type plain streamLine
	var raw struct {
		plain
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*l = streamLine(raw.plain)
	if len(raw.Message) > 0 {
		switch raw.Message[0] {
		case '{':
			var m message
			if json.Unmarshal(raw.Message, &m) == nil {
				l.Message = &m
			}
		case '"':
			json.Unmarshal(raw.Message, &l.MessageText)
		}
	}
	if len(raw.Error) > 0 {
		switch raw.Error[0] {
		case '{':
			var e struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(raw.Error, &e) == nil {
				l.ErrorObj = &e
			}
		case '"':
			json.Unmarshal(raw.Error, &l.Error)
		}
	}
	return nil
}

type message struct {
	Content []block `json:"content"`
}

// UnmarshalJSON accepts content as a list of blocks or a plain string.
func (m *message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw.Content) > 0 && raw.Content[0] == '[' {
		return json.Unmarshal(raw.Content, &m.Content)
	}
	var s string
	if json.Unmarshal(raw.Content, &s) == nil && s != "" {
		m.Content = []block{{Type: "text", Text: s}}
	}
	return nil
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Err              json.RawMessage `json:"error"`
	Message          string          `json:"message"`
	Query            string          `json:"query"`
	Changes          []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

// Lines of the input worth showing first, in this order.
var detailKeys = []string{"command", "file_path", "path", "pattern", "url", "query", "description", "prompt"}

// inputDetail summarizes a tool input object: its most telling field, or
// its compact JSON.
func inputDetail(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		for _, k := range detailKeys {
			var s string
			if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil && s != "" {
				return s
			}
		}
	}
	return strings.Join(strings.Fields(string(raw)), " ")
}

// contentText reads a tool_result's content: a string, or a list of text
// blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// errText reads a Codex item's error: {"message": ...} or a string.
func errText(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// cut bounds s to maxText bytes at a rune boundary, marking the cut.
func cut(s string) string {
	if len(s) <= maxText {
		return s
	}
	i := maxText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
