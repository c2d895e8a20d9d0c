package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// An error for a message the server could not read carried a null id even
// when the id was there to read, so the MCP TypeScript SDK's client
// waited for its own timeout (60 s) instead of failing the call.
func TestScanIDReadsTheTopLevelIDOfPartlyReadableMessages(t *testing.T) {
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"pi`:                               `7`,
		`{"method":"tools/call","params":{"id":1,"x":[{"id":2}]},"id":"ab"}`: `"ab"`,
		`{"params":{"s":"\"id\":9"},"jsonrpc":"2.0","id":-3,"method":`:       `-3`,
		` {"id" : "a\"b" , "method":"x"`:                                     `"a\"b"`,
		`{"id":12`:                                                           ``, // may be cut short
		`{"id":null,"method":"ping"}`:                                        ``,
		`{"id":2.5}`:                                                         ``,
		`{"id":{"a":1}}`:                                                     ``,
		`[{"id":1}]`:                                                         ``,
		`{"a":{"id":1}}`:                                                     ``,
		`{"a":"id","b":1}`:                                                   ``,
		`not json "id":1`:                                                    ``,
		`{"id":1}{"id":2}`:                                                   `1`,
		`{"i":1,"idx":2,"d":3}`:                                              ``,
	} {
		if got := string(ScanID([]byte(line))); got != want {
			t.Errorf("%s: got %q, want %q", line, got, want)
		}
	}
}

// The id of a line past the limit is read as the line is skipped,
// wherever it is: the TypeScript SDK writes it last, after the params.
func TestLinesGiveTheIDOfALineTooLong(t *testing.T) {
	pad := strings.Repeat("x", 300000)
	in := `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"command":"` + pad + `","id":1}},"id":42}` + "\n" +
		`{"id":"early","params":"` + pad + `"}` + "\n" + pad + "\n" + `{"jsonrpc":"2.0","id":5,"method":"ping"}` + "\n"
	l := NewLines(strings.NewReader(in), 1000)
	for _, want := range []string{`42`, `"early"`, ``} {
		_, err := l.Next()
		var tl *TooLongError
		if !errors.As(err, &tl) || !errors.Is(err, ErrTooLong) {
			t.Fatalf("want a TooLongError, got %v", err)
		}
		if string(tl.ID) != want {
			t.Errorf("id %q, want %q", tl.ID, want)
		}
	}
	if b, err := l.Next(); err != nil || !bytes.Contains(b, []byte(`"ping"`)) {
		t.Fatalf("the next line: %q %v", b, err)
	}
}

// FuzzScanID checks the scanner against the JSON parser: on a valid
// object it finds the id Check finds, and on anything it never panics.
func FuzzScanID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f.Add([]byte(`{"a":[{"id":3}],"id":"x\\"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ScanID(b)
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || bytes.TrimSpace(b)[0] != '{' {
			return
		}
		want, ok := m["id"]
		if !ok || checkID(want) != "" {
			want = nil
		}
		if string(want) != "" && IDKey(got) != IDKey(want) {
			t.Fatalf("%q: scanned %q, parsed %q", b, got, want)
		}
	})
}
