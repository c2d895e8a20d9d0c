// Package httpguard holds the checks every request to corral serve passes
// before a handler sees it, so that a web page cannot act on the service
// from a browser, and the facts about a request (its client's address,
// whether it came over TLS) that hold behind a trusted reverse proxy.
//
//   - Host must be a loopback name (localhost, *.localhost), an IP
//     address, or one of the configured public host names: a page that
//     rebinds its own DNS name to the service's address is refused,
//     whatever else it sends.
//   - A request that changes state through the API must carry
//     Content-Type: application/json (or another JSON type), which a
//     browser sends cross-site only after a CORS preflight the service
//     never approves, and must not come from another origin
//     (Sec-Fetch-Site, else Origin, as http.CrossOriginProtection
//     decides).
//
// Guard.Forwarded believes X-Forwarded-For and X-Forwarded-Proto only from
// the addresses of TrustedProxies.
package httpguard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// Guard is the request policy of one server. Configure it before use; its
// methods are safe for concurrent use.
type Guard struct {
	// PublicHosts are the host names clients may use besides loopback
	// names and IP addresses (corral serve --public-host), without port,
	// compared case-insensitively.
	PublicHosts []string
	// TrustedProxies are the addresses of reverse proxies in front of the
	// service (corral serve --trusted-proxy): from them, the client's
	// address is taken from X-Forwarded-For and TLS from
	// X-Forwarded-Proto.
	TrustedProxies []netip.Prefix
}

// xorigin has no exemptions: it is shared by every Guard.
var xorigin = http.NewCrossOriginProtection()

// ErrHost means the request's Host is not one the service answers to.
var ErrHost = errors.New("host not served")

// ErrContentType means a state-changing API request is not JSON.
var ErrContentType = errors.New("content type not JSON")

// ErrCrossOrigin means a state-changing request came from another origin.
var ErrCrossOrigin = errors.New("cross-origin request refused")

// CheckHost refuses a request whose Host is not a loopback name, an IP
// address or a public host. The error wraps ErrHost and says what to do.
func (g *Guard) CheckHost(r *http.Request) error {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch {
	case host == "":
		return fmt.Errorf("%w: the request has no Host header", ErrHost)
	case IsLoopback(host):
		return nil
	case net.ParseIP(strings.Split(host, "%")[0]) != nil:
		return nil // a DNS-rebinding page needs a name
	}
	for _, p := range g.PublicHosts {
		if strings.EqualFold(strings.TrimSuffix(p, "."), host) {
			return nil
		}
	}
	return fmt.Errorf("%w: %q is not a name this service answers to: use localhost or an IP address, or start corral serve with --public-host %s", ErrHost, host, host)
}

// CheckWrite refuses a state-changing API request (any method but GET,
// HEAD and OPTIONS) that is not JSON or that comes from another origin.
// The error wraps ErrContentType or ErrCrossOrigin.
func (g *Guard) CheckWrite(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if !IsJSON(r.Header.Get("Content-Type")) {
		return fmt.Errorf("%w: %s %s needs \"Content-Type: application/json\" (got %q), even without a body", ErrContentType, r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	return CheckOrigin(r)
}

// CheckOrigin refuses a state-changing request that a browser sent from
// another origin: Sec-Fetch-Site other than same-origin or none, else an
// Origin whose host is not the request's Host. A request with neither
// header (not from a browser) passes. The error wraps ErrCrossOrigin.
func CheckOrigin(r *http.Request) error {
	if err := xorigin.Check(r); err != nil {
		return fmt.Errorf("%w: %v", ErrCrossOrigin, err)
	}
	return nil
}

// IsJSON reports whether a Content-Type is application/json or another
// JSON type (application/*+json).
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

type tlsKey struct{}

// Forwarded returns r as the service should see it: from a trusted proxy,
// with RemoteAddr set to the client the proxy names in X-Forwarded-For
// (the last address that is not itself a trusted proxy) and marked as
// TLS when X-Forwarded-Proto says https. Other requests are returned as
// they are; their forwarding headers are ignored.
func (g *Guard) Forwarded(r *http.Request) *http.Request {
	if len(g.TrustedProxies) == 0 || !g.trusted(r.RemoteAddr) {
		return r
	}
	client := ""
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		if h == "" {
			continue
		}
		client = h
		if !g.trusted(h) {
			break
		}
	}
	r2 := r
	if client != "" {
		if _, err := netip.ParseAddr(client); err == nil {
			r2 = r.Clone(r.Context())
			r2.RemoteAddr = net.JoinHostPort(client, "0")
		}
	}
	if strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https") {
		r2 = r2.WithContext(context.WithValue(r2.Context(), tlsKey{}, true))
	}
	return r2
}

func (g *Guard) trusted(addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil {
			return false
		}
		a = ap.Addr()
	}
	a = a.Unmap()
	return slices.ContainsFunc(g.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(a) })
}

// IsTLS reports whether r reached the service over TLS, directly or
// through a trusted proxy that said so.
func IsTLS(r *http.Request) bool {
	v, _ := r.Context().Value(tlsKey{}).(bool)
	return r.TLS != nil || v
}

// BearerToken returns the token of r's Authorization header ("Bearer
// TOKEN", the scheme in any case) and whether there was one.
func BearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// ErrorID returns a fresh id that ties an internal error's answer to the
// line of the log that holds its cause.
func ErrorID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ClientAddr returns the address of r's client, without port.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ParseProxies parses --trusted-proxy values: IP addresses or CIDR
// prefixes.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an IP address or a CIDR prefix such as 10.0.0.0/8", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
