//go:build !mutation_redact

package redact

// pemBodyBytes are the bytes a PEM body may hold: base64, line breaks, the
// headers of encrypted keys (Proc-Type: 4,ENCRYPTED) and of PGP armor,
// and the backslash of escaped line breaks in JSON strings.
const pemBodyBytes = letters + digits + "+/=:,.-_ \t\r\n\\"
