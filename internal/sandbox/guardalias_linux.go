//go:build !mutation_guardalias

package sandbox

import "slices"

// aliasesOf returns where the file system path of the mount at (its id)
// shows path; path lies in that mount.
func aliasesOf(ms []mountEntry, at uint64, path string) []alias {
	i := slices.IndexFunc(ms, func(m mountEntry) bool { return m.id == at })
	if i < 0 || !within(path, ms[i].point) {
		return nil
	}
	fsPath := joinRel(ms[i].root, ms[i].point, path)
	var out []alias
	for _, m := range ms {
		if m.dev != ms[i].dev {
			continue
		}
		switch {
		case within(fsPath, m.root):
			out = append(out, alias{path: joinRel(m.point, m.root, fsPath), mount: m.id})
		case within(m.root, fsPath):
			out = append(out, alias{path: m.point, mount: m.id, whole: true})
		}
	}
	return out
}
