package redact

// SecretName reports whether a variable, key, option or header of this
// name holds a secret. The name's last word decides (words split at
// punctuation and at camelCase): it ends with password, passwd,
// passphrase, secret, token, credential(s), apikey, privatekey,
// accesskey, secretkey, accountkey or authorization, or it is pass, auth,
// sig or cookie, or pwd after another word (MYSQL_PWD, not PWD), or it is
// key or signature after api, private, access, secret, account, signing,
// encryption, master, client, shared, auth, session, storage, ssh,
// deploy, service, license, webhook or admin.
//
// So GITHUB_TOKEN, apiKey, x-api-key, AWS_SECRET_ACCESS_KEY, DB_PASS and
// client_secret are secret; input_tokens, session_id, TOKEN_FILE, PWD
// and key_count are not.
func SecretName(name string) bool { ensureTables(); return secretName(name) }

// nameRule is a last word that makes a name secret.
type nameRule struct {
	word string
	// how the last word must relate to word
	how nameHow
}

type nameHow uint8

const (
	endsWith    nameHow = iota // the last word ends with word (pgpassword)
	is                         // the last word is word
	afterWord                  // it is word, and a word comes before it (MYSQL_PWD)
	afterQualif                // it is word, after one of keyQualifiers
)

// nameRules holds the rules by the last byte of their word (made by
// makeTables).
var nameRules [256][]nameRule

func makeNameRules() (m [256][]nameRule) {
	for _, r := range []nameRule{
		{"password", endsWith}, {"passwd", endsWith}, {"passphrase", endsWith}, {"secret", endsWith},
		{"token", endsWith}, {"credential", endsWith}, {"credentials", endsWith}, {"apikey", endsWith},
		{"privatekey", endsWith}, {"accesskey", endsWith}, {"secretkey", endsWith},
		{"accountkey", endsWith}, {"authorization", endsWith},
		{"pass", is}, {"auth", is}, {"sig", is}, {"cookie", is},
		{"pwd", afterWord},
		{"key", afterQualif}, {"signature", afterQualif},
	} {
		last := r.word[len(r.word)-1]
		m[last] = append(m[last], r)
		m[last-'a'+'A'] = append(m[last-'a'+'A'], r)
	}
	return m
}

var keyQualifiers = []string{"api", "private", "access", "secret", "account", "signing", "encryption",
	"master", "client", "shared", "auth", "session", "storage", "ssh", "deploy", "service",
	"license", "webhook", "admin"}

func secretName[T string | []byte](name T) bool {
	ws, we := lastWord(name, len(name))
	if ws == we {
		return false
	}
	w := name[ws:we]
	for _, r := range nameRules[w[len(w)-1]] {
		switch r.how {
		case endsWith:
			if len(w) >= len(r.word) && equalFold(w[len(w)-len(r.word):], r.word) {
				return true
			}
		case is:
			if equalFold(w, r.word) {
				return true
			}
		case afterWord:
			if equalFold(w, r.word) {
				ps, pe := lastWord(name, ws)
				return ps < pe
			}
		case afterQualif:
			if equalFold(w, r.word) {
				ps, pe := lastWord(name, ws)
				for _, q := range keyQualifiers {
					if equalFold(name[ps:pe], q) {
						return true
					}
				}
			}
		}
	}
	return false
}

// headerName reports whether a name's value runs to the end of its line
// (Authorization: Basic ..., Cookie: a=1; b=2).
func headerName(name []byte) bool {
	ws, we := lastWord(name, len(name))
	w := name[ws:we]
	return equalFold(w, "authorization") || equalFold(w, "cookie")
}

// lastWord returns the bounds of the last word of s[:end]: letters and
// digits, split before an upper-case letter that follows a lower-case one
// (apiKey) or that starts a capitalised word after an acronym (HTTPToken).
func lastWord[T string | []byte](s T, end int) (int, int) {
	e := end
	for e > 0 && !alnum[s[e-1]] {
		e--
	}
	b := e
	for b > 0 && alnum[s[b-1]] {
		c := s[b-1]
		if isUpper(c) && b >= 2 && (isLower(s[b-2]) || isUpper(s[b-2]) && b < e && isLower(s[b])) {
			b--
			break
		}
		b--
	}
	return b, e
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// equalFold compares ASCII text with a lower-case word.
func equalFold[T string | []byte](a T, lower string) bool {
	if len(a) != len(lower) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
