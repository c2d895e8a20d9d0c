//go:build mutation_secretregexp

// Mutant: the secret package links regexp again (its /dev/fd/N paths once were matched with one), and every start of corral initialises regexp's tables.
// Guarantee: 3. bounded memory (issue 27: a start pays only for what its command uses)
// Caught: ./cmd/corral TestStartPathsLinkNothingHeavy

package secret

import _ "regexp"
