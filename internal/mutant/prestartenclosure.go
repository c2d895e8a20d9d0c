//go:build !mutation_prestartenclosure

package mutant

// PrestartEnclosure, when true: an enclosure's runs have plain inits started ahead into its pool, so a later run of the enclosure starts outside its sandbox.
const PrestartEnclosure = false
