package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// liveKeepAlive is how often an unchanged live stream sends a comment, so
// that proxies and browsers see it alive.
const liveKeepAlive = 15 * time.Second

// live streams a fragment as Server-Sent Events: an "html" event with the
// fragment each time it changes, looked at every Config.LivePoll. It
// returns when the client goes away or the server shuts down; it starts
// no goroutine.
func (u *UI) live(w http.ResponseWriter, r *http.Request, render func(context.Context) (name string, data any, err error)) {
	rc := http.NewResponseController(w)
	// A live page stays open; the server's read and write timeouts must
	// not cut it.
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	if rc.Flush() != nil {
		return
	}
	ctx := r.Context()
	t := time.NewTicker(u.cfg.LivePoll)
	defer t.Stop()
	var last [32]byte
	lastSent := time.Now()
	for {
		name, data, err := render(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			u.log.Warn("web UI: live update failed", "path", r.URL.Path, "err", err)
		} else {
			var b bytes.Buffer
			if err := u.pages["fragments"].ExecuteTemplate(&b, name, data); err != nil {
				u.log.Error("web UI: render live fragment", "fragment", name, "err", err)
				return
			}
			if sum := sha256.Sum256(b.Bytes()); sum != last {
				last = sum
				if writeEvent(w, "html", b.String()) != nil || rc.Flush() != nil {
					return
				}
				lastSent = time.Now()
			}
		}
		if time.Since(lastSent) >= liveKeepAlive {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			lastSent = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// writeEvent writes one SSE event, its data split into data: lines.
func writeEvent(w http.ResponseWriter, event, data string) error {
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, err := fmt.Fprint(w, b.String())
	return err
}
