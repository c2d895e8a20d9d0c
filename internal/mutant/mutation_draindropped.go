//go:build mutation_draindropped

// Mutant: The output drain after the main process exits is dropped: what leftovers print then is lost.
// Guarantee: 4. no lost output
// Caught: ./proc TestRunReadsWhatLeftoversPrintDuringTheDrain

package mutant

// DrainDropped, mutated: the output drain after the main process exits is dropped: what leftovers print then is lost.
const DrainDropped = true
