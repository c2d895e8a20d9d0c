package headless

import (
	"encoding/json"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless/internal/jsonscan"
)

// Claude Code's stream-json: assistant and user messages, result lines,
// and system lines (init, api_retry, tasks and the background-task set).

func (p *parser) claude(in *lineInfo, f *fields, base Event, cut bool) {
	switch base.Type {
	case "assistant":
		p.claudeMessage(in, f, base, true)
	case "user":
		p.claudeMessage(in, f, base, false)
	case "result":
		p.claudeResult(in, f, base, cut)
	case "system":
		p.claudeSystem(in, f, base)
	case "stream_event":
		base.Kind = KindSystem
		in.progress = true
		in.events = append(in.events, base)
	default:
		base.Kind = KindUnknown
		in.events = append(in.events, base)
	}
}

// claudeMessage reads an assistant or user line: one event per content
// block of interest.
func (p *parser) claudeMessage(in *lineInfo, f *fields, base Event, assistant bool) {
	if pt, ok := jsonscan.String(f.parentTool); ok {
		base.ParentToolID = pt
	}
	apiError := false
	if assistant && len(f.errorV) > 0 && !jsonscan.IsNull(f.errorV) {
		code, _ := jsonscan.String(f.errorV)
		if code == "" {
			code = string(f.errorV)
		}
		code = clip(code, 1024)
		if code == "authentication_failed" {
			in.authFailed, in.authWhy = true, "the stream reports authentication_failed"
		}
		apiError = true
		e := base
		e.Kind, e.Error = KindError, code
		in.events = append(in.events, e)
	}
	// A message of the model (not Claude Code's own report of an API
	// error) shows that the API answers again.
	in.progress = assistant && !apiError
	var content, usage, model, msgID []byte
	if len(f.message) > 0 && f.message[0] == '{' {
		jsonscan.Members(f.message, func(k, v []byte) bool {
			switch string(k) {
			case "content":
				content = v
			case "usage":
				usage = v
			case "model":
				model = v
			case "id":
				msgID = v
			}
			return true
		})
	}
	if assistant {
		if m, ok := jsonscan.String(model); ok {
			base.Model = m
		}
		if u := decodeUsage(usage); u != nil && !apiError {
			in.usage = u
			in.usageModel = base.Model
			in.usageID, _ = jsonscan.String(msgID)
		}
	}
	n := len(in.events)
	if len(content) > 0 && content[0] == '[' {
		jsonscan.Elements(content, func(block []byte) bool {
			p.claudeBlock(in, block, base)
			return true
		})
	}
	if len(in.events) == n {
		base.Kind = KindSystem
		in.events = append(in.events, base)
	}
}

func (p *parser) claudeBlock(in *lineInfo, block []byte, base Event) {
	var typ, text, thinking, id, name, toolUseID, isError, input, content []byte
	if len(block) == 0 || block[0] != '{' {
		return
	}
	jsonscan.Members(block, func(k, v []byte) bool {
		switch string(k) {
		case "type":
			typ = v
		case "text":
			text = v
		case "thinking":
			thinking = v
		case "id":
			id = v
		case "name":
			name = v
		case "tool_use_id":
			toolUseID = v
		case "is_error":
			isError = v
		case "input":
			input = v
		case "content":
			content = v
		}
		return true
	})
	t, _ := jsonscan.String(typ)
	switch t {
	case "text", "thinking", "tool_use", "server_tool_use", "mcp_tool_use", "tool_result", "mcp_tool_result":
	default:
		return
	}
	// The event is built in place: events are large, and copies add up
	// over a stream.
	in.events = append(in.events, base)
	e := &in.events[len(in.events)-1]
	switch t {
	case "text":
		e.Kind = KindText
		e.Text, e.TextTruncated = p.text(text)
	case "thinking":
		e.Kind = KindThinking
		e.Text, e.TextTruncated = p.text(thinking)
	case "tool_use", "server_tool_use", "mcp_tool_use":
		e.Kind = KindToolUse
		e.ToolID, _ = jsonscan.String(id)
		e.ToolName, _ = jsonscan.String(name)
		e.Detail = p.inputDetail(input)
	default:
		e.Kind = KindToolResult
		e.ToolID, _ = jsonscan.String(toolUseID)
		e.IsError, _ = jsonscan.Bool(isError)
		if e.IsError {
			e.Text, e.TextTruncated = p.contentText(content)
		}
	}
	if (e.Kind == KindToolUse || e.Kind == KindToolResult) && e.ToolID == "" {
		in.events = in.events[:len(in.events)-1]
	}
}

