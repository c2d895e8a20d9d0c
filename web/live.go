package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"time"

	"github.com/corralrun/corral/internal/sse"
)

// liveKeepAlive is how often an unchanged live stream sends a comment, so
// that proxies and browsers see it alive.
const liveKeepAlive = 15 * time.Second

// live streams a fragment as Server-Sent Events: an "html" event with the
// fragment each time it changes, looked at every Config.LivePoll. It
// returns when the client goes away (or stops reading: each write has a
// deadline) or the server shuts down; it starts no goroutine.
func (u *UI) live(w http.ResponseWriter, r *http.Request, fragment func(context.Context) ([]byte, error)) {
	stream, err := sse.Start(w, 2*time.Second)
	if err != nil {
		return
	}
	defer stream.End()
	ctx := r.Context()
	t := time.NewTicker(u.cfg.LivePoll)
	defer t.Stop()
	var last [32]byte
	lastSent := time.Now()
	for {
		html, err := fragment(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			u.log.Warn("web UI: live update failed", "path", r.URL.Path, "err", err)
		} else if sum := sha256.Sum256(html); sum != last {
			last = sum
			if stream.Event("html", "", html) != nil {
				return
			}
			lastSent = time.Now()
		}
		if time.Since(lastSent) >= liveKeepAlive {
			if stream.KeepAlive() != nil {
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

// renderFragment returns a fragment's HTML: the template name with data.
func (u *UI) renderFragment(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	err := u.pages["fragments"].ExecuteTemplate(&b, name, data)
	return b.Bytes(), err
}
