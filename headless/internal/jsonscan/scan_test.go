package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMembersReadsTopLevelOnly(t *testing.T) {
	in := `{"type":"assistant","message":{"type":"nested","content":[{"type":"text","text":"a \"quoted\" } ] {"}]},"n":12,"b":true,"z":null}`
	got := map[string]string{}
	if err := Members([]byte(in), func(k, v []byte) bool { got[string(k)] = string(v); return true }); err != nil {
		t.Fatal(err)
	}
	if got["type"] != `"assistant"` || got["n"] != "12" || got["b"] != "true" || got["z"] != "null" || len(got) != 5 {
		t.Fatalf("members %v", got)
	}
	var content []byte
	Members([]byte(got["message"]), func(k, v []byte) bool {
		if string(k) == "content" {
			content = v
		}
		return true
	})
	n := 0
	Elements(content, func(v []byte) bool { n++; return true })
	if n != 1 {
		t.Fatalf("%d content blocks", n)
	}
}

func TestMembersReportsTruncatedValue(t *testing.T) {
	in := `{"type":"result","subtype":"success","result":"a very long answer that was cu`
	var keys []string
	var last []byte
	err := Members([]byte(in), func(k, v []byte) bool { keys = append(keys, string(k)); last = v; return true })
	if err != ErrTruncated || len(keys) != 3 || keys[2] != "result" {
		t.Fatalf("err %v keys %v", err, keys)
	}
	s, whole := StringPrefix(last, 1000)
	if whole || s != "a very long answer that was cu" {
		t.Fatalf("prefix %q whole %v", s, whole)
	}
}

func TestMalformedInputIsAnError(t *testing.T) {
	for _, in := range []string{"", "[]", "{", `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":1}x`, `{a:1}`, `{"a":[1,2}`, `not json`} {
		err := Members([]byte(in), func(k, v []byte) bool { return true })
		if err == nil {
			t.Errorf("Members(%q) = nil", in)
		}
	}
}

func TestStringDecodesEscapesAndInvalidUTF8(t *testing.T) {
	for raw, want := range map[string]string{
		`"plain"`:         "plain",
		`"a\nb\u00e9\"c"`: "a\nbé\"c",
		"\"bad \xff\"":    "bad \uFFFD",
		`"\ud83d\ude00"`:  "😀",
	} {
		got, ok := String([]byte(raw))
		if !ok || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	if _, ok := String([]byte(`"unterminated`)); ok {
		t.Errorf("unterminated string decoded")
	}
}

func TestStringPrefixBoundsAndKeepsEscapesWhole(t *testing.T) {
	s, whole := StringPrefix([]byte(`"abcdef"`), 3)
	if s != "abc" || whole {
		t.Errorf("got %q %v", s, whole)
	}
	// A cut in the middle of an escape drops the escape, not the string.
	s, _ = StringPrefix([]byte(`"ab\n`), 3)
	if s != "ab" {
		t.Errorf("got %q", s)
	}
	s, whole = StringPrefix([]byte(`"short"`), 100)
	if s != "short" || !whole {
		t.Errorf("got %q %v", s, whole)
	}
}

func TestNumbersAndLiterals(t *testing.T) {
	if n, ok := Int([]byte("42")); !ok || n != 42 {
		t.Error(n, ok)
	}
	if n, ok := Int([]byte("4.9")); !ok || n != 4 {
		t.Error(n, ok)
	}
	if f, ok := Float([]byte("0.0123")); !ok || f != 0.0123 {
		t.Error(f, ok)
	}
	if b, ok := Bool([]byte("true")); !ok || !b {
		t.Error(b, ok)
	}
	if _, ok := Bool([]byte("1")); ok {
		t.Error("1 is not a bool")
	}
}

// FuzzMembers checks that the scanner never panics and agrees with
// encoding/json on the top-level keys of valid objects.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"a":"\"}","b":[1,{"c":"]"}],"d":null}`,
		`{"a":1`, `{"a":"x\`, `{}`, ` { "k" : [ ] } `, `{"a":1}}`, "{\"\xff\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var keys []string
		err := Members(data, func(k, v []byte) bool {
			keys = append(keys, string(k))
			if len(v) > 0 {
				String(v)
				StringPrefix(v, 7)
				Elements(v, func([]byte) bool { return true })
				Members(v, func(k, v []byte) bool { return true })
			}
			return true
		})
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			return
		}
		if err != nil {
			t.Fatalf("valid object rejected: %v: %q", err, data)
		}
		for _, k := range keys {
			if strings.ContainsRune(k, '\\') {
				return // escaped keys are compared raw; encoding/json decodes them
			}
		}
		uniq := map[string]bool{}
		for _, k := range keys {
			uniq[k] = true
		}
		if len(uniq) != len(m) {
			t.Fatalf("keys %v, encoding/json found %d", keys, len(m))
		}
	})
}
