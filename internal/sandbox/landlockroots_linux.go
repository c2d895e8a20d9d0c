//go:build !mutation_landlock

package sandbox

// landlockWritable returns the directories beneath which Landlock grants
// a command every right: the writable roots and /tmp (the private one, in
// the view). Nothing else of the file system is writable under Landlock,
// whatever the mounts.
func landlockWritable(p *Policy) []string {
	return append(p.WritableRoots(), "/tmp")
}
