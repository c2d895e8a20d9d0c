package redact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// ordinaryOutput is what tools print every day, full of secret-looking
// words followed by a colon or an equals sign that assign nothing: every
// line must come through the redactor unchanged.
var ordinaryOutput = []string{
	// ls, cat, grep, make: a path that names a secret, then the error.
	"cat: /data/token: No such file or directory",
	"cat: token: Permission denied",
	"ls: cannot access '/etc/secret': No such file or directory",
	"ls: cannot open directory '/root/.password-store': Permission denied",
	"grep: token: No such file or directory",
	"-rw------- 1 root root   64 Mar  3 12:30 token",
	"make: *** No rule to make target 'token', needed by 'all'.  Stop.",
	"make: /nonexistent/secret.mk: No such file or directory",
	"make[1]: Leaving directory '/src/auth'",
	// gcc.
	"auth.c: In function 'check_password':",
	"auth.c:2:24: error: 'token' undeclared (first use in this function)",
	"    2 | int main(void){ return token + check_password(); }",
	"b.c:1:10: fatal error: secret.h: No such file or directory",
	// go.
	"./main.go:2:19: declared and not used: token",
	"./main.go:2:52: undefined: secret",
	"./auth.go:14:9: cannot use token (variable of type string) as int value in return statement",
	"panic: secret: key not found in the vault",
	// rustc.
	"error[E0425]: cannot find value `token` in this scope",
	"2 |     let password = read_password()?;",
	"warning: unused variable: `password`",
	// tsc.
	"src/auth.ts(12,7): error TS2339: Property 'apiKey' does not exist on type 'Config'.",
	"src/login.ts:4:10 - error TS2305: Module '\"./auth\"' has no exported member 'token'.",
	// git.
	"fatal: could not read Password for 'https://github.com': terminal prompts disabled",
	"remote: Invalid username or token. Password authentication is not supported for Git operations.",
	"fatal: Authentication failed for 'https://github.com/acme/secret-tool.git/'",
	"error: pathspec 'secret.txt' did not match any file(s) known to git",
	"\tmodified:   config/secrets.yml",
	// npm, pip.
	"npm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fsecret-token",
	"npm error code E401",
	"npm error 401 Unauthorized - GET https://npm.acme.dev/auth-lib - authentication token not provided",
	"ERROR: Could not find a version that satisfies the requirement secret-token==9.9 (from versions: none)",
	"ERROR: HTTP error 401 while getting https://pypi.acme.dev/simple/auth-lib/",
	// curl -v: headers that carry no secret.
	"*   Trying 127.0.0.1:8080...",
	"> GET /v1/token HTTP/1.1",
	"> Host: localhost:8080",
	"> Accept: */*",
	"< HTTP/1.1 401 Unauthorized",
	`< WWW-Authenticate: Bearer realm="api", error="invalid_token"`,
	"< x-ratelimit-remaining-tokens: 39000",
	"< Access-Control-Allow-Headers: Authorization, Content-Type",
	// Python tracebacks: source lines that compute a secret are not one.
	"Traceback (most recent call last):",
	`  File "/app/auth.py", line 3, in load`,
	`    token = os.environ["API_TOKEN"]`,
	"    passwd = fallback_getpass(prompt, stream)",
	"    self.token: str = token",
	"KeyError: 'API_TOKEN'",
	"requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://api.acme.dev/token",
	// Shells and logs: references, keywords, punctuation.
	`export GITHUB_TOKEN=$(cat /run/secrets/gh)`,
	`echo "token: $TOKEN"`,
	"secret = None",
	"Token: No such file or directory",
	"error: authorization: basic auth failed for user bob",
	"debug1: Next authentication method: password",
	"Error from server (NotFound): secrets \"api-token\" not found",
	"token=[REDACTED] password: [REDACTED]",
}

func TestOrdinaryOutputPassesUnchanged(t *testing.T) {
	r := New("hunter2hunter2")
	for _, line := range ordinaryOutput {
		if got := r.String(line); got != line {
			t.Errorf("ordinary output changed:\n in: %q\ngot: %q", line, got)
		}
	}
	// The same as one stream, however it is cut, and line by line.
	all := strings.Join(ordinaryOutput, "\n") + "\n"
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		if got := stream(t, r, []byte(all), randomCuts(rng, len(all))); string(got) != all {
			t.Fatalf("ordinary output changed as a stream:\n%s", got)
		}
	}
	var lines []string
	l := r.Lines(func(b []byte) { lines = append(lines, string(b)) })
	for _, line := range ordinaryOutput {
		l.Line([]byte(line))
		if len(lines) == 0 || lines[len(lines)-1] != line {
			t.Fatalf("line by line: %q came back as %q", line, lines)
		}
	}
	l.Close()
}

