package headless

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corralrun/corral/headless/internal/jsonscan"
	"github.com/corralrun/corral/internal/setting"
)

// MaxDetail bounds the short texts of a tool call (Event.Detail,
// ToolCall.Detail, ToolCall.ErrorText), in bytes before the "…" that marks
// a cut.
const MaxDetail = 400

// Parser reads an agent's stream one line at a time and returns the events
// of each line. It is the reader a Turn uses, for callers that have the
// lines some other way: a transcript, a log of the stream, a pipe of their
// own. Its zero value reads a stream of either format with the defaults of
// a Spec.
//
// A Parser is as tolerant as a Turn and as bounded: a blank line yields no
// event; a line that is not a JSON object, or is malformed, yields one
// KindInvalid event saying why; invalid UTF-8 becomes U+FFFD; unknown types
// and fields are ignored (KindUnknown); a line longer than MaxLine is cut
// and read up to the cut. Only the fields an Event carries are decoded,
// without a full json.Unmarshal of the line. It never panics, whatever the
// input, and its memory stays within the bounds below plus the line being
// read.
//
// A Parser is not safe for concurrent use. Set its fields before the first
// call to Parse or ParseCut; later changes are ignored.
type Parser struct {
	// Format is the stream format. FormatAuto (the zero value) detects it
	// from the first line whose type only one format uses; Parse then sets
	// Format to the format detected. Until then lines are read as
	// KindUnknown.
	Format Format

	// MaxLine bounds a line: a longer one is read as cut at MaxLine bytes
	// (see ParseCut). Zero means DefaultMaxLine; negative means no bound.
	MaxLine int

	// MaxEventText and MaxEventRaw bound the text and the raw line carried
	// by each Event, as in Spec. Zero means the defaults; negative keeps
	// none.
	MaxEventText int
	MaxEventRaw  int

	p     parser
	ready bool
}

// Parse reads one line of the stream, without its newline, read at time at
// (the events' Time). It returns the line's events in order, numbered (Seq)
// from 1 across the stream; nil for a blank line. The slice is reused: it
// is valid until the next call, and the events in it are values the caller
// may keep.
//
// A result line is marked Final when no background task is live, that is
// when it ends the turn (see the package documentation), as a Turn marks
// it.
func (r *Parser) Parse(line []byte, at time.Time) []Event {
	return r.events(line, false, at)
}

// ParseCut is Parse for the start of a line that was cut at a length bound,
// as a log or a line splitter with a bound leaves it: a JSON object that
// ends early is read up to the cut (its type and leading fields, so that a
// huge tool result still closes its call) instead of being reported
// invalid, and its events are marked Cut.
func (r *Parser) ParseCut(line []byte, at time.Time) []Event {
	return r.events(line, true, at)
}

func (r *Parser) events(line []byte, cut bool, at time.Time) []Event {
	in := r.line(line, cut, at)
	if in == nil {
		return nil
	}
	return in.events
}

// line parses a line into what the turn acts on; nil for a blank line.
func (r *Parser) line(line []byte, cut bool, at time.Time) *lineInfo {
	if !r.ready {
		r.ready = true
		r.p.format = r.Format
		r.p.maxText = setting.Or(r.MaxEventText, DefaultMaxEventText)
		r.p.maxRaw = setting.Or(r.MaxEventRaw, DefaultMaxEventRaw)
		r.p.maxLine = setting.Or(r.MaxLine, DefaultMaxLine)
	}
	if r.p.maxLine > 0 && len(line) > r.p.maxLine {
		line, cut = line[:r.p.maxLine], true
	}
	in := r.p.parse(line, cut, at)
	r.Format = r.p.format
	return in
}

// parser turns stream lines into events and the facts the turn acts on. It
// decodes only the fields it needs: one pass of jsonscan over the top-level
// members, then the few nested values of interest. It is not safe for
// concurrent use.
type parser struct {
	format  Format // FormatAuto until detected
	maxText int
	maxRaw  int
	maxLine int
	line    int64
	seq     int64
	bg      []string // the live background-task set
	info    lineInfo // reused for every line
}

// lineInfo is what one line said.
type lineInfo struct {
	events []Event

	init       bool
	permMode   string
	hasPerm    bool
	usage      *Usage // assistant per-call usage
	result     *resultInfo
	bgSet      bool   // the line replaced the background set (parser.bg)
	authFailed bool   // the stream itself says authentication failed
	answer     string // Codex: a completed agent message
	hasAnswer  bool
	invalid    string // why the line could not be read
	sample     string // the invalid line, bounded
}

