//go:build mutation_prestartenclosure

// Mutant: an enclosure's runs have plain inits started ahead into its pool, so a later run of the enclosure starts outside its sandbox.
// Guarantee: 8. confinement that holds (every run of an enclosure is in its namespaces)
// Caught: ./proc TestAnEnclosuresBurstStaysInItsSandbox

package mutant

// PrestartEnclosure, mutated: an enclosure's pool gets plain inits started ahead.
const PrestartEnclosure = true
