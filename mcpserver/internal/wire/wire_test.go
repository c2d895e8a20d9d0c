package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The malformed messages a client was seen to send, each of which ended
// the SDK's stdio connection.
var malformed = []struct {
	line string
	code int
	id   string // the id the error must carry; "null" when unreadable
}{
	{`not json`, CodeParseError, "null"},
	{`{"jsonrpc":"2.0","id":2,"method":"pi`, CodeParseError, "2"}, // partly readable: its id is read
	{`{"jsonrpc":"1.0","id":2,"method":"ping"}`, CodeInvalidRequest, "2"},
	{`{"id":2,"method":"ping"}`, CodeInvalidRequest, "2"},
	{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest, "null"},
	{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "null"},
	{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "null"},
	{`{"jsonrpc":"2.0","id":2.5,"method":"ping"}`, CodeInvalidRequest, "null"},
	{`{"jsonrpc":"2.0","id":1e300,"method":"ping"}`, CodeInvalidRequest, "null"},
	{`5`, CodeInvalidRequest, "null"},
	{`"ping"`, CodeInvalidRequest, "null"},
	{`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, CodeInvalidRequest, "null"},
	{`[]`, CodeInvalidRequest, "null"},
	{`{}`, CodeInvalidRequest, "null"},
	{`{"jsonrpc":"2.0","id":2}`, CodeInvalidRequest, "2"},
	{`{"jsonrpc":"2.0","id":2,"method":5}`, CodeInvalidRequest, "2"},
	{`{"jsonrpc":"2.0","id":2,"method":"ping","result":{}}`, CodeInvalidRequest, "2"},
	{`{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"x"}}`, CodeInvalidRequest, "2"},
	{`{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, "null"},
	{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":"x"}`, CodeInvalidParams, `"a"`},
}

func TestCheckAnswersEveryMalformedMessage(t *testing.T) {
	for _, c := range malformed {
		_, e := Check([]byte(c.line))
		if e == nil {
			t.Errorf("%s: accepted", c.line)
			continue
		}
		var got struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(e.Encode(), &got); err != nil {
			t.Fatalf("%s: the error does not encode: %v", c.line, err)
		}
		if got.JSONRPC != "2.0" || got.Error.Code != c.code || string(got.ID) != c.id || got.Error.Message == "" {
			t.Errorf("%s: got %s, want code %d id %s", c.line, e.Encode(), c.code, c.id)
		}
	}
}

func TestCheckPassesWellFormedMessages(t *testing.T) {
	for line, kind := range map[string]Kind{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:                                Request,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}`:  Request,
		` {"jsonrpc":"2.0","id":-9007199254740992,"method":"ping","params":[]} `:  Request,
		`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`:                              Request,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:                  Notification,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"odd"}`:     Notification,
		`{"jsonrpc":"2.0","id":3,"result":{}}`:                                    Response,
		`{"jsonrpc":"2.0","id":"3","error":{"code":-1,"message":"no"},"extra":1}`: Response,
	} {
		m, e := Check([]byte(line))
		if e != nil || m.Kind != kind {
			t.Errorf("%s: kind %v, error %v", line, m.Kind, e)
		}
	}
}

func TestIDKeyIsTheSameForEverySpellingOfAnID(t *testing.T) {
	if IDKey([]byte(`1`)) != IDKey([]byte(`1.0`)) || IDKey([]byte(`"a"`)) != IDKey([]byte(`"\u0061"`)) || IDKey([]byte(`1`)) == IDKey([]byte(`"1"`)) {
		t.Error("keys differ")
	}
	if IDKey([]byte(`7`)) != ValueKey(int64(7)) || IDKey([]byte(`"7"`)) != ValueKey("7") {
		t.Error("IDKey and ValueKey disagree")
	}
}

// FuzzCheck holds Check to its promise against the SDK's own reader:
// whatever Check lets through, the SDK decodes into the same kind of
// message with the same id; whatever it refuses gets an error that is
// itself a valid JSON-RPC response.
func FuzzCheck(f *testing.F) {
	for _, c := range malformed {
		f.Add([]byte(c.line))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"true"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, e := Check(b)
		if e != nil {
			var resp struct {
				ID    json.RawMessage    `json:"id"`
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(e.Encode(), &resp); err != nil {
				t.Fatalf("error response does not encode: %v", err)
			}
			switch resp.Error.Code {
			case CodeParseError, CodeInvalidRequest, CodeInvalidParams:
			default:
				t.Fatalf("code %d", resp.Error.Code)
			}
			return
		}
		msg, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			t.Fatalf("Check passed %q, the SDK refuses it: %v", b, err)
		}
		switch msg := msg.(type) {
		case *jsonrpc.Request:
			if (m.Kind == Request) != msg.IsCall() || m.Kind == Response || msg.Method != m.Method {
				t.Fatalf("Check says %v %q, the SDK reads %+v", m.Kind, m.Method, msg)
			}
			if msg.IsCall() && ValueKey(msg.ID.Raw()) != IDKey(m.ID) {
				t.Fatalf("id %s read by the SDK as %v", m.ID, msg.ID.Raw())
			}
		case *jsonrpc.Response:
			if m.Kind != Response || ValueKey(msg.ID.Raw()) != IDKey(m.ID) {
				t.Fatalf("Check says %v, the SDK reads a response to %v", m.Kind, msg.ID.Raw())
			}
		}
	})
}

func TestLinesSkipsTooLongLinesAndGoesOn(t *testing.T) {
	in := "a\r\n\n   \n" + strings.Repeat("x", 100) + "\nb\n" + strings.Repeat("y", 1000) + "\nc"
	l := NewLines(strings.NewReader(in), 50)
	var got []string
	for {
		b, err := l.Next()
		if errors.Is(err, ErrTooLong) {
			got = append(got, "TOO LONG")
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if want := "a|TOO LONG|b|TOO LONG|c"; strings.Join(got, "|") != want {
		t.Fatalf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

// Lines longer than the reader's buffer are read whole, or skipped whole.
func TestLinesReadsLinesLongerThanItsBuffer(t *testing.T) {
	long, longer := strings.Repeat("q", 100000), strings.Repeat("r", 300000)
	l := NewLines(strings.NewReader(long+"\n"+longer+"\n"+long), 200000)
	if b, err := l.Next(); err != nil || string(b) != long {
		t.Fatalf("first line: %d bytes, %v", len(b), err)
	}
	if _, err := l.Next(); !errors.Is(err, ErrTooLong) {
		t.Fatalf("second line: %v", err)
	}
	if b, err := l.Next(); err != nil || string(b) != long {
		t.Fatalf("last line: %d bytes, %v", len(b), err)
	}
	if _, err := l.Next(); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
}

// FuzzLines checks the framing: no line comes back longer than the limit
// or holding a newline, and the lines that come back, with the ones
// reported too long, are the stream's lines.
func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), 4)
	f.Add([]byte("zzzzzzzzzz\nok\n"), 8)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 1 || max > 1<<20 {
			return
		}
		var want []string
		for _, line := range strings.Split(string(b), "\n") {
			switch {
			case len(line) > max:
				want = append(want, "\x00too long")
			case len(strings.TrimSpace(line)) == 0:
			default:
				want = append(want, strings.TrimRight(line, "\r"))
			}
		}
		l := NewLines(bytes.NewReader(b), max)
		var got []string
		for {
			line, err := l.Next()
			if errors.Is(err, ErrTooLong) {
				got = append(got, "\x00too long")
				continue
			}
			if err != nil {
				break
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line of %d bytes (max %d): %q", len(line), max, line)
			}
			got = append(got, string(line))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