// resultInfo is what a result line (or Codex turn end) carried.
type resultInfo struct {
	subtype    string
	isError    bool
	text       string
	hasText    bool
	textCut    bool
	sessionID  string
	numTurns   int
	hasTurns   bool
	cost       float64
	hasCost    bool
	usage      *Usage
	modelUsage json.RawMessage
	errors     []string
	codex      bool
}

// fields holds the raw top-level values a line may carry.
type fields struct {
	typ, subtype, message, parentTool, errorV, sessionID, model      []byte
	perm, result, isError, numTurns, cost, usage, modelUsage, errors []byte
	tasks, taskID, status, summary, description, taskType, toolUseID []byte
	threadID, item                                                   []byte
}

func (f *fields) set(key, val []byte) bool {
	switch string(key) {
	case "type":
		f.typ = val
	case "subtype":
		f.subtype = val
	case "message":
		f.message = val
	case "parent_tool_use_id":
		f.parentTool = val
	case "error":
		f.errorV = val
	case "session_id":
		f.sessionID = val
	case "model":
		f.model = val
	case "permissionMode":
		f.perm = val
	case "result":
		f.result = val
	case "is_error":
		f.isError = val
	case "num_turns":
		f.numTurns = val
	case "total_cost_usd":
		f.cost = val
	case "usage":
		f.usage = val
	case "modelUsage":
		f.modelUsage = val
	case "errors":
		f.errors = val
	case "tasks":
		f.tasks = val
	case "task_id":
		f.taskID = val
	case "status":
		f.status = val
	case "summary":
		f.summary = val
	case "description":
		f.description = val
	case "task_type":
		f.taskType = val
	case "tool_use_id":
		f.toolUseID = val
	case "thread_id":
		f.threadID = val
	case "item":
		f.item = val
	}
	return true
}

// parse reads one line (without its newline). cut reports that the line was
// longer than the bound and this is its start. It returns nil for a blank
// line. The returned info, and its events slice, are valid until the next
// call.
func (p *parser) parse(line []byte, cut bool, now time.Time) *lineInfo {
	p.line++
	trim := bytes.TrimSpace(line)
	if len(trim) == 0 {
		return nil
	}
	in := &p.info
	*in = lineInfo{events: in.events[:0]}
	raw, rawCut := p.raw(trim)
	base := Event{Line: p.line, Time: now, Raw: raw, RawTruncated: rawCut || cut, Cut: cut}

	if trim[0] != '{' {
		in.invalid = "not a JSON object"
		in.sample = sample(trim)
		base.Kind, base.Error = KindInvalid, in.invalid
		in.events = append(in.events, base)
		return p.number(in)
	}
	var f fields
	err := jsonscan.Members(trim, f.set)
	if err != nil && !(cut && err == jsonscan.ErrTruncated) {
		if err == jsonscan.ErrTruncated {
			in.invalid = "incomplete JSON object"
		} else {
			in.invalid = "malformed JSON"
		}
		in.sample = sample(trim)
		base.Kind, base.Error = KindInvalid, in.invalid
		in.events = append(in.events, base)
		return p.number(in)
	}
	typ, _ := jsonscan.String(f.typ)
	sub, _ := jsonscan.String(f.subtype)
	base.Type, base.Subtype = typ, sub
	if p.format == FormatAuto {
		p.format = detect(typ)
	}
	switch p.format {
	case FormatClaude:
		p.claude(in, &f, base, cut)
	case FormatCodex:
		p.codex(in, &f, base, cut)
	default:
		base.Kind = KindUnknown
		in.events = append(in.events, base)
	}
	return p.number(in)
}

// number gives the line's events their sequence numbers and marks a result
// that ends the turn: one while no background task is live (Codex has
// none).
func (p *parser) number(in *lineInfo) *lineInfo {
	for i := range in.events {
		p.seq++
		e := &in.events[i]
		e.Seq = p.seq
		if e.Kind == KindResult && in.result != nil {
			e.Final = in.result.codex || len(p.bg) == 0
		}
	}
	return in
}

// detect names the format that uses a line type, or FormatAuto when the
// type tells nothing.
func detect(typ string) Format {
	switch typ {
	case "system", "assistant", "user", "result", "stream_event":
		return FormatClaude
	case "thread.started", "turn.started", "turn.completed", "turn.failed",
		"item.started", "item.updated", "item.completed", "error":
		return FormatCodex
	}
	return FormatAuto
}

func (p *parser) raw(line []byte) (string, bool) {
	if p.maxRaw <= 0 {
		return "", len(line) > 0
	}
	if len(line) > p.maxRaw {
		return string(line[:p.maxRaw]), true
	}
	return string(line), false
}

