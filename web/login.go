package web

import (
	"net/http"
	"strings"
	"time"
)

type loginData struct {
	Next  string
	Error string
}

// safeNext keeps a post-login target only if it is a path of this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") || strings.HasPrefix(next, "/login") {
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
// and throttles clients that fail too often.
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
	if limited, until := u.sess.throttled(r); limited {
		w.Header().Set("Retry-After", until.Sub(u.now()).Round(time.Second).String())
		p.Data = loginData{Next: next, Error: "Too many failed attempts from your address. Wait " + fmtDuration(until.Sub(u.now()).Round(time.Second)) + ", then try again."}
		u.render(w, r, http.StatusTooManyRequests, "login", p)
		return
	}
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if tok == "" || !tokenMatches(tok, u.cfg.Token) {
		u.sess.failed(r)
		msg := "That is not the token of this service. It is printed by corral serve on its first start and kept in the file token of its data directory (or set with CORRAL_TOKEN)."
		if tok == "" {
			msg = "Enter the service's API token."
		}
		p.Data = loginData{Next: next, Error: msg}
		u.render(w, r, http.StatusUnauthorized, "login", p)
		return
	}
	u.setSession(w, r)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request, p *page) {
	if p.sess != nil {
		u.sess.revoke(p.sess)
	}
	u.clearSession(w, r)
	if u.cfg.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
