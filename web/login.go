package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/corralrun/corral/internal/httpguard"
	"github.com/corralrun/corral/internal/lockout"
)

type loginData struct {
	Next  string
	Error string
}

// safeNext keeps a post-login target only if it is a path of this site:
// after decoding and dropping control characters (which browsers drop
// too), it must start with a single "/" followed by something that is
// neither a separator ("/" or "\") nor nothing, or be "/" itself, and not
// lead back to the login page. Anything else means "/".
func safeNext(next string) string {
	dec, err := url.PathUnescape(next)
	if err != nil {
		return "/"
	}
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, dec)
	clean = strings.TrimSpace(clean)
	switch {
	case clean != dec, // a control character anywhere: refuse, do not repair
		!strings.HasPrefix(next, "/"),
		len(clean) > 1 && (clean[1] == '/' || clean[1] == '\\'),
		strings.ContainsRune(clean, '\\'),
		strings.HasPrefix(clean, "/login"):
		return "/"
	}
	return next
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if _, ok := u.session(r); ok || u.cfg.Token == "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	u.render(w, r, http.StatusOK, "login", &page{Title: "Log in", AssetVer: u.assetVer, Auth: true, Data: loginData{Next: next}})
}

// login checks the token (in constant time) and starts a session. It
// refuses cross-origin posts, so that no other site can log a browser in,
// and holds back a client that failed too often (429, Retry-After in
// seconds) before its token is even looked at; a client that has not
// failed is never held back.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	p := &page{Title: "Log in", AssetVer: u.assetVer, Auth: true}
	if err := u.xorigin.Check(r); err != nil {
		u.errorPage(w, r, p, http.StatusForbidden, "Refused", errCrossOrigin.Error()+".")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	next := safeNext(r.PostFormValue("next"))
	if u.cfg.Token == "" {
		u.setSession(w, r)
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	client := httpguard.ClientAddr(r)
	if wait := u.lock.Wait(client); wait > 0 {
		w.Header().Set("Retry-After", lockout.RetryAfter(wait))
		p.Data = loginData{Next: next, Error: "Too many wrong tokens from your address. Wait " + fmtDuration(wait.Round(1e9)) + ", then try again."}
		u.render(w, r, http.StatusTooManyRequests, "login", p)
		return
	}
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if tok == "" || !tokenMatches(tok, u.cfg.Token) {
		msg := "Enter the service's API token."
		if tok != "" {
			u.lock.Fail(client)
			msg = "That is not the token of this service. It is printed by corral serve on its first start and kept in the file token of its data directory (or set with CORRAL_TOKEN)."
		}
		p.Data = loginData{Next: next, Error: msg}
		u.render(w, r, http.StatusUnauthorized, "login", p)
		return
	}
	u.lock.Succeed(client)
	u.setSession(w, r)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session for good: it is recorded in the database until
// the session would have expired, so the cookie stays dead after a
// restart and on every worker.
func (u *UI) logout(w http.ResponseWriter, r *http.Request, p *page) {
	u.clearSession(w, r)
	if p.sess != nil {
		u.sess.revoke(p.sess)
		if u.cfg.Token != "" {
			if err := u.svc.RevokeSession(r.Context(), u.sess.id(p.sess), p.sess.expires); err != nil {
				u.fail(w, r, p, err)
				return
			}
		}
	}
	if u.cfg.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
