package sandbox

import "golang.org/x/sys/unix"

// ConfineLandlockOnly restricts the calling thread with p's Landlock
// ruleset alone (and no_new_privs, which Landlock requires): no
// namespace, no read-only mount, no seccomp, so that a test sees what
// Landlock holds by itself. The caller locks its goroutine to the thread
// and lets the thread end with it.
func ConfineLandlockOnly(p *Policy) error {
	abi, err := landlockVersion()
	if err != nil {
		return err
	}
	rs, err := landlockRuleset(p, abi)
	if err != nil {
		return err
	}
	defer unix.Close(rs)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return landlockEnforce(rs)
}

// GuardAliases returns the paths at which path, lying in the mount whose
// id is at, shows in the mount table text (mountinfo's format).
func GuardAliases(text string, at uint64, path string) []string {
	var out []string
	for _, a := range aliasesOf(parseMounts(text), at, path) {
		out = append(out, a.path)
	}
	return out
}
