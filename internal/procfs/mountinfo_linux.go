package procfs

import (
	"strconv"
	"strings"
)

// UnescapeMountinfo undoes the octal escapes (\040 for a space, \011,
// \012, \134 for a backslash) of a path in /proc/PID/mountinfo. A
// backslash not followed by three octal digits is kept as it is.
func UnescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
