package headless

import (
	"strings"

	"github.com/corralrun/corral/headless/internal/jsonscan"
)

// MaxDetail bounds the short texts of a tool call (Event.Detail,
// ToolCall.Detail, ToolCall.ErrorText), in bytes before the "…" that marks
// a cut.
const MaxDetail = 400

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
