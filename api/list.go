package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// writeTimeout bounds each write of a listing: a client that stops
// reading fails its request after it, releasing the page it held.
const writeTimeout = 20 * time.Second

// writeList answers 200 with the JSON object {"<name>": [items],
// "next_cursor": next}, written an item at a time through a small buffer,
// each write under writeTimeout; each item goes through public, as every
// answer does.
//
// The write deadline stays set when the client stopped reading (the
// connection is then closed); after a complete flush it is lifted, for
// the client's next request on the connection.
func writeList[T any](w http.ResponseWriter, name string, items []T, next string) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	flush := func(force bool) bool {
		if b.Len() < 32<<10 && !force {
			return true
		}
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := w.Write(b.Bytes())
		b.Reset()
		return err == nil
	}
	b.WriteString(`{"` + name + `":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		enc.Encode(public(it)) // its newline is JSON whitespace
		if !flush(false) {
			return
		}
	}
	b.WriteString(`],"next_cursor":` + strconv.Quote(next) + "}\n")
	if flush(true) && rc.Flush() == nil {
		rc.SetWriteDeadline(time.Time{})
	}
}
