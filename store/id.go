package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

var idMu sync.Mutex
var idLast uint64

// NewID returns a new record id: 12 hex digits of milliseconds since the
// epoch (strictly increasing within a process) and 8 random hex digits, so
// ids sort by creation time and never collide across workers in practice.
func NewID(now time.Time) string {
	idMu.Lock()
	ms := uint64(now.UnixMilli())
	if ms <= idLast {
		ms = idLast + 1
	}
	idLast = ms
	idMu.Unlock()
	var b [10]byte
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], ms)
	copy(b[:6], t[2:])
	rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}
