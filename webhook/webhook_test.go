package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/corralrun/corral/webhook"
)

// TestWebhookSignatureIsStripesScheme: the header is t=UNIX,v1=HEX with
// HEX = HMAC-SHA256(secret, "t.body"), computed here independently, and
// the verifier refuses a changed body, another secret and an old stamp.
func TestWebhookSignatureIsStripesScheme(t *testing.T) {
	at := time.Unix(1767225600, 0)
	body := []byte(`{"event":"succeeded"}`)
	m := hmac.New(sha256.New, []byte("whsec"))
	m.Write([]byte("1767225600." + string(body)))
	want := "t=1767225600,v1=" + hex.EncodeToString(m.Sum(nil))
	if got := webhook.Sign("whsec", at, body); got != want {
		t.Fatalf("signature %q, want %q", got, want)
	}
	if err := webhook.Verify("whsec", want, body, at.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"body":   webhook.Verify("whsec", want, []byte(`{"event":"failed"}`), at, 0),
		"secret": webhook.Verify("other", want, body, at, 0),
		"old":    webhook.Verify("whsec", want, body, at.Add(time.Hour), 5*time.Minute),
		"shape":  webhook.Verify("whsec", "v1=abc", body, at, 0),
	} {
		if err == nil {
			t.Errorf("a signature with the wrong %s passed", name)
		}
	}
}
