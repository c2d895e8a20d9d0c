//go:build mutation_prose

// Mutant: Any word after a secret-looking name and a colon is masked, as before the colon needed an assignment's shape.
// Guarantee: 5. secrets are never logged, and ordinary output is kept
// Caught: ./internal/redact TestOrdinaryOutputPassesUnchanged

package redact

// colonValue, mutated for the CI's mutation step (.ci/mutations): every
// name: value is an assignment, wherever the name stands and whatever
// follows, so that "cat: /data/token: No such file or directory" loses
// its "No". Built only with the tag mutation_prose.
func colonValue(b []byte, j, v int, eof, header bool) match {
	return value(b, v, eof, false, header)
}
