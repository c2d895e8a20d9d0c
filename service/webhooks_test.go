package service_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/storetest"
)

// receiver is a webhook endpoint that checks every delivery's signature
// and records each delivery once (by its Corral-Delivery id), however
// often it is sent. fail tells it to hang or answer 500 for a request.
type receiver struct {
	t      *testing.T
	secret string
	srv    *http.Server
	ln     net.Listener
	addr   string
	fail   func(n int64) string // "hang", "500" or ""
	n      atomic.Int64

	mu     sync.Mutex
	seen   map[string]bool
	events map[string][]string // execution → events, in arrival order
}

func newReceiver(t *testing.T, secret string, fail func(int64) string) *receiver {
	r := &receiver{t: t, secret: secret, fail: fail, seen: map[string]bool{}, events: map[string][]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(r.stop)
	return r
}

func (r *receiver) url() string { return "http://" + r.addr + "/hook" }

func (r *receiver) serve(ln net.Listener) {
	r.ln = ln
	r.srv = &http.Server{Handler: http.HandlerFunc(r.handle)}
	go r.srv.Serve(ln)
}

func (r *receiver) stop() { r.srv.Close() }

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	switch r.fail(r.n.Add(1)) {
	case "hang":
		select {
		case <-req.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	case "500":
		http.Error(w, "boom", 500)
		return
	}
	if !signedBy(r.secret, req.Header.Get("Corral-Signature"), body) {
		r.t.Errorf("delivery %s: the signature %q is not HMAC-SHA256(secret, t.body)", req.Header.Get("Corral-Delivery"), req.Header.Get("Corral-Signature"))
		http.Error(w, "bad signature", 400)
		return
	}
	var ev struct {
		Event     string `json:"event"`
		Execution struct {
			ID string `json:"id"`
		} `json:"execution"`
	}
	json.Unmarshal(body, &ev)
	if ev.Event != req.Header.Get("Corral-Event") {
		r.t.Errorf("body says %q, header %q", ev.Event, req.Header.Get("Corral-Event"))
	}
	r.mu.Lock()
	if id := req.Header.Get("Corral-Delivery"); !r.seen[id] {
		r.seen[id] = true
		r.events[ev.Execution.ID] = append(r.events[ev.Execution.ID], ev.Event)
	}
	r.mu.Unlock()
	w.WriteHeader(204)
}

func (r *receiver) of(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events[id]...)
}

func sameEvents(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWebhooksArriveSignedInOrderThroughAReceiverThatHangsOrFails: every
// event of a run and of its retry reaches the agent's webhook, signed, in
// order, once per delivery, although the receiver hangs on the first
// request (past the delivery timeout) and answers 500 to the next two;
// the deliveries' last status is visible.
func TestWebhooksArriveSignedInOrderThroughAReceiverThatHangsOrFails(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{WebhookTimeout: 300 * time.Millisecond, WebhookBackoff: 50 * time.Millisecond})
		rcv := newReceiver(t, "whsec", func(n int64) string {
			switch {
			case n == 1:
				return "hang"
			case n <= 3:
				return "500"
			}
			return ""
		})
		mark := filepath.Join(t.TempDir(), "ran")
		f.agent(corral.Agent{Name: "hooked", Retry: corral.Retry{MaxAttempts: 2, RetryOn: []corral.ErrorType{corral.ErrorExit}, RetryBackoff: corral.Duration(10 * time.Millisecond)},
			Webhooks: []corral.Webhook{{URL: rcv.url(), Secret: "whsec"}}})
		one := f.waitTerminal(f.submit("hooked", "if [ -e "+mark+" ]; then exit 0; fi; touch "+mark+"; exit 4").ID, 30*time.Second)
		two := f.waitTerminal(one.RetriedBy, 30*time.Second)
		testutil.WaitFor(t, 30*time.Second, "every event delivered", func() bool {
			return len(rcv.of(one.ID)) == 3 && len(rcv.of(two.ID)) == 2
		})
		if got := rcv.of(one.ID); !sameEvents(got, []string{"started", "failed", "retrying"}) {
			t.Fatalf("attempt 1's events %v", got)
		}
		if got := rcv.of(two.ID); !sameEvents(got, []string{"started", "succeeded"}) {
			t.Fatalf("attempt 2's events %v", got)
		}
		ds, err := f.svc.Deliveries(bg, one.ID)
		if err != nil || len(ds) != 3 || ds[0].Status != "delivered" || ds[0].Attempts < 2 {
			t.Fatalf("deliveries of attempt 1: %+v (%v)", ds, err)
		}
		if _, err := f.svc.Deliveries(bg, "nope"); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("deliveries of an unknown execution: %v", err)
		}
	})
}

// TestWebhooksWaitOutAReceiverDownForAMinute: a receiver that is down for
// a minute gets every event once it is back, in order.
func TestWebhooksWaitOutAReceiverDownForAMinute(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storetest.Backends()[0], service.Config{WebhookTimeout: time.Second, WebhookBackoff: 200 * time.Millisecond})
	rcv := newReceiver(t, "whsec", func(int64) string { return "" })
	addr := rcv.addr
	rcv.stop()
	downSince := time.Now()
	f.agent(corral.Agent{Name: "patient", Webhooks: []corral.Webhook{{URL: rcv.url(), Secret: "whsec", Events: []string{corral.EventStarted, corral.EventSucceeded}}}})
	e := f.waitTerminal(f.submit("patient", "true").ID, 30*time.Second)
	time.Sleep(time.Until(downSince.Add(time.Minute)))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("SKIP: the receiver's port was taken while it was down: %v", err)
	}
	rcv.serve(ln)
	// The backoff doubles from 200 ms: a minute down, the attempt due next
	// may be up to 51.2 s away (25.6 s to 51.2 s with the jitter).
	testutil.WaitFor(t, 90*time.Second, "the events delivered once the receiver is back", func() bool { return len(rcv.of(e.ID)) == 2 })
	if got := rcv.of(e.ID); !sameEvents(got, []string{"started", "succeeded"}) {
		t.Fatalf("events %v", got)
	}
}

// signedBy checks a Corral-Signature as a receiver does, on its own:
// t=UNIX,v1=HEX(HMAC-SHA256(secret, "t.body")), t within 5 minutes.
func signedBy(secret, header string, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		if k == "t" {
			ts = v
		} else if k == "v1" {
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + string(body)))
	return hmac.Equal([]byte(sig), []byte(hex.EncodeToString(m.Sum(nil))))
}