func (p *parser) claudeResult(in *lineInfo, f *fields, base Event, cut bool) {
	r := &resultInfo{subtype: base.Subtype}
	r.isError, _ = jsonscan.Bool(f.isError)
	if len(f.result) > 0 {
		if s, ok := jsonscan.String(f.result); ok {
			r.text, r.hasText = s, true
		} else if cut {
			r.text, _ = jsonscan.StringPrefix(f.result, len(f.result))
			r.hasText, r.textCut = true, true
		}
	}
	r.sessionID, _ = jsonscan.String(f.sessionID)
	if n, ok := jsonscan.Int(f.numTurns); ok {
		r.numTurns, r.hasTurns = int(n), true
	}
	if c, ok := jsonscan.Float(f.cost); ok {
		r.cost, r.hasCost = c, true
	}
	r.usage = decodeUsage(f.usage)
	if len(f.modelUsage) > 0 && len(f.modelUsage) <= 64<<10 && json.Valid(f.modelUsage) {
		r.modelUsage = append(json.RawMessage(nil), f.modelUsage...)
	}
	if len(f.errors) > 0 && f.errors[0] == '[' {
		jsonscan.Elements(f.errors, func(v []byte) bool {
			if s, ok := jsonscan.StringPrefix(v, 1024); s != "" || ok {
				r.errors = append(r.errors, s)
			}
			return len(r.errors) < 20
		})
	}
	if n, ok := jsonscan.Int(f.queued); ok && n > 0 {
		r.queued = int(n)
	}
	p.results++
	in.result = r
	in.progress = true // the segment is over: its own account decides
	e := base
	e.Kind = KindResult
	e.SessionID = r.sessionID
	e.IsError = r.isError
	e.Errors = r.errors
	e.Text, e.TextTruncated = p.text(f.result)
	e.TextTruncated = e.TextTruncated || r.textCut
	in.events = append(in.events, e)
}

func (p *parser) claudeSystem(in *lineInfo, f *fields, base Event) {
	e := base
	switch base.Subtype {
	case "init":
		e.Kind = KindInit
		e.SessionID, _ = jsonscan.String(f.sessionID)
		e.Model, _ = jsonscan.String(f.model)
		if pm, ok := jsonscan.String(f.perm); ok {
			e.PermissionMode, in.permMode, in.hasPerm = pm, pm, true
		}
		in.init = true
		p.inits++
	case "api_retry":
		p.claudeRetry(in, f, &e)
	case "task_started", "task_notification", "task_progress", "task_updated":
		e.Kind = KindTask
		e.TaskID, _ = jsonscan.String(f.taskID)
		e.TaskType, _ = jsonscan.String(f.taskType)
		e.TaskStatus, _ = jsonscan.String(f.status)
		if e.TaskStatus == "" && len(f.patch) > 0 && f.patch[0] == '{' {
			// task_updated carries the change as a patch.
			jsonscan.Members(f.patch, func(k, v []byte) bool {
				if string(k) == "status" {
					e.TaskStatus, _ = jsonscan.String(v)
					return false
				}
				return true
			})
		}
		if len(f.summary) > 0 {
			e.Text, e.TextTruncated = p.text(f.summary)
		} else {
			e.Text, e.TextTruncated = p.text(f.description)
		}
		if tu, ok := jsonscan.String(f.toolUseID); ok {
			e.ToolID = tu
		}
	case "background_tasks_changed":
		e.Kind = KindBackground
		in.bgSet = true
		p.bg = liveTasks(f.tasks, p.bg[:0])
		e.Background = len(p.bg)
	default:
		e.Kind = KindSystem
	}
	in.events = append(in.events, e)
}

// claudeRetry reads an api_retry line: Claude Code's call to the model API
// failed and it will try again, for about three minutes in all. An
// authentication failure will not heal by retrying: the turn stops at
// once. Other failures are kept as the cause a watchdog reports if it ends
// the turn before the API answers again.
func (p *parser) claudeRetry(in *lineInfo, f *fields, e *Event) {
	e.Kind = KindRetry
	e.Error, _ = jsonscan.StringPrefix(f.errorV, 1024)
	if n, ok := jsonscan.Int(f.errorStatus); ok {
		e.ErrorStatus = int(n)
	}
	if n, ok := jsonscan.Int(f.attempt); ok {
		e.Attempt = int(n)
	}
	if n, ok := jsonscan.Int(f.maxRetries); ok {
		e.MaxAttempts = int(n)
	}
	if n, ok := jsonscan.Int(f.retryDelay); ok && n > 0 {
		e.RetryDelayMS = n
	}
	fl := &apiFailure{
		cause:   causeOfCode(e.Error, e.ErrorStatus),
		text:    e.Error,
		status:  e.ErrorStatus,
		attempt: e.Attempt,
		max:     e.MaxAttempts,
		delay:   time.Duration(e.RetryDelayMS) * time.Millisecond,
	}
	in.failure = fl
	if fl.cause == corral.ErrorAuth {
		in.authFailed, in.authWhy = true, fl.describe()
	}
}

// liveTasks reads a background_tasks_changed set: the tasks that keep a
// turn open, that is all but ambient tasks. Plain background shells
// (local_bash) count: Claude Code waits for them and runs a follow-up turn
// when they finish.
func liveTasks(tasks []byte, out []BackgroundTask) []BackgroundTask {
	if len(tasks) == 0 || tasks[0] != '[' {
		return out
	}
	jsonscan.Elements(tasks, func(t []byte) bool {
		var id, typ, desc, ambient []byte
		if len(t) == 0 || t[0] != '{' {
			return true
		}
		jsonscan.Members(t, func(k, v []byte) bool {
			switch string(k) {
			case "task_id":
				id = v
			case "task_type":
				typ = v
			case "description":
				desc = v
			case "ambient":
				ambient = v
			}
			return true
		})
		if a, _ := jsonscan.Bool(ambient); a {
			return true
		}
		var bt BackgroundTask
		bt.ID, _ = jsonscan.String(id)
		if bt.ID == "" {
			bt.ID = "?"
		}
		bt.Type, _ = jsonscan.String(typ)
		d, _ := jsonscan.StringPrefix(desc, MaxDetail)
		bt.Description = d
		out = append(out, bt)
		return true
	})
	return out
}
