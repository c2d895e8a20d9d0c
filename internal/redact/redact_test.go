package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// A private key for the tests (generated for them, used nowhere).
const rsaKey = `-----BEGIN RSA PRIVATE KEY-----
MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu
KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm
o3qGy0t6z09AIJtH+5OeRV1be+N4cDYJKffGzDa88vQENZiRm0GRq6a+HPGQMd2k
TQIhAKMSvzIBnni7ot/OSie2TmJLY4SwTQAevXysE2RbFDYdAiEBCUEaRQnMnbp7
9mxDXDf6AU0cN/RPBjb9qSHDcWZHGzUCIG2Es59z8ugGrDY+pxLQnwfotadxd+Uy
v/Ow5T0q5gIJAiEAyS4RaI9YG8EWx/2w0T67ZUVAw8eOMB6BIUg0Xcu+3okCIBOs
/5OiPgoTdSy7bcF9IGpSE8ZgGKzgYQVZeN97YE00
-----END RSA PRIVATE KEY-----`

const (
	ghToken   = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	antKey    = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-ABCDEFGH"
	openaiKey = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
	awsID     = "AKIAIOSFODNN7EXAMPLE"
	awsTempID = "ASIAIOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	gcpKey    = "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234"
	azSecret  = "abc8Q~abcdefghijklmnopqrstuvwxyz0123456"
	jwtToken  = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

var redactCases = []struct {
	name, in, want string
}{
	// Registered values, wherever they are.
	{"value", "pw hunter2hunter2 ok", "pw [REDACTED] ok"},
	{"value inside a word", "xxhunter2hunter2yy", "xx[REDACTED]yy"},
	{"value twice, touching", "hunter2hunter2hunter2hunter2", "[REDACTED]"},
	{"service token", "curl -d x http://h/?t=service-token-123456", "curl -d x http://h/?t=[REDACTED]"},

	// Private keys, the body included.
	{"pem lines", "key:\n" + rsaKey + "\nafter", "key:\n[REDACTED]\nafter"},
	{"pem in json", `{"private_key": "` + strings.ReplaceAll(rsaKey, "\n", `\n`) + `\n", "x": 1}`, `{"private_key": "[REDACTED]", "x": 1}`},
	{"pem in an escaped json string", `{"text":"k: \"` + strings.ReplaceAll(rsaKey, "\n", `\\n`) + `\\n\" ok"}`, `{"text":"k: \"[REDACTED]\\n\" ok"}`},
	{"pem cut short in json", `{"out":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nBG5vbmUAAAAE"}`, `{"out":"[REDACTED]"}`},
	{"pem cut short before an escaped quote", `{"out":"x=\"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\\\"}"}`, `{"out":"x=\"[REDACTED]\\\"}"}`},
	{"pem encrypted", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,8A9B\n\nAbCd==\n-----END RSA PRIVATE KEY-----\n", "[REDACTED]\n"},
	{"pem pkcs8 and pgp", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIC\n-----END ENCRYPTED PRIVATE KEY-----\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\nok", "[REDACTED]\n[REDACTED]\nok"},
	{"pem certificate kept", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
	{"pem public key kept", "-----BEGIN PUBLIC KEY-----\nMFww\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMFww\n-----END PUBLIC KEY-----"},

	// AWS.
	{"aws key id", "id " + awsID + " end", "id [REDACTED] end"},
	{"aws temporary key id", "id " + awsTempID + ",", "id [REDACTED],"},
	{"aws secret next to its id", awsID + "," + awsSecret + "\n", "[REDACTED],[REDACTED]\n"},
	{"aws secret by name", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = [REDACTED]"},
	{"aws sts json", `{"AccessKeyId": "` + awsTempID + `", "SecretAccessKey": "` + awsSecret + `", "SessionToken": "FwoGZXIvYXdzEB"}`, `{"AccessKeyId": "[REDACTED]", "SecretAccessKey": "[REDACTED]", "SessionToken": "[REDACTED]"}`},
	{"aws id longer word kept", "AKIAIOSFODNN7EXAMPLEX and AKIAshort", "AKIAIOSFODNN7EXAMPLEX and AKIAshort"},
	{"40 bytes far from an id kept", awsSecret, awsSecret},

	// GCP.
	{"gcp api key", "key=" + gcpKey + "&x", "key=[REDACTED]&x"},
	{"gcp api key bare", "use " + gcpKey + " now", "use [REDACTED] now"},
	{"gcp service account", `{"type": "service_account", "private_key_id": "abc123", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n", "client_email": "a@b.iam.gserviceaccount.com"}`,
		`{"type": "service_account", "private_key_id": "abc123", "private_key": "[REDACTED]", "client_email": "a@b.iam.gserviceaccount.com"}`},
	{"gcp oauth", "GOCSPX-abcdefghijklmnopqrstuvwx ya29.a0AfH6SMBabcdefghijklmnop", "[REDACTED] [REDACTED]"},

	// Azure.
	{"azure connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc+def/ghi==;EndpointSuffix=core.windows.net", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED];EndpointSuffix=core.windows.net"},
	{"azure sas", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=AbC%2Bd%3D&se=2030", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=[REDACTED]&se=2030"},
	{"azure shared access key", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=abcDEF123=", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=[REDACTED]"},
	{"azure client secret shape", "secret " + azSecret + " end", "secret [REDACTED] end"},
	{"azure client secret by name", "AZURE_CLIENT_SECRET=anything-at-all", "AZURE_CLIENT_SECRET=[REDACTED]"},

	// GitHub, GitLab, Slack, Stripe, Hugging Face, npm.
	{"github classic", "echo " + ghToken, "echo [REDACTED]"},
	{"github kinds", "gho_abcdefghijklmnopqrstuvwxyz0123456789 ghu_abcdefghijklmnopqrstuvwxyz0123456789 ghs_abcdefghijklmnopqrstuvwxyz0123456789 ghr_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED] [REDACTED] [REDACTED] [REDACTED]"},
	{"github fine-grained", "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcd!", "[REDACTED]!"},
	{"others", "glpat-abcdefghijklmnopqrst xoxb-1234567890-abcdefghij sk_live_abcdefghijklmnop hf_abcdefghijklmnopqrstuvwxyz01234 npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED]"},

	// Anthropic, OpenAI.
	{"anthropic", "ANTHROPIC key " + antKey + ".", "ANTHROPIC key [REDACTED]."},
	{"openai project", "k=" + openaiKey, "k=[REDACTED]"},
	{"openai legacy", "sk-abcdefghijklmnopqrstuvwxyzABCD0123456789", "[REDACTED]"},
	{"short sk kept", "task-runner sk-short ask-abcdefghijklmnopqrstuvwxyz", "task-runner sk-short ask-abcdefghijklmnopqrstuvwxyz"},
	{"jwt", "token " + jwtToken + " x", "token [REDACTED] x"},

	// Bearer tokens and headers.
	{"authorization header", "Authorization: Bearer abcdefghijk\r\nHost: x", "Authorization: [REDACTED]\r\nHost: x"},
	{"authorization basic", "curl -H 'Authorization: Basic dXNlcjpwYXNz' x", "curl -H 'Authorization: [REDACTED]' x"},
	{"bearer alone", "got bearer abcdefghij0123 back", "got bearer [REDACTED] back"},
	{"bearer in escaped json", `{"command":"curl -H \"Authorization: Bearer abc123456789\" https://x"}`, `{"command":"curl -H \"Authorization: [REDACTED]\" https://x"}`},
	{"cookie", "Cookie: sid=abc; theme=dark\nnext", "Cookie: [REDACTED]\nnext"},
	{"x-api-key", "x-api-key: abcdef123456", "x-api-key: [REDACTED]"},

	// Values by name.
	{"env assignment", "export DB_PASSWORD=hunter3 && run", "export DB_PASSWORD=[REDACTED] && run"},
	{"env quoted", `GITHUB_TOKEN="a b c" make`, `GITHUB_TOKEN="[REDACTED]" make`},
	{"yaml", "db:\n  password: s3cret\n  user: bob", "db:\n  password: [REDACTED]\n  user: bob"},
	{"json", `{"user":"bob","password":"s3\"cret","n":1}`, `{"user":"bob","password":"[REDACTED]","n":1}`},
	{"json escaped", `{"text":"{\"api_key\": \"abc123\", \"n\": 2}"}`, `{"text":"{\"api_key\": \"[REDACTED]\", \"n\": 2}"}`},
	{"json non-string kept", `{"token":null,"secret":{"a":1},"password":12}`, `{"token":null,"secret":{"a":1},"password":12}`},
	{"flag", "mysql --password topsecret1 --user x", "mysql --password [REDACTED] --user x"},
	{"flag quoted", "psql --db-password 'my pass' db", "psql --db-password '[REDACTED]' db"},
	{"flag equals", "app --token=abc123 run", "app --token=[REDACTED] run"},
	{"flag without value", "app --token --verbose", "app --token --verbose"},
	{"url", "git clone https://bob:pa55word@example.com/r.git", "git clone https://bob:[REDACTED]@example.com/r.git"},
	{"url empty user", "redis://:pa55word@cache:6379/0", "redis://:[REDACTED]@cache:6379/0"},

	// Ordinary text stays as it is.
	{"plain", "ls -la /root && go test ./... && git push origin main", "ls -la /root && go test ./... && git push origin main"},
	{"names that are not secret", "PWD=/home/x input_tokens=12 session_id=abc key_count=7 TOKEN_FILE=/run/t monkey=1", "PWD=/home/x input_tokens=12 session_id=abc key_count=7 TOKEN_FILE=/run/t monkey=1"},
	{"comparisons", "if token == other && a != b { x := y }", "if token == other && a != b { x := y }"},
	{"prose", "the bearer of this letter; a 12:30 meeting; https://example.com/a?b=c", "the bearer of this letter; a 12:30 meeting; https://example.com/a?b=c"},
}

func TestRedactTable(t *testing.T) {
	r := New("hunter2hunter2", "service-token-123456", "short")
	for _, c := range redactCases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("%s:\n in: %q\ngot: %q\nwant %q", c.name, c.in, got, c.want)
		}
		if json.Valid([]byte(c.in)) && !json.Valid([]byte(r.String(c.in))) {
			t.Errorf("%s: redaction broke JSON: %q", c.name, r.String(c.in))
		}
	}
}

// A Claude Code stream-json turn holds names like input_tokens,
// session_id and apiKeySource: none of it is a secret.
const claudeLines = `{"type":"system","subtype":"init","cwd":"/tmp/w","session_id":"9f1c2b7e-1f0a-4c47-9d43-0c3a1b2c3d4e","tools":["Bash","Read"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"default","apiKeySource":"none","output_style":"default","uuid":"1b2c"}
{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"ls -la","description":"List files"}}],"usage":{"input_tokens":4,"cache_creation_input_tokens":1520,"cache_read_input_tokens":13264,"output_tokens":1,"service_tier":"standard"}},"parent_tool_use_id":null,"session_id":"9f1c2b7e-1f0a-4c47-9d43-0c3a1b2c3d4e"}
{"type":"result","subtype":"success","is_error":false,"duration_ms":2412,"num_turns":2,"result":"Done: 3 files.","session_id":"9f1c2b7e-1f0a-4c47-9d43-0c3a1b2c3d4e","total_cost_usd":0.0123,"usage":{"input_tokens":8,"output_tokens":42},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":8,"outputTokens":42,"costUSD":0.0123}},"permission_denials":[]}
{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}
`

func TestRedactKeepsAgentStreams(t *testing.T) {
	if got := New("hunter2hunter2").String(claudeLines); got != claudeLines {
		t.Errorf("an agent stream changed:\n%s", got)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "apiKey": true, "x-api-key": true, "AWS_SECRET_ACCESS_KEY": true,
		"DB_PASS": true, "client_secret": true, "PGPASSWORD": true, "MYSQL_PWD": true,
		"SecretAccessKey": true, "HTTPToken": true, "Authorization": true, "sig": true,
		"SharedAccessSignature": true, "AccountKey": true, "passphrase": true,
		"input_tokens": false, "session_id": false, "TOKEN_FILE": false, "PWD": false,
		"key_count": false, "key": false, "monkey": false, "author": false, "signature": false,
		"apiKeySource": false, "": false, "_": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v", name, got)
		}
	}
}

func TestEnvValues(t *testing.T) {
	got := EnvValues([]string{"API_TOKEN=t0ken-value", "HOME=/root", "db_password=pw123456", "DATABASE_URL=postgres://app:dbpa55word@db/app", "NOEQUALS"})
	want := []string{"t0ken-value", "pw123456", "dbpa55word"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("EnvValues = %q, want %q", got, want)
	}
	if r := New(got...); r.String("x dbpa55word y") != "x [REDACTED] y" {
		t.Errorf("URL password not registered")
	}
}

func TestZeroRedactorHidesShapes(t *testing.T) {
	var r *Redactor
	if got := r.String("echo " + ghToken); got != "echo [REDACTED]" {
		t.Errorf("nil Redactor: %q", got)
	}
	clean := []byte("nothing to hide here")
	if got := r.Bytes(clean); &got[0] != &clean[0] {
		t.Errorf("clean text was copied")
	}
}
