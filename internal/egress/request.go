package egress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// request is the head of a client's HTTP/1.x request: its request line
// and its header fields, in the order sent.
type request struct {
	method, target, proto string
	header                []field
}

// field is one header field line: its name as sent, its value without
// the white space around it.
type field struct{ name, value string }

// statusError is a request the proxy refuses: the status it answers and
// the text of the answer's body.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

func badRequest(format string, a ...any) *statusError {
	return &statusError{400, "corral egress proxy: " + fmt.Sprintf(format, a...) + "\n"}
}

// errLineTooLong is a line longer than what was left of its limit.
var errLineTooLong = errors.New("line too long")

// maxChunkLine bounds a chunk's size line, extensions included.
const maxChunkLine = 4 << 10

// readRequest reads a request head from br, maxHeaderBytes at most (its
// lines and their ends), and leaves br at the first byte after it. It
// accepts lines ended by LF alone and skips empty lines before the
// request line (RFC 9112 §2.2). A head the proxy refuses is a
// *statusError: 431 for one over the limit, 408 for one cut by the read
// deadline after it began, 505 for an HTTP version other than 1.0 and
// 1.1, 400 for the rest (a folded line, a name that is not a token, a
// control character). Any other error is the client's connection's (it
// closed, or the deadline passed before the head began): there is no one
// to answer.
func readRequest(br *bufio.Reader) (*request, error) {
	left := maxHeaderBytes
	begun := false
	next := func() (string, error) {
		line, err := readLine(br, left)
		if len(line) > 0 {
			begun = true
		}
		switch {
		case errors.Is(err, errLineTooLong):
			return "", &statusError{431, fmt.Sprintf("corral egress proxy: the request head is over %d KiB\n", maxHeaderBytes>>10)}
		case err != nil && begun && errors.Is(err, os.ErrDeadlineExceeded):
			return "", &statusError{408, "corral egress proxy: the request head did not arrive in time\n"}
		case err != nil:
			return "", err
		}
		left -= len(line)
		return trimEOL(line), nil
	}
	var line string
	for line == "" {
		var err error
		if line, err = next(); err != nil {
			return nil, err
		}
	}
	req, err := parseRequestLine(line)
	if err != nil {
		return nil, err
	}
	for {
		line, err := next()
		if err != nil {
			return nil, err
		}
		if line == "" {
			return req, nil
		}
		f, err := parseField(line)
		if err != nil {
			return nil, err
		}
		req.header = append(req.header, f)
	}
}

// readLine returns the next line of br with its end (LF), at most limit
// bytes; a longer one is errLineTooLong.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > limit {
			return append(line, frag...), errLineTooLong
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func trimEOL(line []byte) string {
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return string(line)
}

// parseRequestLine parses METHOD SP TARGET SP HTTP/1.x.
func parseRequestLine(line string) (*request, error) {
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !isToken(method) || target == "" || !visible(target) {
		return nil, badRequest("malformed request line %q", line)
	}
	if proto != "HTTP/1.1" && proto != "HTTP/1.0" {
		if strings.HasPrefix(proto, "HTTP/") {
			return nil, &statusError{505, fmt.Sprintf("corral egress proxy: HTTP version %q not supported (HTTP/1.1 is)\n", proto)}
		}
		return nil, badRequest("malformed request line %q", line)
	}
	return &request{method: method, target: target, proto: proto}, nil
}

