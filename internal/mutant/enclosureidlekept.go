//go:build !mutation_enclosureidlekept

package mutant

// EnclosureIdleKept, when true, closes an enclosure without letting go of
// the idle inits of its runs.
const EnclosureIdleKept = false
