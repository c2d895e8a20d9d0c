package proc

import "strings"

// Windows environment names are case-insensitive.
func envKey(k string) string { return strings.ToUpper(k) }