// text decodes a string value, bounded for an event.
func (p *parser) text(raw []byte) (string, bool) {
	if p.maxText <= 0 {
		return "", len(raw) > 2
	}
	s, whole := jsonscan.StringPrefix(raw, p.maxText)
	return s, !whole && len(raw) > 0
}

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
	if assistant && len(f.errorV) > 0 && !jsonscan.IsNull(f.errorV) {
		code, _ := jsonscan.String(f.errorV)
		if code == "" {
			code = string(f.errorV)
		}
		code = clip(code, 1024)
		if code == "authentication_failed" {
			in.authFailed = true
		}
		e := base
		e.Kind, e.Error = KindError, code
		in.events = append(in.events, e)
	}
	var content, usage, model []byte
	if len(f.message) > 0 && f.message[0] == '{' {
		jsonscan.Members(f.message, func(k, v []byte) bool {
			switch string(k) {
			case "content":
				content = v
			case "usage":
				usage = v
			case "model":
				model = v
			}
			return true
		})
	}
	if assistant {
		if m, ok := jsonscan.String(model); ok {
			base.Model = m
		}
		if u := decodeUsage(usage); u != nil {
			in.usage = u
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
	in.result = r
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
	case "task_started", "task_notification", "task_progress", "task_updated":
		e.Kind = KindTask
		e.TaskID, _ = jsonscan.String(f.taskID)
		e.TaskStatus, _ = jsonscan.String(f.status)
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

// liveTasks reads a background_tasks_changed set: the tasks that keep a
// turn open, that is all but ambient tasks and plain background shells.
func liveTasks(tasks []byte, out []string) []string {
	if len(tasks) == 0 || tasks[0] != '[' {
		return out
	}
	jsonscan.Elements(tasks, func(t []byte) bool {
		var id, typ, ambient []byte
		if len(t) == 0 || t[0] != '{' {
			return true
		}
		jsonscan.Members(t, func(k, v []byte) bool {
			switch string(k) {
			case "task_id":
				id = v
			case "task_type":
				typ = v
			case "ambient":
				ambient = v
			}
			return true
		})
		if a, _ := jsonscan.Bool(ambient); a {
			return true
		}
		if tt, _ := jsonscan.String(typ); tt == "local_bash" {
			return true
		}
		s, _ := jsonscan.String(id)
		if s == "" {
			s = "?"
		}
		out = append(out, s)
		return true
	})
	return out
}

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
		in.result = &resultInfo{subtype: "turn.completed", usage: decodeUsage(f.usage), codex: true}
	case "turn.failed":
		e.Kind = KindResult
		e.IsError = true
		msg := errorMessage(f.errorV)
		e.Error = msg
		in.result = &resultInfo{subtype: "turn.failed", isError: true, codex: true, usage: decodeUsage(f.usage)}
		if msg != "" {
			in.result.errors = []string{msg}
			e.Errors = in.result.errors
		}
	case "error":
		e.Kind = KindError
		e.Error, _ = jsonscan.StringPrefix(f.message, 1024)
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
	var command, arguments, changes, query, output []byte
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
			}
			return true
		})
	}
	it, _ := jsonscan.String(typ)
	e.Subtype = it
	e.ToolID, _ = jsonscan.String(id)
	switch it {
	case "command_execution", "mcp_tool_call", "file_change", "web_search":
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
		e.Kind = KindText
		e.Text, e.TextTruncated = p.text(text)
		if e.Type == "item.completed" {
			if s, ok := jsonscan.String(text); ok {
				in.answer, in.hasAnswer = s, true
			}
		}
	case "reasoning":
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

// detailKeys are the members of a tool's input that tell most about the
// call, in the order they are preferred.
var detailKeys = [...]string{"command", "file_path", "path", "pattern", "url", "query", "description", "prompt"}

// inputDetail summarizes a tool's input object for Event.Detail: its most
// telling string member, or else the input with white space collapsed.
func (p *parser) inputDetail(raw []byte) string {
	if len(raw) == 0 || jsonscan.IsNull(raw) || p.maxText <= 0 {
		return ""
	}
	if raw[0] == '{' {
		best := len(detailKeys)
		var val []byte
		jsonscan.Members(raw, func(k, v []byte) bool {
			if len(v) < 3 || v[0] != '"' {
				return true // not a string, or an empty one
			}
			for i := range best {
				if string(k) == detailKeys[i] {
					best, val = i, v
					break
				}
			}
			return best > 0
		})
		if val != nil {
			return p.detailString(val)
		}
	}
	return p.compact(raw)
}

// detailString decodes a string value for Event.Detail.
func (p *parser) detailString(raw []byte) string {
	if len(raw) == 0 || p.maxText <= 0 {
		return ""
	}
	bound := min(p.maxText, MaxDetail)
	s, whole := jsonscan.StringPrefix(raw, bound)
	s, cut := clipText(s, bound)
	if (cut || !whole) && s != "" {
		s += "…"
	}
	return s
}

// compact returns raw JSON with runs of white space collapsed to one
// space, bounded for Event.Detail.
func (p *parser) compact(raw []byte) string {
	bound := min(p.maxText, MaxDetail)
	b := make([]byte, 0, min(len(raw), bound+1))
	space := false
	for _, c := range raw {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			space = len(b) > 0
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		if len(b) > bound {
			break
		}
		b = append(b, c)
	}
	s, cut := clipText(strings.ToValidUTF8(string(b), "\uFFFD"), bound)
	if cut {
		s += "…"
	}
	return s
}

// changesDetail summarizes a Codex file_change item: "KIND PATH, …".
func (p *parser) changesDetail(raw []byte) string {
	if len(raw) == 0 || raw[0] != '[' || p.maxText <= 0 {
		return ""
	}
	bound := min(p.maxText, MaxDetail)
	var b strings.Builder
	cut := false
	jsonscan.Elements(raw, func(v []byte) bool {
		var path, kind []byte
		if len(v) == 0 || v[0] != '{' {
			return true
		}
		jsonscan.Members(v, func(k, v []byte) bool {
			switch string(k) {
			case "path":
				path = v
			case "kind":
				kind = v
			}
			return true
		})
		ps, _ := jsonscan.StringPrefix(path, bound)
		ks, _ := jsonscan.StringPrefix(kind, 64)
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.TrimSpace(ks + " " + ps))
		if b.Len() > bound {
			cut = true
			return false
		}
		return true
	})
	s, clipped := clipText(b.String(), bound)
	if cut || clipped {
		s += "…"
	}
	return s
}

