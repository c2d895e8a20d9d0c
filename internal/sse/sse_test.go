package sse

import (
	"net/http/httptest"
	"testing"
)

func TestStreamWritesHeadersEventsAndKeepAlives(t *testing.T) {
	w := httptest.NewRecorder()
	s, err := Start(w, 2000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	s.Event("log", "7", []byte(`{"a":1}`))
	s.Event("html", "", []byte("<p>\r\nline two</p>"))
	s.KeepAlive()
	if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	want := "retry: 2000\n\n" +
		"id: 7\nevent: log\ndata: {\"a\":1}\n\n" +
		"event: html\ndata: <p>\ndata: line two</p>\n\n" +
		": keep-alive\n\n"
	if got := w.Body.String(); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !w.Flushed {
		t.Fatal("not flushed")
	}
}