// parseField parses NAME ":" VALUE, refusing a folded line (obs-fold)
// and white space before the colon (RFC 9112 §5).
func parseField(line string) (field, error) {
	name, value, ok := strings.Cut(line, ":")
	if !ok || !isToken(name) {
		return field{}, badRequest("malformed header line %q", line)
	}
	value = strings.Trim(value, " \t")
	if !visibleOrBlank(value) {
		return field{}, badRequest("control character in header %s", name)
	}
	return field{name, value}, nil
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// visible reports whether s has no space and no control character.
func visible(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// get returns the values of the fields named name (any case), each split
// at its commas and trimmed, empty elements left out.
func (r *request) get(name string) []string {
	var vals []string
	for _, f := range r.header {
		if strings.EqualFold(f.name, name) {
			for v := range strings.SplitSeq(f.value, ",") {
				if v = strings.Trim(v, " \t"); v != "" {
					vals = append(vals, v)
				}
			}
		}
	}
	return vals
}

// chunked is the body length bodyLength returns for a chunked body.
const chunked = -1

// bodyLength returns the length of the request's body by its framing
// (RFC 9112 §6.3): Content-Length, chunked, or 0 when it has neither. It
// refuses, so that the proxy and the upstream cannot read different
// bodies: both fields together, a Transfer-Encoding other than chunked
// alone (501), one in an HTTP/1.0 request, and a Content-Length that is
// not one decimal number (repeated, it must repeat the same).
func (r *request) bodyLength() (int64, *statusError) {
	te, cl := r.get("Transfer-Encoding"), r.get("Content-Length")
	switch {
	case len(te) > 0 && len(cl) > 0:
		return 0, badRequest("both Transfer-Encoding and Content-Length")
	case len(te) > 0 && r.proto == "HTTP/1.0":
		return 0, badRequest("Transfer-Encoding in an HTTP/1.0 request")
	case len(te) == 1 && strings.EqualFold(te[0], "chunked"):
		return chunked, nil
	case len(te) > 0:
		return 0, &statusError{501, fmt.Sprintf("corral egress proxy: Transfer-Encoding %q not supported (chunked is)\n", strings.Join(te, ", "))}
	case len(cl) == 0:
		return 0, nil
	}
	for _, v := range cl {
		if v != cl[0] {
			return 0, badRequest("Content-Length %q", strings.Join(cl, ", "))
		}
	}
	n, err := strconv.ParseInt(cl[0], 10, 64)
	if err != nil || strings.TrimLeft(cl[0], "0123456789") != "" {
		return 0, badRequest("Content-Length %q", cl[0])
	}
	return n, nil
}

// hopByHop are the fields that concern one connection, not the request
// (RFC 9110 §7.6.1), with Proxy-Authorization, which is the proxy's.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "TE", "Trailer", "Upgrade"}

// upstreamHead returns the head that the proxy sends upstream for the
// request: its request line in origin form (path), Host set to authority
// (the URI's host, whatever Host the client sent), the client's fields but
// the hop-by-hop ones and those its Connection names, its framing written
// once (length: Content-Length, or chunked) and Connection: close.
func (r *request) upstreamHead(authority, path string, length int64) []byte {
	drop := map[string]bool{"host": true, "content-length": true, "transfer-encoding": true}
	for _, name := range hopByHop {
		drop[strings.ToLower(name)] = true
	}
	for _, name := range r.get("Connection") {
		drop[strings.ToLower(name)] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\r\nHost: %s\r\n", r.method, path, r.proto, authority)
	for _, f := range r.header {
		if !drop[strings.ToLower(f.name)] {
			fmt.Fprintf(&b, "%s: %s\r\n", f.name, f.value)
		}
	}
	switch {
	case length == chunked:
		b.WriteString("Transfer-Encoding: chunked\r\n")
	case length > 0 || len(r.get("Content-Length")) > 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	}
	b.WriteString("Connection: close\r\n\r\n")
	return []byte(b.String())
}

// copyBody relays a request body of length bytes (or chunked) from br to
// w, and reads nothing past its end.
func copyBody(w io.Writer, br *bufio.Reader, length int64) error {
	if length == chunked {
		return copyChunked(w, br)
	}
	_, err := io.CopyN(w, br, length)
	return err
}

// copyChunked relays a chunked body from br to w as it is, each chunk as
// it arrives, parsing only its framing (RFC 9112 §7.1) to find its end:
// size lines of hex digits and extensions ended by CRLF, each chunk's data
// followed by CRLF, the last chunk, the trailer fields (maxHeaderBytes in
// all) and the empty line. It reads nothing past the end, and stops at
// the first byte that breaks the framing, before relaying it.
func copyChunked(w io.Writer, br *bufio.Reader) error {
	for {
		line, err := readLine(br, maxChunkLine)
		if err != nil {
			return fmt.Errorf("chunk size: %w", err)
		}
		size, err := chunkSize(line)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if size == 0 {
			break
		}
		if _, err := io.CopyN(w, br, size); err != nil {
			return err
		}
		end := make([]byte, 2)
		if _, err := io.ReadFull(br, end); err != nil {
			return err
		}
		if string(end) != "\r\n" {
			return errors.New("chunk data not followed by CRLF")
		}
		if _, err := w.Write(end); err != nil {
			return err
		}
	}
	for left := maxHeaderBytes; ; {
		line, err := readLine(br, left)
		if err != nil {
			return fmt.Errorf("trailer: %w", err)
		}
		left -= len(line)
		if !crlf(line) {
			return errors.New("trailer line not ended by CRLF")
		}
		if len(line) > 2 {
			if _, err := parseField(string(line[:len(line)-2])); err != nil {
				return err
			}
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if len(line) == 2 {
			return nil
		}
	}
}

func crlf(line []byte) bool { return bytes.HasSuffix(line, []byte("\r\n")) }

// chunkSize parses a chunk's size line: hex digits, then nothing or
// extensions (";" after optional white space, no control character),
// then CRLF.
func chunkSize(line []byte) (int64, error) {
	if !crlf(line) {
		return 0, fmt.Errorf("chunk size line %q not ended by CRLF", line)
	}
	s := string(line[:len(line)-2])
	digits := len(s) - len(strings.TrimLeft(s, "0123456789abcdefABCDEF"))
	ext := strings.TrimLeft(s[digits:], " \t")
	if digits == 0 || digits > 15 || ext != "" && ext[0] != ';' || !visibleOrBlank(ext) {
		return 0, fmt.Errorf("malformed chunk size line %q", s)
	}
	return strconv.ParseInt(s[:digits], 16, 64)
}

// visibleOrBlank reports whether s has no control character but HTAB.
func visibleOrBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
