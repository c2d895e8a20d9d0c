package redact

import (
	"strings"
	"testing"
)

func TestRedactorHidesSecrets(t *testing.T) {
	r := New([]string{"GITHUB_TOKEN=s3cr3tvalue42", "HOME=/root", "DB_PASSWORD=hunter2hunter2", "SHORT_TOKEN=abc"})
	cases := map[string]string{
		"echo s3cr3tvalue42": "s3cr3tvalue42",
		"git clone https://bob:pa55word@example.com/r.git": "pa55word",
		"curl -H 'Authorization: Bearer abcdefghijk123' x": "abcdefghijk123",
		"export API_KEY=zzzzyyyyxxxx":                      "zzzzyyyyxxxx",
		"mysql --password=topsecret1 db":                   "topsecret1",
		"psql -c x --db-password 'my pass'":                "my pass",
		"echo ghp_abcdefghijklmnopqrstuvwxyz0123456789":    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP aws s3 ls": "AKIAABCDEFGHIJKLMNOP",
		"echo sk-ant-api03-abcdefghijklmnopqrstuvwxyz":     "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
		"mysql -u root -phunter2hunter2":                   "hunter2hunter2",
	}
	for in, secret := range cases {
		out := r.String(in)
		if strings.Contains(out, secret) {
			t.Errorf("%q -> %q still shows %q", in, out, secret)
		}
		if !strings.Contains(out, Mask) {
			t.Errorf("%q -> %q has no mask", in, out)
		}
	}
	for _, keep := range []string{"ls -la /root", "echo abc", "go test ./...", "git push origin main"} {
		if out := r.String(keep); out != keep {
			t.Errorf("%q changed to %q", keep, out)
		}
	}
}
