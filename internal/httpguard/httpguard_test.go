package httpguard

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckHostRefusesNamesNotServed(t *testing.T) {
	g := &Guard{PublicHosts: []string{"corral.example.com"}}
	for host, ok := range map[string]bool{
		"127.0.0.1:7070": true, "localhost:7070": true, "LOCALHOST": true, "app.localhost:1": true, "[::1]:7070": true,
		"10.1.2.3": true, "[fe80::1%eth0]:7070": true, "corral.example.com:443": true, "Corral.Example.com.": true,
		"evil.example:7070": false, "localhost.evil.example": false, "corral.example.com.evil.example": false, "": false,
	} {
		r := httptest.NewRequest("GET", "/healthz", nil)
		r.Host = host
		err := g.CheckHost(r)
		if (err == nil) != ok || err != nil && !errors.Is(err, ErrHost) {
			t.Errorf("Host %q: err %v, want ok %v", host, err, ok)
		}
	}
}

func TestCheckWriteRefusesWhatABrowserSendsCrossSite(t *testing.T) {
	g := &Guard{}
	for _, tc := range []struct {
		method, ct, site, origin string
		want                     error
	}{
		{"POST", "application/json", "", "", nil},
		{"POST", "application/json; charset=utf-8", "same-origin", "", nil},
		{"PATCH", "application/merge-patch+json", "", "", nil},
		{"GET", "", "cross-site", "", nil},
		{"POST", "", "", "", ErrContentType},
		{"POST", "text/plain", "", "", ErrContentType},
		{"POST", "application/x-www-form-urlencoded", "", "", ErrContentType},
		{"DELETE", "", "", "", ErrContentType},
		{"POST", "application/json", "cross-site", "", ErrCrossOrigin},
		{"POST", "application/json", "same-site", "", ErrCrossOrigin},
		{"POST", "application/json", "", "http://localhost:9999", ErrCrossOrigin},
		{"POST", "application/json", "", "http://127.0.0.1:7070", nil},
	} {
		r := httptest.NewRequest(tc.method, "http://127.0.0.1:7070/v1/agents", strings.NewReader("{}"))
		r.Header.Set("Content-Type", tc.ct)
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		err := g.CheckWrite(r)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s %q site %q origin %q: err %v, want %v", tc.method, tc.ct, tc.site, tc.origin, err, tc.want)
		}
	}
}

func TestForwardedBelievesOnlyTrustedProxies(t *testing.T) {
	proxies, err := ParseProxies([]string{"10.0.0.0/8", "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	g := &Guard{TrustedProxies: proxies}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.1:4000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9, 198.51.100.7, 10.1.1.1")
	r.Header.Set("X-Forwarded-Proto", "https")
	f := g.Forwarded(r)
	if ClientAddr(f) != "198.51.100.7" || !IsTLS(f) {
		t.Fatalf("through a trusted proxy: client %q, TLS %v; want the last untrusted hop and TLS", ClientAddr(f), IsTLS(f))
	}
	r.RemoteAddr = "203.0.113.50:4000"
	f = g.Forwarded(r)
	if ClientAddr(f) != "203.0.113.50" || IsTLS(f) {
		t.Fatalf("from an untrusted peer: client %q, TLS %v; its headers must be ignored", ClientAddr(f), IsTLS(f))
	}
	if _, err := ParseProxies([]string{"proxy.example"}); err == nil {
		t.Fatal("a name was accepted as a trusted proxy")
	}
}
