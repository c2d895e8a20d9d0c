//go:build mutation_redact

// Mutant: A private key is masked only on its BEGIN line; its body is kept, as a line-by-line redactor does.
// Guarantee: 5. secrets are never logged
// Caught: ./internal/redact TestRedactTable
// Caught: ./service TestSecretsAreRedactedFromLogsAndRecords
// Caught: ./headless TestTranscriptIsWrittenBoundedAndRedacted

package redact

// pemBodyBytes, mutated for the CI's mutation step (.ci/mutations): a private
// key block ends at its first line break, so only the BEGIN line is
// masked and the body is kept, as a line-by-line redactor does. The
// redaction tests of this package, the service's logs and headless
// transcripts must catch it. Built only with the tag mutation_redact.
const pemBodyBytes = letters + digits + "+/=:,.-_ \t"
