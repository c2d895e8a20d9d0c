package proc

// oomKills returns how many processes of the run's tree the kernel's OOM
// killer killed, when the tree has a cgroup leaf that counts them; it is
// read before the leaf is removed.
func oomKills(c child) int {
	switch c := c.(type) {
	case *linuxChild:
		if t, ok := c.tree.(*cgroupTree); ok && t.leaf != nil {
			return t.leaf.OOMKills()
		}
	case *initChild:
		if c.leaf != nil {
			return c.leaf.OOMKills()
		}
	}
	return 0
}
