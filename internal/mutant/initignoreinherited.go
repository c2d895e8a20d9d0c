//go:build !mutation_initignoreinherited

package mutant

// InitIgnoreInherited, when true, has a Go init ignore the signals that
// would end it through os/signal, which its command inherits, rather than
// in the kernel behind the runtime's back, which a fork undoes.
const InitIgnoreInherited = false
