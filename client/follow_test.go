package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFollowResumesABrokenStreamFromTheLastRecord serves a stream that
// breaks after three records: Follow opens it again after record 3 and
// delivers each record once, then the end.
func TestFollowResumesABrokenStreamFromTheLastRecord(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	var afters []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		mu.Lock()
		afters = append(afters, r.URL.Query().Get("after"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: status\ndata: {\"id\":\"x\",\"status\":\"running\"}\n\n")
		from, to := 1, 3
		if n > 1 {
			from, to = 4, 5
		}
		for i := from; i <= to; i++ {
			fmt.Fprintf(w, "id: %d\nevent: log\ndata: {\"seq\":%d,\"stream\":\"stdout\",\"text\":\"line %d\"}\n\n", i, i, i)
		}
		if n > 1 {
			fmt.Fprint(w, "event: end\ndata: {\"id\":\"x\",\"status\":\"succeeded\"}\n\n")
		}
	}))
	defer srv.Close()
	var got []string
	end, err := New(srv.URL, "").Follow(context.Background(), "x", 0, true, func(ev Event) error {
		if ev.Record != nil {
			got = append(got, ev.Record.Text)
		}
		return nil
	})
	if err != nil || end == nil || end.Status != "succeeded" {
		t.Fatalf("follow: %v %+v", err, end)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "line 1,line 2,line 3,line 4,line 5" || strings.Join(afters, ",") != ",3" {
		t.Fatalf("records %v, requests after %q", got, afters)
	}
}

// TestFollowGivesUpOnAStreamThatNeverProgresses stops after FollowRetries
// broken streams that carried no record.
func TestFollowGivesUpOnAStreamThatNeverProgresses(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: status\ndata: {\"id\":\"x\",\"status\":\"running\"}\n\n")
	}))
	defer srv.Close()
	_, err := New(srv.URL, "").Follow(context.Background(), "x", 0, true, nil)
	if err == nil || calls.Load() != FollowRetries {
		t.Fatalf("err %v after %d requests, want an error after %d", err, calls.Load(), FollowRetries)
	}
}