// contentText reads what a tool returned, for a failed call: a string, or
// the text of a list of content blocks, bounded for an event.
func (p *parser) contentText(raw []byte) (string, bool) {
	if len(raw) == 0 || p.maxText <= 0 {
		return "", false
	}
	if raw[0] == '"' {
		return p.text(raw)
	}
	if raw[0] != '[' {
		return "", false
	}
	var b strings.Builder
	cut := false
	jsonscan.Elements(raw, func(v []byte) bool {
		if len(v) == 0 || v[0] != '{' {
			return true
		}
		var text []byte
		jsonscan.Members(v, func(k, v []byte) bool {
			if string(k) == "text" {
				text = v
				return false
			}
			return true
		})
		if len(text) == 0 {
			return true
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		s, whole := jsonscan.StringPrefix(text, p.maxText-b.Len())
		b.WriteString(s)
		if !whole || b.Len() >= p.maxText {
			cut = true
			return false
		}
		return true
	})
	s, clipped := clipText(b.String(), p.maxText)
	return s, cut || clipped
}

// clipText bounds s to n bytes at a rune boundary and reports whether it
// cut.
func clipText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// errorMessage reads {"message": "..."} or a bare string.
func errorMessage(raw []byte) string {
	if len(raw) == 0 || jsonscan.IsNull(raw) {
		return ""
	}
	if raw[0] == '"' {
		s, _ := jsonscan.StringPrefix(raw, 1024)
		return s
	}
	var msg string
	jsonscan.Members(raw, func(k, v []byte) bool {
		if string(k) == "message" {
			msg, _ = jsonscan.StringPrefix(v, 1024)
			return false
		}
		return true
	})
	return msg
}

// decodeUsage reads a usage object of either format.
func decodeUsage(raw []byte) *Usage {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var u Usage
	seen := false
	jsonscan.Members(raw, func(k, v []byte) bool {
		n, ok := jsonscan.Int(v)
		if !ok {
			return true
		}
		switch string(k) {
		case "input_tokens":
			u.InputTokens = n
		case "output_tokens":
			u.OutputTokens = n
		case "cache_creation_input_tokens":
			u.CacheCreationInputTokens = n
		case "cache_read_input_tokens":
			u.CacheReadInputTokens = n
		case "cached_input_tokens":
			u.CachedInputTokens = n
		case "reasoning_output_tokens":
			u.ReasoningOutputTokens = n
		default:
			return true
		}
		seen = true
		return true
	})
	if !seen {
		return nil
	}
	return &u
}

// sample bounds a line for Result.ParseErrorSample.
func sample(line []byte) string {
	const max = 200
	if len(line) > max {
		line = line[:max]
	}
	return string(bytes.ToValidUTF8(line, []byte("\uFFFD")))
}
