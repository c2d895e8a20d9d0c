package headless

import (
	"strconv"
	"strings"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless/internal/jsonscan"
)

// Codex's exec --json: thread and turn lines, items (messages, commands,
// file changes, MCP and sub-agent calls), and error lines.

func (p *parser) codex(in *lineInfo, f *fields, base Event, cut bool) {
	e := base
	switch base.Type {
	case "thread.started":
		e.Kind = KindInit
		e.SessionID, _ = jsonscan.String(f.threadID)
		in.init = true
	case "turn.started":
		e.Kind = KindTurnStarted
	case "turn.completed":
		e.Kind = KindResult
		in.progress = true
		in.result = &resultInfo{subtype: "turn.completed", usage: decodeUsage(f.usage), codex: true}
	case "turn.failed":
		e.Kind = KindResult
		e.IsError = true
		in.progress = true
		msg := errorMessage(f.errorV)
		e.Error = msg
		in.result = &resultInfo{subtype: "turn.failed", isError: true, codex: true, usage: decodeUsage(f.usage)}
		if msg != "" {
			in.result.errors = []string{msg}
			e.Errors = in.result.errors
		}
	case "error":
		msg, _ := jsonscan.StringPrefix(f.message, 1024)
		codexError(in, &e, msg)
	case "item.started", "item.updated", "item.completed":
		p.codexItem(in, f, e)
		return
	default:
		e.Kind = KindUnknown
	}
	in.events = append(in.events, e)
}

func (p *parser) codexItem(in *lineInfo, f *fields, e Event) {
	var id, typ, text, server, tool, status, exitCode, errV, message []byte
	var command, arguments, changes, query, output, prompt, receivers []byte
	if len(f.item) > 0 && f.item[0] == '{' {
		jsonscan.Members(f.item, func(k, v []byte) bool {
			switch string(k) {
			case "id":
				id = v
			case "type":
				typ = v
			case "text":
				text = v
			case "server":
				server = v
			case "tool":
				tool = v
			case "status":
				status = v
			case "exit_code":
				exitCode = v
			case "error":
				errV = v
			case "message":
				message = v
			case "command":
				command = v
			case "arguments":
				arguments = v
			case "changes":
				changes = v
			case "query":
				query = v
			case "aggregated_output":
				output = v
			case "prompt":
				prompt = v
			case "receiver_thread_ids":
				receivers = v
			}
			return true
		})
	}
	it, _ := jsonscan.String(typ)
	e.Subtype = it
	e.ToolID, _ = jsonscan.String(id)
	switch it {
	case "command_execution", "mcp_tool_call", "file_change", "web_search", "collab_tool_call":
		in.progress = true
		e.ToolName = it
		switch it {
		case "command_execution":
			e.Detail = p.detailString(command)
		case "mcp_tool_call":
			s, _ := jsonscan.String(server)
			t, _ := jsonscan.String(tool)
			e.ToolName = "mcp__" + s + "__" + t
			e.Detail = p.inputDetail(arguments)
		case "file_change":
			e.Detail = p.changesDetail(changes)
		case "web_search":
			e.Detail = p.detailString(query)
		case "collab_tool_call":
			e.Detail = p.collabDetail(tool, prompt, receivers)
		}
		switch e.Type {
		case "item.started":
			e.Kind = KindToolUse
		case "item.completed":
			e.Kind = KindToolResult
			st, _ := jsonscan.String(status)
			code, hasCode := jsonscan.Int(exitCode)
			hasErr := len(errV) > 0 && !jsonscan.IsNull(errV)
			e.IsError = st == "failed" || st == "declined" || (hasCode && code != 0) || hasErr
			if e.IsError {
				if msg := errorMessage(errV); msg != "" {
					e.Text, e.TextTruncated = clipText(msg, p.maxText)
				} else {
					e.Text, e.TextTruncated = p.text(output)
				}
			}
		default:
			e.Kind = KindSystem
		}
		if e.ToolID == "" {
			e.Kind = KindSystem
		}
	case "agent_message":
		in.progress = true
		e.Kind = KindText
		e.Text, e.TextTruncated = p.text(text)
		if e.Type == "item.completed" {
			if s, ok := jsonscan.String(text); ok {
				in.answer, in.hasAnswer = s, true
			}
		}
	case "reasoning":
		in.progress = true
		e.Kind = KindThinking
		e.Text, e.TextTruncated = p.text(text)
	case "error":
		e.Kind = KindError
		e.Error, _ = jsonscan.StringPrefix(message, 1024)
	default:
		e.Kind = KindSystem
	}
	in.events = append(in.events, e)
}

// codexError reads an error line. Codex prints one for each failed try of
// its model API ("Reconnecting... 2/5 (unexpected status 401
// Unauthorized: …)", "Reconnecting... waiting for network (…)") and a last
// one before turn.failed. An authentication failure, a missing API key
// variable included, stops the turn at once; other causes are kept for a
// watchdog to report.
func codexError(in *lineInfo, e *Event, msg string) {
	e.Kind, e.Error = KindError, msg
	fl := &apiFailure{text: msg}
	if rest, ok := strings.CutPrefix(msg, "Reconnecting... "); ok {
		e.Kind = KindRetry
		inner := rest
		if n, m, after, ok := retryCount(rest); ok {
			e.Attempt, e.MaxAttempts = n, m
			inner = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(after), "("), ")")
		}
		e.Error = inner
		fl.text, fl.attempt, fl.max = inner, e.Attempt, e.MaxAttempts
	}
	fl.cause = causeOfText(fl.text)
	if fl.cause == corral.ErrorNone {
		if e.Kind != KindRetry {
			return // an error that tells no cause
		}
		fl.cause = corral.ErrorStream
	}
	in.failure = fl
	if fl.cause == corral.ErrorAuth {
		in.authFailed, in.authWhy = true, fl.describe()
	}
}

// retryCount reads "N/M rest" of a "Reconnecting..." line.
func retryCount(s string) (n, m int, rest string, ok bool) {
	head, rest, _ := strings.Cut(s, " ")
	a, b, found := strings.Cut(head, "/")
	if !found {
		return 0, 0, "", false
	}
	n, err1 := strconv.Atoi(a)
	m, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, "", false
	}
	return n, m, rest, true
}

// collabDetail summarizes a sub-agent call: its tool ("spawn_agent",
// "wait", …) and the prompt it gave or the agents it names.
func (p *parser) collabDetail(tool, prompt, receivers []byte) string {
	t, _ := jsonscan.StringPrefix(tool, 64)
	if s := p.detailString(prompt); s != "" {
		return strings.TrimSpace(t + " " + s)
	}
	var ids []string
	if len(receivers) > 0 && receivers[0] == '[' {
		jsonscan.Elements(receivers, func(v []byte) bool {
			if s, _ := jsonscan.StringPrefix(v, 64); s != "" {
				ids = append(ids, s)
			}
			return len(ids) < 8
		})
	}
	s, cut := clipText(strings.TrimSpace(t+" "+strings.Join(ids, " ")), min(p.maxText, MaxDetail))
	if cut {
		s += "…"
	}
	return s
}
