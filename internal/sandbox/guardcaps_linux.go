//go:build !mutation_guardcaps

package sandbox

// guardCapabilityMask is GuardCapabilities as a capability set.
func guardCapabilityMask() uint64 {
	var m uint64
	for _, name := range GuardCapabilities {
		m |= 1 << capNumbers[name]
	}
	return m
}
