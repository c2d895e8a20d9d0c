//go:build mutation_apiworkerfields

// Mutant: the API's answers carry an execution's log path on the worker, a field docs/openapi.yaml does not document.
// Guarantee: the HTTP API is the one docs/openapi.yaml describes (every answer's fields documented)
// Caught: ./api TestOpenAPIDocumentMatchesTheServer

package mutant

// APISendsWorkerFields, mutated for the CI's mutation step (.ci/mutations).
const APISendsWorkerFields = true
