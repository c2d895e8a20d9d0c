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
// returns when the client goes away or the server shuts down; it starts
// no goroutine.
func (u *UI) live(w http.ResponseWriter, r *http.Request, render func(context.Context) (name string, data any, err error)) {
	stream, err := sse.Start(w, 2*time.Second)
	if err != nil {
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
				if stream.Event("html", "", b.Bytes()) != nil {
					return
				}
				lastSent = time.Now()
			}
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
