package corral

import "fmt"

// EnvMode says which part of the supervisor's environment a command sees.
// Variables given explicitly with a run are always added last and win.
type EnvMode string

const (
	// EnvInherit (the zero value) passes the supervisor's whole environment.
	EnvInherit EnvMode = ""

	// EnvAllowlist passes only the variables named in the allowlist. Names
	// may end in "*" to match a prefix ("LC_*").
	EnvAllowlist EnvMode = "allowlist"

	// EnvClean passes nothing but the explicitly given variables. The
	// command's PATH is then empty unless given; the program itself is still
	// found through the supervisor's PATH.
	EnvClean EnvMode = "clean"
)

// String returns the mode's name; the zero value prints as "inherit".
func (m EnvMode) String() string {
	if m == EnvInherit {
		return "inherit"
	}
	return string(m)
}

// ParseEnvMode parses "inherit", "allowlist" or "clean".
func ParseEnvMode(s string) (EnvMode, error) {
	switch s {
	case "inherit", "":
		return EnvInherit, nil
	case "allowlist":
		return EnvAllowlist, nil
	case "clean":
		return EnvClean, nil
	}
	return "", fmt.Errorf("unknown environment mode %q: want inherit, allowlist or clean", s)
}
