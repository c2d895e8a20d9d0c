// Package wire checks JSON-RPC 2.0 messages as they come off the wire,
// before the MCP SDK sees them, so that a malformed message gets a
// JSON-RPC error of its own and never ends a connection. It also splits a
// byte stream into newline-delimited messages within a size limit, as MCP's
// stdio transport frames them.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// The JSON-RPC 2.0 error codes a message can earn before it is handled.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Kind says what a well-formed message is.
type Kind int

const (
	// Request is a call: it has an id and a method, and wants a response.
	Request Kind = iota + 1
	// Notification has a method and no id.
	Notification
	// Response answers a call the server made: an id and a result or an
	// error.
	Response
)

// Message is what Check learned of a well-formed message.
type Message struct {
	Kind Kind
	// ID is the message's id as it was sent (a JSON string or integer);
	// nil for a notification.
	ID json.RawMessage
	// Method and Params are those of a request or notification; Params is
	// nil when absent.
	Method string
	Params json.RawMessage
	// Result and Error are those of a response, as sent; the one absent is
	// nil.
	Result, Error json.RawMessage
}

// Error is a JSON-RPC error to send back for a message that cannot be
// handled.
type Error struct {
	// ID is the offending message's id when it could be read, else nil
	// (sent as null).
	ID      json.RawMessage
	Code    int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Encode returns the error as a JSON-RPC response, without a newline.
func (e *Error) Encode() []byte {
	id := e.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{e.Code, e.Message}})
	return b
}

// Check checks that b holds one JSON-RPC 2.0 message as MCP allows it: an
// object (MCP has no batches since 2025-06-18, and corral accepts none),
// with "jsonrpc":"2.0", an id that is a string or an integer when there is
// one, and either a string method (a request or notification, with object
// or array params when present) or a result or an error (a response). It
// returns what the message is, or the error to send back. The error
// carries the message's id whenever one can be read, even from a message
// that does not parse (see ScanID), so that the client's call fails at
// once; one with no readable id gets a null id, as JSON-RPC says. The only
// messages that get no error are well-formed responses and notifications,
// whose contents are the handler's to judge. Check reads the message
// once: what it returns is all a transport needs to build the SDK's
// message from.
func Check(b []byte) (Message, *Error) {
	b = bytes.TrimSpace(b)
	if !json.Valid(b) {
		return Message{}, &Error{ID: ScanID(b), Code: CodeParseError, Message: "parse error: the message is not valid JSON: send one JSON-RPC object per line"}
	}
	if depth(b) > maxDepth {
		return Message{}, &Error{ID: ScanID(b), Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: the message nests deeper than %d levels", maxDepth)}
	}
	switch b[0] {
	case '{':
	case '[':
		return Message{}, &Error{Code: CodeInvalidRequest, Message: "invalid request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send each message on its own"}
	default:
		return Message{}, &Error{Code: CodeInvalidRequest, Message: "invalid request: a JSON-RPC message is an object"}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return Message{}, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error()}
	}
	var msg Message
	idRaw, hasID := m["id"]
	if hasID {
		if err := checkID(idRaw); err != "" {
			return Message{}, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err}
		}
		msg.ID = idRaw
	}
	invalid := func(format string, args ...any) (Message, *Error) {
		return Message{}, &Error{ID: msg.ID, Code: CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	var version string
	if v, ok := m["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	methodRaw, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if !hasMethod {
		switch {
		case !hasResult && !hasError:
			return invalid(`a message needs a "method" (a request or notification) or a "result" or "error" (a response)`)
		case hasResult && hasError:
			return invalid(`a response has a "result" or an "error", not both`)
		case !hasID:
			return invalid(`a response needs the "id" of the request it answers`)
		case hasError && !errorObject(m["error"]):
			return invalid(`a response's "error" is an object with an integer "code" and a string "message"`)
		}
		msg.Kind, msg.Result, msg.Error = Response, m["result"], m["error"]
		return msg, nil
	}
	if hasResult || hasError {
		return invalid(`a request has a "method" and no "result" or "error"`)
	}
	if json.Unmarshal(methodRaw, &msg.Method) != nil {
		return invalid(`"method" must be a string`)
	}
	if p, ok := m["params"]; ok {
		if c := bytes.TrimSpace(p); len(c) == 0 || (c[0] != '{' && c[0] != '[') {
			if !hasID {
				// A notification is never answered; its handler drops it.
				msg.Kind, msg.Params = Notification, p
				return msg, nil
			}
			return Message{}, &Error{ID: msg.ID, Code: CodeInvalidParams, Message: `invalid params: "params" must be an object`}
		}
		msg.Params = p
	}
	msg.Kind = Request
	if !hasID {
		msg.Kind = Notification
	}
	return msg, nil
}

// maxDepth is how deeply a message may nest, as deeply as the SDK reads.
const maxDepth = 1000

// depth returns how deeply the valid JSON b nests.
func depth(b []byte) int {
	d, most := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// errorObject reports whether raw is a JSON-RPC error object.
func errorObject(raw json.RawMessage) bool {
	var e struct {
		Code    *json.Number `json:"code"`
		Message *string      `json:"message"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&e) != nil || e.Code == nil || e.Message == nil {
		return false
	}
	_, err := e.Code.Int64()
	return err == nil
}

// maxExactInt is the largest integer every JSON parser holds exactly.
const maxExactInt = 1 << 53

// checkID returns why raw is not an id MCP allows: a string or an integer
// (JSON-RPC allows null and fractions, which MCP forbids, and an integer
// beyond 2^53 does not survive a JavaScript client).
func checkID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return `"id" is empty`
	}
	switch raw[0] {
	case '"':
		return ""
	case 'n':
		return `"id" must not be null: use a string or an integer`
	case '{', '[', 't', 'f':
		return `"id" must be a string or an integer`
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxExactInt {
		return fmt.Sprintf(`"id" %s is not an integer between -2^53 and 2^53`, raw)
	}
	return ""
}

// IDKey returns a map key for an id that Check accepted, the same for
// every spelling of one id (1 and 1.0, "a" and "\u0061").
func IDKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		return "s" + s
	}
	f, _ := strconv.ParseFloat(string(raw), 64)
	return "n" + strconv.FormatInt(int64(f), 10)
}

// ValueKey returns IDKey's key for an id held as a Go value, as the SDK
// holds them: an int64 or a string.
func ValueKey(v any) string {
	switch v := v.(type) {
	case string:
		return "s" + v
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	case float64:
		return "n" + strconv.FormatInt(int64(v), 10)
	}
	return fmt.Sprintf("?%v", v)
}

// CancelledID returns the requestId of a notifications/cancelled
// message's params, if it names one validly.
func CancelledID(params json.RawMessage) (json.RawMessage, bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil || checkID(p.RequestID) != "" {
		return nil, false
	}
	return p.RequestID, true
}
