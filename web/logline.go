package web

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/corralrun/corral/service"
)

// logLine is one record of an execution's log as the page shows it.
type logLine struct {
	Seq    int
	Time   time.Time
	Stream string // stdout, stderr, event, system
	Kind   string // for events: text, tool, result, error, other
	Text   string
}

// maxLineText bounds the text of one shown line; the download has it all.
const maxLineText = 2000

// renderRecord turns a log record into a line. A headless stream line
// (an "event") becomes a one-line account of what the agent did; the
// page's script does the same for records that arrive live (see
// summarize in app.js, which follows this function).
func renderRecord(rec service.LogRecord) logLine {
	l := logLine{Seq: rec.Seq, Time: rec.Time, Stream: rec.Stream, Text: rec.Text}
	if rec.Stream == "event" {
		l.Kind, l.Text = summarize(rec.Text)
	}
	if len(l.Text) > maxLineText {
		l.Text = clip(maxLineText, l.Text)
	}
	return l
}

// summarize gives the kind and a one-line account of a stream line of
// Claude Code (stream-json) or Codex (exec --json).
func summarize(line string) (kind, text string) {
	var l struct {
		Type    string          `json:"type"`
		Subtype string          `json:"subtype"`
		Model   string          `json:"model"`
		Result  string          `json:"result"`
		IsError bool            `json:"is_error"`
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
		Item    *struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Command string `json:"command"`
			Status  string `json:"status"`
			Server  string `json:"server"`
			Tool    string `json:"tool"`
		} `json:"item"`
	}
	if json.Unmarshal([]byte(line), &l) != nil || l.Type == "" {
		return "other", line
	}
	var msg struct {
		Content []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			Input   json.RawMessage `json:"input"`
			IsError bool            `json:"is_error"`
		} `json:"content"`
	}
	json.Unmarshal(l.Message, &msg)
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			return "other", "session started" + prefixed(", model ", l.Model)
		}
		return "other", "system " + l.Subtype
	case "assistant", "user":
		var parts []string
		kind = "text"
		for _, c := range msg.Content {
			switch c.Type {
			case "text":
				parts = append(parts, c.Text)
			case "thinking":
				parts = append(parts, "(thinking)")
			case "tool_use":
				kind = "tool"
				parts = append(parts, "→ "+c.Name+" "+compactJSON(c.Input))
			case "tool_result":
				kind = "tool"
				if c.IsError {
					kind = "error"
					parts = append(parts, "← error")
				} else {
					parts = append(parts, "← result")
				}
			}
		}
		if len(parts) == 0 {
			return "other", l.Type
		}
		return kind, strings.Join(parts, " ")
	case "result":
		if l.IsError || l.Subtype != "success" {
			return "error", "result " + l.Subtype + prefixed(": ", l.Result)
		}
		return "result", "result: " + l.Result
	case "item.started", "item.completed", "item.updated":
		if l.Item == nil {
			return "other", l.Type
		}
		switch l.Item.Type {
		case "agent_message":
			return "text", l.Item.Text
		case "reasoning":
			return "other", "(thinking) " + l.Item.Text
		case "command_execution":
			return "tool", arrow(l.Type) + " command " + l.Item.Command + prefixed(" · ", l.Item.Status)
		case "mcp_tool_call":
			return "tool", arrow(l.Type) + " mcp__" + l.Item.Server + "__" + l.Item.Tool + prefixed(" · ", l.Item.Status)
		}
		return "tool", arrow(l.Type) + " " + l.Item.Type + prefixed(" · ", l.Item.Status)
	case "turn.completed":
		return "result", "turn completed"
	case "turn.failed", "error":
		return "error", l.Type + " " + compactJSON(l.Error) + string(l.Message)
	}
	return "other", l.Type + prefixed(" ", l.Subtype)
}

func arrow(typ string) string {
	if typ == "item.started" {
		return "→"
	}
	return "←"
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return clip(200, string(raw))
}
