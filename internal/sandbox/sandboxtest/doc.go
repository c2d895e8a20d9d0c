// Package sandboxtest runs one command in corral's sandbox the way an init
// does, so that the sandbox package can be tested and measured on its own:
// the current executable is re-executed as the init (cloned into new user,
// mount, pid, network, IPC and UTS namespaces, its ids mapped to
// themselves, bound to its parent with PR_SET_PDEATHSIG), which calls
// sandbox.Prepare, confines a locked thread with sandbox.Confine, forks the
// command from it, answers the command's connect() calls with sandbox.Gate,
// and exits with the command's status. It is a test double of corral's own
// init, not used by the product.
//
// A program using it calls Main first thing in main (or TestMain).
package sandboxtest
