package redact

import (
	"strings"
	"testing"
)

func TestRedactHidesKnownValuesAndCredentialShapes(t *testing.T) {
	r := New("hunter2-very-secret", "abc")
	cases := map[string]string{
		"pw is hunter2-very-secret ok":              "hunter2-very-secret",
		"key sk-ant-api03-AAAABBBBCCCCDDDD end":     "sk-ant-api03",
		"GITHUB ghp_abcdefghijklmnopqrstuvwxyz0123": "ghp_abcdefghij",
		"Authorization: Bearer abcdef0123456789xyz": "abcdef0123456789xyz",
		`{"password": "s3cr3tpass"}`:                "s3cr3tpass",
		"AWS AKIAABCDEFGHIJKLMNOP":                  "AKIAABCDEFGHIJKLMNOP",
	}
	for in, secret := range cases {
		out := r.String(in)
		if strings.Contains(out, secret) || !strings.Contains(out, Mask) {
			t.Errorf("%q -> %q still shows %q", in, out, secret)
		}
	}
	if got := r.String("abc is short and plain text stays"); got != "abc is short and plain text stays" {
		t.Errorf("plain text changed: %q", got)
	}
}

func TestSecretEnvPicksSecretLookingNames(t *testing.T) {
	got := SecretEnv(map[string]string{"API_TOKEN": "t0ken-value", "HOME": "/root", "db_password": "pw123456"})
	if len(got) != 2 {
		t.Fatalf("got %v", got)
	}
}
