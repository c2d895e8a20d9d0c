package headless

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/corralrun/corral/headless/internal/jsonscan"
	"github.com/corralrun/corral/internal/setting"
)

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
// A result line is marked Final when it ends the turn: no background task
// is live and every turn the agent began has ended (see the package
// documentation), as a Turn marks it.
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
	bg      []BackgroundTask // the live background-task set
	inits   int              // Claude init lines: turns begun
	results int              // Claude result lines: turns ended
	info    lineInfo         // reused for every line
}

// lineInfo is what one line said.
type lineInfo struct {
	events []Event

	init       bool
	permMode   string
	hasPerm    bool
	usage      *Usage // assistant per-call usage
	usageID    string // the message it is of (a message spans lines)
	usageModel string // the model that answered it
	result     *resultInfo
	bgSet      bool   // the line replaced the background set (parser.bg)
	authFailed bool   // the stream itself says authentication failed
	authWhy    string // what said so
	failure    *apiFailure
	progress   bool   // the model answered: an earlier API failure is over
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
	queued     int // Claude: turns queued behind this one
	codex      bool
}

// fields holds the raw top-level values a line may carry.
type fields struct {
	typ, subtype, message, parentTool, errorV, sessionID, model      []byte
	perm, result, isError, numTurns, cost, usage, modelUsage, errors []byte
	tasks, taskID, status, summary, description, taskType, toolUseID []byte
	threadID, item, attempt, maxRetries, retryDelay, errorStatus     []byte
	patch, queued                                                    []byte
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
	case "attempt":
		f.attempt = val
	case "max_retries":
		f.maxRetries = val
	case "retry_delay_ms":
		f.retryDelay = val
	case "error_status":
		f.errorStatus = val
	case "patch":
		f.patch = val
	case "queued_turn_count":
		f.queued = val
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
// that ends the turn (see final).
func (p *parser) number(in *lineInfo) *lineInfo {
	for i := range in.events {
		p.seq++
		e := &in.events[i]
		e.Seq = p.seq
		if e.Kind == KindResult && in.result != nil {
			e.Final = p.final(in.result)
		}
	}
	return in
}

// final reports whether a result ends the turn. Codex's turn end always
// does. Claude Code's does when no background task is live and no turn of
// its is still under way: it begins each turn — the prompt's, and each
// follow-up it runs when background work finishes — with an init line,
// and may report a turn's result only after the next one began (seen with
// a background sub-agent: both results come at the very end), so a result
// is the last one only once there are as many results as inits and
// nothing is queued.
func (p *parser) final(r *resultInfo) bool {
	if r.codex {
		return true
	}
	return len(p.bg) == 0 && p.results >= p.inits && r.queued == 0
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
		case "cache_write_input_tokens":
			u.CacheWriteInputTokens = n
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
