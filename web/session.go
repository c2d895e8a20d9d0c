package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"
)

// CookieName is the name of the session cookie.
const CookieName = "corral_session"

// CSRFHeader is the request header that carries the CSRF token of a
// session on requests made by script (forms carry it in the field "csrf").
const CSRFHeader = "X-CSRF-Token"

// session is a verified session cookie.
type session struct {
	nonce   [16]byte
	expires time.Time
}

// sessions signs, verifies and revokes session cookies. A cookie holds an
// expiry and a random nonce, signed with a key derived from the API token:
// it proves that its holder once presented the token, and it stops
// working when the token changes and when it expires. A logout is
// recorded in the database by the UI (see UI.session), for every worker
// and across restarts; revoked keeps this process's own logouts, so that
// they need no lookup. The CSRF token of a session is derived from its
// nonce with the same key, so it needs no storage.
type sessions struct {
	key [32]byte
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	revoked map[[16]byte]time.Time // nonce → expiry
}

func newSessions(token string, ttl time.Duration, now func() time.Time) *sessions {
	s := &sessions{ttl: ttl, now: now, revoked: map[[16]byte]time.Time{}}
	if token == "" {
		// No token: sessions only carry CSRF tokens; they need not
		// outlive the process.
		rand.Read(s.key[:])
	} else {
		m := hmac.New(sha256.New, []byte(token))
		m.Write([]byte("corral web session key v1"))
		copy(s.key[:], m.Sum(nil))
	}
	return s
}

// issue makes a new session and its cookie value.
func (s *sessions) issue() (*session, string) {
	ss := &session{expires: s.now().Add(s.ttl).Truncate(time.Second)}
	rand.Read(ss.nonce[:])
	var payload [1 + 8 + 16]byte
	payload[0] = 1
	binary.BigEndian.PutUint64(payload[1:9], uint64(ss.expires.Unix()))
	copy(payload[9:], ss.nonce[:])
	enc := base64.RawURLEncoding
	return ss, enc.EncodeToString(payload[:]) + "." + enc.EncodeToString(s.mac("session", payload[:]))
}

// verify returns the session of a cookie value, if it is genuine, current
// and not revoked.
func (s *sessions) verify(v string) (*session, bool) {
	p, m, ok := strings.Cut(v, ".")
	if !ok || len(v) > 200 {
		return nil, false
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	sig, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || len(payload) != 25 || payload[0] != 1 {
		return nil, false
	}
	if !hmac.Equal(sig, s.mac("session", payload)) {
		return nil, false
	}
	ss := &session{expires: time.Unix(int64(binary.BigEndian.Uint64(payload[1:9])), 0)}
	copy(ss.nonce[:], payload[9:])
	if !s.now().Before(ss.expires) {
		return nil, false
	}
	s.mu.Lock()
	_, gone := s.revoked[ss.nonce]
	s.mu.Unlock()
	return ss, !gone
}

// id names a session in the database's revocations: derived from its
// nonce with the key, so that the table holds nothing a cookie could be
// rebuilt from.
func (s *sessions) id(ss *session) string {
	return hex.EncodeToString(s.mac("revocation", ss.nonce[:])[:16])
}

// csrf returns the CSRF token of a session.
func (s *sessions) csrf(ss *session) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", ss.nonce[:]))
}

// checkCSRF reports whether tok is the CSRF token of ss, in constant time.
func (s *sessions) checkCSRF(ss *session, tok string) bool {
	return tok != "" && hmac.Equal([]byte(tok), []byte(s.csrf(ss)))
}

// revoke ends a session on this process (the caller records it in the
// database too), and forgets revocations that have expired anyway.
func (s *sessions) revoke(ss *session) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, exp := range s.revoked {
		if !now.Before(exp) {
			delete(s.revoked, n)
		}
	}
	s.revoked[ss.nonce] = ss.expires
}

func (s *sessions) mac(purpose string, data []byte) []byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(data)
	return m.Sum(nil)
}

// tokenMatches compares a presented token with the configured one in
// constant time (hashing both first, so that the length does not leak).
func tokenMatches(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// errCrossOrigin is the answer to a state-changing request from another
// origin.
var errCrossOrigin = errors.New("cross-origin request refused: use the page served by corral itself")
