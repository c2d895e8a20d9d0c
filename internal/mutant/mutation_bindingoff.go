//go:build mutation_bindingoff

// Mutant: Nothing binds the tree to the supervisor: inits outlive its end for a minute, without PR_SET_PDEATHSIG, and the guardian kills no leaf.
// Guarantee: 7. the tree dies with its supervisor
// Caught: ./proc TestSupervisorKilledTakesItsTreeWithIt

package mutant

// BindingOff, mutated: nothing binds the tree to the supervisor: inits outlive its end for a minute, without PR_SET_PDEATHSIG, and the guardian kills no leaf.
const BindingOff = true
