package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// fence returns a random id that does not occur in s.
func fence(s string) string {
	for {
		var raw [6]byte
		rand.Read(raw[:])
		if id := hex.EncodeToString(raw[:]); !strings.Contains(s, id) {
			return id
		}
	}
}
