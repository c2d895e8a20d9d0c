// Package webhook signs the deliveries of corral's task service to its
// webhooks, and checks a delivery's signature as a receiver does: the
// Corral-Signature header, "t=UNIX_SECONDS,v1=HEX", HEX being
// HMAC-SHA256(secret, "t.body"), as Stripe signs its webhooks
// (docs/webhooks.md). It lives apart from the root package, whose
// vocabulary every corral program links: the cryptography it links (30
// packages of the standard library) would be paid at every start of
// corral, which never signs anything.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Sign returns the Corral-Signature header of a delivery of body at t:
// "t=UNIX_SECONDS,v1=HEX", HEX being HMAC-SHA256(secret, "t.body"), as
// Stripe signs its webhooks.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + signature(secret, ts, body)
}

func signature(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret+signMutant))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a Corral-Signature header of body against secret,
// and that it is no older than tolerance at now (zero: any age): what a
// receiver does.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return errors.New("signature header malformed: want t=UNIX_SECONDS,v1=HEX")
	}
	if !hmac.Equal([]byte(sig), []byte(signature(secret, ts, body))) {
		return errors.New("signature does not match")
	}
	if tolerance > 0 && now.Sub(time.Unix(sec, 0)).Abs() > tolerance {
		return errors.New("signature too old (a replay?)")
	}
	return nil
}
