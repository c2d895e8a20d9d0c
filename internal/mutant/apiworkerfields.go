//go:build !mutation_apiworkerfields

package mutant

// APISendsWorkerFields makes the API's answers carry an execution's log
// path on the worker, a field docs/openapi.yaml does not name (and the
// service never sends). False in every normal build.
const APISendsWorkerFields = false