// proseCases are secrets in the shapes that a colon assigns with: a name
// that begins a line (or a quoted string) and a value that is one word,
// or a header's.
var proseCases = []struct {
	name, in, want string
}{
	{"yaml list item", "users:\n  - password: s3cret\n", "users:\n  - password: [REDACTED]\n"},
	{"yaml with a comment", "token: abc123def   # rotated monthly\n", "token: [REDACTED]   # rotated monthly\n"},
	{"yaml quoted with spaces", "password: \"correct horse battery\"\n", "password: \"[REDACTED]\"\n"},
	{"yaml indented deep", "a:\n            client_secret: Zm9vYmFy\n", "a:\n            client_secret: [REDACTED]\n"},
	{"yaml in a json string", `{"content":"db:\n  password: s3cret\n  user: bob"}`, `{"content":"db:\n  password: [REDACTED]\n  user: bob"}`},
	{"yaml line ends a json string", `{"content":"password: s3cret"}`, `{"content":"password: [REDACTED]"}`},
	{"diff line", "+  api_key: abcdef0123456789\n-  api_key: 0123456789abcdef\n", "+  api_key: [REDACTED]\n-  api_key: [REDACTED]\n"},
	{"curl -v request header", "> Authorization: Basic dXNlcjpwYXNz\r\n> Accept: */*\r\n", "> Authorization: [REDACTED]\r\n> Accept: */*\r\n"},
	{"curl -v set-cookie", "< Set-Cookie: sid=31d4d96e407aad42; Path=/\r\n", "< Set-Cookie: [REDACTED]\r\n"},
	{"header in a quoted argument", "curl -H \"X-Api-Key: abcdef123456\" https://x", "curl -H \"X-Api-Key: [REDACTED]\" https://x"},
	{"header in a single-quoted argument", "curl -H 'X-Auth-Token: abcdef123456' https://x", "curl -H 'X-Auth-Token: [REDACTED]' https://x"},
	{"authorization inside a line", "git config http.extraheader=AUTHORIZATION: basic dXNlcjpwYXNz", "git config http.extraheader=AUTHORIZATION: [REDACTED]"},
	{"authorization in a log line", "request headers: Authorization: NTLM TlRMTVNTUAABAAAAB4IIogAAAAAAAAAAAAAAAAAAAAAGAbEdAAAADw==", "request headers: Authorization: [REDACTED]"},
	{"line start is the stream's", "secret: hunter3", "secret: [REDACTED]"},
	{"a long value", "token: " + strings.Repeat("a", 300) + " and more", "token: [REDACTED] and more"},
	{"assignment with a call kept, one without masked", "token = get_token(user)\nTOKEN=plainvalue1", "token = get_token(user)\nTOKEN=[REDACTED]"},
	{"shape after a prose colon", "cat: /data/token: " + ghToken, "cat: /data/token: [REDACTED]"},
}

func TestProseShapedSecretsAreMasked(t *testing.T) {
	r := New()
	for _, c := range proseCases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("%s:\n in: %q\ngot: %q\nwant %q", c.name, c.in, got, c.want)
		}
		for cut := 0; cut <= len(c.in); cut++ {
			if got := stream(t, r, []byte(c.in), []int{cut}); string(got) != c.want {
				t.Fatalf("%s, cut at %d:\ngot  %q\nwant %q", c.name, cut, got, c.want)
			}
		}
	}
}

// FuzzProse feeds ordinary lines with secret-looking names spliced in,
// and checks that a stream gives what the one-shot redaction gives.
func FuzzProse(f *testing.F) {
	for _, line := range ordinaryOutput {
		f.Add([]byte(line), uint64(len(line)))
	}
	for _, c := range proseCases {
		f.Add([]byte(c.in), uint64(len(c.in)))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		r := New()
		want := r.Bytes(in)
		if got := stream(t, r, in, randomCuts(rng, len(in))); !bytes.Equal(got, want) {
			t.Fatalf("stream and one-shot differ for %q:\nstream   %q\none-shot %q", in, got, want)
		}
	})
}
