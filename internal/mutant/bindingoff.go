//go:build !mutation_bindingoff

package mutant

// BindingOff, when true: nothing binds the tree to the supervisor: inits outlive its end for a minute, without PR_SET_PDEATHSIG, and the guardian kills no leaf.
const BindingOff = false
